"""What a path holds: the native kinds and where each lives, foreign formats claiming their files
from the native reading, the stores a folder holds a few levels down, and a table mapping kept
only for a SQLite file no format reads."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from formats.test_mem0 import _template, mem0_store  # noqa: F401 (fixtures)
from mnemoscope.storage import open_store
from mnemoscope.storage.detection import detect, detect_everything, remember_mapping, stores_in
from mnemoscope.storage.errors import UnreadableStoreError
from mnemoscope.storage.model import Kind
from mnemoscope.storage.table_mapping import TableMapping, remembered_mapping


def _table(path: Path, table: str) -> Path:
    con = sqlite3.connect(path)
    with con:
        con.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, body TEXT)")
        con.execute(f"INSERT INTO {table} VALUES ('f1', 'Dana prefers tea')")
    con.close()
    return path


def test_each_native_kind_is_found_where_it_lives(demo_path: Path, markdown_only: Path, chroma_only: Path,
                                                  tmp_path: Path) -> None:
    assert detect(demo_path) == {Kind.SQLITE: demo_path / "memory.db", Kind.CHROMA: demo_path / "vectors",
                                 Kind.MARKDOWN: demo_path}
    assert detect(demo_path / "memory.db") == {Kind.SQLITE: demo_path / "memory.db"}
    assert detect(demo_path / "vectors" / "chroma.sqlite3") == {Kind.CHROMA: demo_path / "vectors"}
    assert detect(markdown_only) == {Kind.MARKDOWN: markdown_only}
    assert detect(chroma_only) == {Kind.CHROMA: chroma_only}
    (tmp_path / "empty").mkdir()
    assert detect(tmp_path / "empty") == {}
    assert detect(demo_path / "MEMORY.md") == {}


def test_a_format_claims_its_files_from_the_native_reading(mem0_store) -> None:  # noqa: F811 (the fixture)
    root, _ids = mem0_store
    found, matches = detect_everything(root)
    assert [m.format for m in matches] == ["mem0"]
    assert Kind.CHROMA not in found  # mem0's Chroma directory is read as mem0's, not as a bare one


def test_detection_sees_a_part_added_since_the_last_look(sqlite_only: Path) -> None:
    assert detect_everything(sqlite_only) == ({Kind.SQLITE: sqlite_only / "memory.db"}, [])
    (sqlite_only / "MEMORY.md").write_text("# Memory\n\n- Dana prefers tea\n", encoding="utf-8")
    found, _ = detect_everything(sqlite_only)
    assert set(found) == {Kind.SQLITE, Kind.MARKDOWN}


def test_stores_are_listed_under_a_folder_each_once_and_not_walked_into(demo_path: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(demo_path, home / "projects" / "demo")
    shutil.copytree(demo_path, home / "notes", ignore=shutil.ignore_patterns("memory.db*", "vectors"))
    (home / "apps").mkdir()
    _table(home / "apps" / "facts.db", "facts")
    _table(home / "apps" / "cache.db", "cache")  # an application's own database: not listed
    (home / "node_modules" / "pkg").mkdir(parents=True)
    shutil.copytree(demo_path, home / "node_modules" / "pkg" / "demo")  # skipped: never stores, often huge
    walked: list[Path] = []
    found = stores_in([home, home / "notes"], max_depth=3, progress=walked.append)
    assert found == [
        (home / "apps" / "facts.db", "SQLite memory table facts (not mapped yet)"),
        (home / "notes", "Mnemoscope workspace (markdown)"),
        (home / "projects" / "demo", "Mnemoscope workspace (memory.db, Chroma, markdown)"),
    ]
    assert home / "projects" / "demo" / "memory" not in walked  # a store is not walked into
    assert [p for p, _ in stores_in([home], max_depth=1)] == [home / "apps" / "facts.db", home / "notes"]
    assert stores_in([home], max_depth=3, cancelled=lambda: True) == []
    assert stores_in([home], max_depth=3, max_folders=1) == []


def test_a_mapping_is_remembered_only_for_a_file_no_format_reads(
    demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
    notes = _table(tmp_path / "app.db", "notes")
    mapping = TableMapping("notes", {"content": "body", "id": "id"})
    kept = remember_mapping(notes, mapping)
    assert kept.parent == tmp_path / "mnemoscope-home" and remembered_mapping(notes) == mapping
    with open_store(notes) as store:  # the mapping opens it
        assert [m.content for m in store.page()] == ["Dana prefers tea"]
    with pytest.raises(UnreadableStoreError, match="already read as a Mnemoscope store"):
        remember_mapping(demo_path / "memory.db", TableMapping("memories", {"content": "content", "id": "id"}))
    with pytest.raises(UnreadableStoreError, match="cannot be mapped so"):
        remember_mapping(notes, TableMapping("notes", {"content": "text"}))
    remember_mapping(notes, None)
    assert remembered_mapping(notes) is None
