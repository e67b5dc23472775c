"""A long step's progress dialog: it counts the ticks, stays open at 100 % and cancels on Cancel."""

from __future__ import annotations

from mnemoscope.ui.dialogs.progress_dialog import progress_dialog, show_progress
from PySide6.QtWidgets import QPushButton


def test_ticks_and_cancel(qtbot) -> None:
    dialog = progress_dialog("Importing notes:")
    qtbot.addWidget(dialog)
    dialog.open()
    show_progress(dialog, "Importing notes:", (250, 1000))
    assert dialog.value() == 25 and dialog.labelText() == "Importing notes: 250 of 1,000"
    show_progress(dialog, "Importing notes:", (1000, 1000))
    assert dialog.value() == 100 and dialog.isVisible()  # closed by the step's end, not by 100 %
    show_progress(dialog, "Importing notes:", (0, 0))
    assert dialog.value() == 100
    cancel = dialog.findChild(QPushButton)
    assert cancel is not None and cancel.text() == "Cancel"
    with qtbot.waitSignal(dialog.canceled):
        cancel.click()
