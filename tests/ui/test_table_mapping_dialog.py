"""The table mapping dialog: offered when a SQLite file no format reads is opened, corrected by
hand, remembered, and the file opens with it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from mnemoscope.storage.table_mapping import TableMapping, remembered_mapping
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.table_mapping_dialog import NONE, TableMappingDialog


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


def test_the_dialog_proposes_previews_and_remembers_a_corrected_mapping(qtbot, notes: Path) -> None:
    dialog = TableMappingDialog(notes)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.table_combo.currentText() == "notes"
    assert dialog.field_combos["content"].currentText() == "body"
    assert dialog.field_combos["access_count"].currentText() == "hits"
    assert dialog.field_combos["created"].currentText() == NONE  # "written" names no time
    assert dialog.preview_table.rowCount() == 2
    assert dialog.preview_table.item(0, 0).text() == "Use the staging cluster for load tests"

    dialog.field_combos["created"].setCurrentText("written")
    dialog.field_combos["category"].setCurrentText("topic")
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
    dialog.table_combo.setCurrentText("prefs")
    assert dialog.field_combos["content"].currentText() == "k"  # the first text column
    assert [dialog.field_combos["id"].itemText(i) for i in range(dialog.field_combos["id"].count())] == [NONE, "k", "v"]


def test_opening_an_unrecognised_file_offers_the_dialog_and_then_opens_it(qtbot, notes: Path, tmp_path: Path) -> None:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.error_shown, timeout=10_000) as shown:
        win.open_path(notes)
    assert "does not recognise" in shown.args[0]
    dialog = win.findChild(TableMappingDialog, "table_mapping_dialog")
    assert dialog is not None and dialog.isVisible()
    assert win.findChild(object, "error_box") is None
    with qtbot.waitSignal(win.store_opened, timeout=30_000):
        qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == 2, timeout=10_000)
    contents = {win.model.memory_at(r).content for r in range(2)}
    assert contents == {"Use the staging cluster for load tests", "Alice owns the billing service"}
    win.close_store()
