"""The table mapping dialog: offered when a SQLite file no format reads is opened, corrected by
hand, remembered, and the file opens with it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage.detect.table_mapping import TableMapping, remembered_mapping
from mnemoscope.ui.dialogs.table_mapping_dialog import NONE, TableMappingDialog
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import running_workers
from PySide6.QtCore import QSettings, Qt


@pytest.fixture
def notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    db = tmp_path / "notes.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE prefs (k TEXT PRIMARY KEY, v TEXT);
        CREATE TABLE notes (note_id INTEGER PRIMARY KEY, body TEXT, written TEXT, topic TEXT, hits INTEGER);
    """)
    con.executemany("INSERT INTO notes (body, written, topic, hits) VALUES (?, ?, ?, ?)", [
        ("Use the staging cluster for load tests", "2026-02-01 10:00:00", "ops", 4),
        ("Alice owns the billing service", "2026-02-02 11:00:00", "people", 1),
    ])
    con.commit()
    con.close()
    return db


def loaded(qtbot, dialog: TableMappingDialog) -> None:
    """Wait for the worker that reads the file's tables and the first preview."""
    qtbot.waitUntil(lambda: dialog.preview_table.rowCount() > 0)


def test_the_dialog_proposes_previews_and_remembers_a_corrected_mapping(qtbot, notes: Path) -> None:
    dialog = TableMappingDialog(notes)
    qtbot.addWidget(dialog)
    dialog.show()
    loaded(qtbot, dialog)
    assert dialog.table_combo.currentText() == "notes"
    assert dialog.field_combos["content"].currentText() == "body"
    assert dialog.field_combos["access_count"].currentText() == "hits"
    assert dialog.field_combos["created"].currentText() == NONE  # "written" names no time
    assert dialog.preview_table.rowCount() == 2
    assert dialog.preview_table.item(0, 0).text() == "Use the staging cluster for load tests"

    dialog.field_combos["created"].setCurrentText("written")
    dialog.field_combos["category"].setCurrentText("topic")
    qtbot.waitUntil(lambda: dialog.preview_table.columnCount() == 5)
    headers = [dialog.preview_table.horizontalHeaderItem(c).text() for c in range(dialog.preview_table.columnCount())]
    assert "Created" in headers and "Category" in headers
    assert "edited and deleted" in dialog.status.text()

    dialog.field_combos["content"].setCurrentText(NONE)
    assert not dialog.open_button.isEnabled()
    dialog.field_combos["content"].setCurrentText("body")
    with qtbot.waitSignal(dialog.mapping_accepted) as accepted:
        qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    assert accepted.args == [notes]
    assert remembered_mapping(notes) == TableMapping("notes", {
        "content": "body", "id": "note_id", "category": "topic", "created": "written", "access_count": "hits",
    })


def test_choosing_another_table_proposes_its_columns(qtbot, notes: Path) -> None:
    dialog = TableMappingDialog(notes)
    qtbot.addWidget(dialog)
    loaded(qtbot, dialog)
    dialog.table_combo.setCurrentText("prefs")
    qtbot.waitUntil(lambda: dialog.field_combos["content"].currentText() == "k")  # the first text column
    assert [dialog.field_combos["id"].itemText(i) for i in range(dialog.field_combos["id"].count())] == [NONE, "k", "v"]


def test_opening_an_unrecognised_file_offers_the_dialog_and_then_opens_it(qtbot, notes: Path, tmp_path: Path) -> None:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.error_shown) as shown:
        win.open_path(notes)
    assert "does not recognise" in shown.args[0]
    dialog = win.findChild(TableMappingDialog, "table_mapping_dialog")
    assert dialog is not None and dialog.isVisible()
    assert win.findChild(object, "error_box") is None
    qtbot.waitUntil(dialog.open_button.isEnabled)
    with qtbot.waitSignal(win.store_opened):
        qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == 2)
    contents = {win.model.memory_at(r).content for r in range(2)}
    assert contents == {"Use the staging cluster for load tests", "Alice owns the billing service"}
    win.close_store()


def test_a_file_that_cannot_be_read_is_said_so_in_the_dialog(qtbot, tmp_path: Path, notes: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a SQLite database, only some text " * 40)
    dialog = TableMappingDialog(garbage)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: "cannot be read" in dialog.status.text())
    assert dialog.table_combo.count() == 0 and not dialog.open_button.isEnabled()

    # A file gone after the dialog read its tables: choosing another table says so.
    dialog = TableMappingDialog(notes)
    qtbot.addWidget(dialog)
    dialog.show()
    loaded(qtbot, dialog)
    notes.unlink()
    dialog.table_combo.setCurrentText("prefs")
    qtbot.waitUntil(lambda: "cannot be read" in dialog.status.text())
    assert dialog.isVisible()


def test_a_table_whose_id_repeats_is_shown_read_only(qtbot, tmp_path: Path, notes: Path) -> None:
    db = tmp_path / "per_user.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (user_id TEXT, body TEXT)")
    con.executemany("INSERT INTO notes VALUES (?, ?)", [("u1", "Likes tea"), ("u1", "Works nights")])
    con.commit()
    con.close()
    dialog = TableMappingDialog(db)
    qtbot.addWidget(dialog)
    loaded(qtbot, dialog)
    dialog.field_combos["id"].setCurrentText("user_id")
    qtbot.waitUntil(lambda: "neither the primary key" in dialog.status.text())
    assert dialog.status.text().startswith("Read-only")


def test_a_late_result_is_dropped(qtbot, notes: Path) -> None:
    dialog = TableMappingDialog(notes)
    qtbot.addWidget(dialog)
    loaded(qtbot, dialog)
    dialog.table_combo.setCurrentText("prefs")
    dialog.table_combo.setCurrentText("notes")  # asked for before the proposal for prefs came back
    qtbot.waitUntil(lambda: dialog.field_combos["content"].currentText() == "body")
    qtbot.waitUntil(lambda: running_workers() == 0)  # the proposal for prefs came back too
    assert dialog.field_combos["content"].currentText() == "body"
    assert dialog.preview_table.item(0, 0).text() == "Use the staging cluster for load tests"
