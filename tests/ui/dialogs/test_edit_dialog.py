"""The edit dialog enables only the fields the memory's store keeps, and gives back only what the
person changed."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage import ABSENT, Kind, MemoryQuery, open_store
from mnemoscope.ui.dialogs.edit_dialog import EditDialog


def test_only_the_changed_editable_fields(qtbot, demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        memory = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1)[0]
    dialog = EditDialog(memory, ("content", "tags"))
    qtbot.addWidget(dialog)
    assert dialog.content.isEnabled() and dialog.tags.isEnabled()
    assert not dialog.layer.isEnabled() and not dialog.channel.isEnabled() and not dialog.salience.isEnabled()
    assert dialog.changes() == {}
    dialog.content.setPlainText("rewritten")
    dialog.tags.setText("a, b")
    dialog.salience.setValue(0.01 if memory.salience > 0.5 else 0.99)  # disabled: not an edit
    assert dialog.changes() == {"content": "rewritten", "tags": ("a", "b")}


def test_a_salience_the_store_does_not_keep_shows_absent_and_is_no_edit_until_chosen(qtbot, demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        memory = store.page(MemoryQuery(kinds=(Kind.MARKDOWN,)), 1)[0]
    assert memory.salience is None
    dialog = EditDialog(memory, ("content", "salience"))
    qtbot.addWidget(dialog)
    assert dialog.salience.text() == ABSENT
    assert dialog.changes() == {}  # left absent: nothing to write
    dialog.salience.setValue(0.4)
    assert dialog.changes() == {"salience": 0.4}
def test_a_salience_the_store_keeps_none_of_is_shown_as_none(qtbot, markdown_only: Path) -> None:
    with open_store(markdown_only, read_only=True) as store:
        memory = store.page(MemoryQuery(), 1)[0]
    dialog = EditDialog(memory, ("content",))
    qtbot.addWidget(dialog)
    assert not dialog.salience.isEnabled() and dialog.salience.text() == "—"  # not an invented 0.50
    dialog.content.setPlainText("rewritten")
    assert dialog.changes() == {"content": "rewritten"}
