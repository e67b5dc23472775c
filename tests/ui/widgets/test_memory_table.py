"""The memories table repaints only its current row when it gains or loses the focus."""

from __future__ import annotations

from mnemoscope.ui.widgets.memory_table import MemoryTable
from PySide6.QtCore import QEvent, QItemSelectionModel, QRect, Qt
from PySide6.QtGui import QFocusEvent, QPaintEvent, QStandardItemModel


class PaintCounter(MemoryTable):
    def __init__(self) -> None:
        super().__init__()
        self.painted: list[QRect] = []

    def viewportEvent(self, event: QEvent) -> bool:
        if isinstance(event, QPaintEvent):
            self.painted.append(event.rect())
        return super().viewportEvent(event)


def test_a_focus_change_repaints_the_current_row_not_the_viewport(qtbot) -> None:
    table = PaintCounter()
    qtbot.addWidget(table)
    model = QStandardItemModel(200, 3)
    table.setModel(model)
    table.resize(500, 400)
    table.show()
    qtbot.waitExposed(table)
    table.selectionModel().setCurrentIndex(model.index(2, 0), QItemSelectionModel.SelectionFlag.ClearAndSelect)
    qtbot.wait(50)
    table.painted.clear()
    table.focusOutEvent(QFocusEvent(QEvent.Type.FocusOut, Qt.FocusReason.OtherFocusReason))
    table.focusInEvent(QFocusEvent(QEvent.Type.FocusIn, Qt.FocusReason.OtherFocusReason))
    qtbot.wait(50)
    viewport = table.viewport().rect()
    assert table.painted, "the current row was not repainted"
    assert all(rect.height() < viewport.height() for rect in table.painted)
