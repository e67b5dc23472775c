"""A scratchpad value edited as text: JSON shown indented and stored typed, plain text kept as text,
and a change of spacing alone is no change."""

from __future__ import annotations

from mnemoscope.ui.dialogs.scratch_value_dialog import ScratchValueDialog
from mnemoscope.ui.views.scratchpad_view import ScratchKey


def test_json_text_and_what_counts_as_a_change(qtbot) -> None:
    dialog = ScratchValueDialog(ScratchKey("s-1", "todo", '{"open": ["a"], "done": []}', ""))
    qtbot.addWidget(dialog)
    assert dialog.editor.toPlainText().startswith("{\n  ")  # indented to edit
    assert dialog.value() == {"open": ["a"], "done": []} and not dialog.changed()
    assert dialog.type_label.text() == "Saved as a JSON object."
    dialog.editor.setPlainText('{"done": [], "open": ["a"]}')  # same value, other spacing and order
    assert not dialog.changed()
    dialog.editor.setPlainText("call Dana back")
    assert dialog.value() == "call Dana back" and dialog.changed()
    assert dialog.type_label.text() == "Saved as text."
    dialog.editor.setPlainText("42")
    assert dialog.value() == 42 and dialog.type_label.text() == "Saved as a JSON number."
