"""Mapping a table of any SQLite file to memories: the proposal picks the table and columns a
person would, a mapping is checked against the file, a person's corrections are parsed, and an
accepted mapping is remembered in Mnemoscope's data folder."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage.errors import UnreadableStoreError
from mnemoscope.storage.detect.table_mapping import (
    NO_ID_REASON,
    TableMapping,
    checked,
    corrected,
    keep_mapping,
    mappings_file,
    parse_assignments,
    preview,
    propose_mapping,
    remembered_mapping,
    table_columns,
    table_keys,
)


@pytest.fixture
def notes_db(tmp_path: Path) -> Path:
    """An app's database: a notes table that is memories by another name, and a settings table."""
    path = tmp_path / "app.db"
    con = sqlite3.connect(path)
    with con:
        con.execute("CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT)")
        con.execute("CREATE TABLE notes (note_id TEXT PRIMARY KEY, body TEXT, kind TEXT, created_at TEXT, "
                    "importance REAL, hits INTEGER, picture BLOB)")
        con.execute("CREATE TABLE pairs (a TEXT, b TEXT, words TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID")
        con.executemany("INSERT INTO notes VALUES (?, ?, ?, ?, ?, ?, NULL)", [
            ("n1", "Dana prefers tea", "preference", "2026-10-01T09:00:00Z", 0.8, 3),
            ("n2", "The build runs on Fridays", "fact", "2026-10-02T09:00:00Z", 0.4, 0),
        ])
    con.close()
    return path


def test_the_proposal_picks_the_table_of_memories_and_its_columns(notes_db: Path) -> None:
    mapping = propose_mapping(notes_db)
    assert mapping.table == "notes"
    assert mapping.columns == {"content": "body", "id": "note_id", "category": "kind", "created": "created_at",
                               "access_count": "hits", "salience": "importance"}
    assert mapping.writable and mapping.read_only_reason == ""
    assert mapping.describe().startswith("content=body, id=note_id, category=kind")
    assert propose_mapping(notes_db, "settings").table == "settings"
    with pytest.raises(UnreadableStoreError, match="has no table 'memories' \\(it has"):
        propose_mapping(notes_db, "memories")


def test_the_tables_and_what_names_one_row(notes_db: Path) -> None:
    tables = table_columns(notes_db)
    assert set(tables) == {"settings", "notes", "pairs"}
    assert ("picture", "BLOB") in tables["notes"]
    keys = table_keys(notes_db, "notes")
    assert keys.primary_key == ("note_id",) and "note_id" in keys.unique and keys.row_key is None
    pairs = table_keys(notes_db, "pairs")
    assert pairs.without_rowid and pairs.row_key is None and pairs.primary_key == ("a", "b")


def test_a_mapping_is_checked_against_the_file(notes_db: Path) -> None:
    ok = checked(notes_db, TableMapping("notes", {"content": "body", "id": "note_id"}))
    assert ok.writable
    by_kind = checked(notes_db, TableMapping("notes", {"content": "body", "id": "kind"}))
    assert not by_kind.writable and "neither the primary key of notes nor UNIQUE" in by_kind.read_only_reason
    assert TableMapping("notes", {"content": "body"}).read_only_reason == NO_ID_REASON
    with pytest.raises(UnreadableStoreError, match="cannot be mapped so: content=text"):
        checked(notes_db, TableMapping("notes", {"content": "text"}))
    with pytest.raises(UnreadableStoreError, match="needs a content column"):
        checked(notes_db, TableMapping("notes", {"id": "note_id"}))
    with pytest.raises(UnreadableStoreError, match="WITHOUT ROWID table whose primary key has several columns"):
        checked(notes_db, TableMapping("pairs", {"content": "words"}))


def test_a_persons_corrections_are_parsed_and_applied(notes_db: Path) -> None:
    assert parse_assignments(" content = body , category= ,") == {"content": "body", "category": ""}
    with pytest.raises(UnreadableStoreError, match="'colour=kind' is not FIELD=COLUMN"):
        parse_assignments("colour=kind")
    mapping = corrected(propose_mapping(notes_db), {"category": "", "channel": "kind"})
    assert "category" not in mapping.columns and mapping.columns["channel"] == "kind"
    assert preview(notes_db, mapping, limit=1) == [{
        "content": "Dana prefers tea", "id": "n1", "created": "2026-10-01T09:00:00Z", "access_count": 3,
        "salience": 0.8, "channel": "preference"}]


def test_an_accepted_mapping_is_remembered_in_the_data_folder_and_forgotten(
    notes_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    assert remembered_mapping(notes_db) is None
    mapping = TableMapping("notes", {"content": "body", "id": "note_id"})
    kept_in = keep_mapping(notes_db, mapping)
    assert kept_in == mappings_file() == tmp_path / "home" / "table-mappings.json"
    assert remembered_mapping(notes_db) == mapping
    assert remembered_mapping(tmp_path / "other.db") is None
    keep_mapping(notes_db, None)
    assert remembered_mapping(notes_db) is None
    mappings_file().write_text("not json", encoding="utf-8")
    assert remembered_mapping(notes_db) is None  # a damaged file reads as none remembered
