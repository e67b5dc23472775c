"""SQLite files reached by awkward paths: a folder whose name holds a URI's "#" or "?", and a
database opened through a symlink (SQLite names its -wal after the file the link resolves to)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.demo import write_demo
from mnemoscope.storage.sqlite_files import file_state, files_token, peek_schema, read_only_rows

AWKWARD = ["a#b", "c?d", "e%20f", "g&h=i"]


def _listing(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("name", AWKWARD)
def test_sqlite_uri_names_the_file_itself(tmp_path: Path, name: str) -> None:
    db = tmp_path / name / "x.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (v)")
    con.commit()
    con.close()
    before = _listing(tmp_path)
    assert peek_schema(db) == {"t": ("table", frozenset({"v"}))}
    assert read_only_rows(db, "SELECT count(*) FROM t") == [(0,)]
    assert _listing(tmp_path) == before
    assert _listing(db.parent) == ["x.db"]


def test_peek_schema_of_a_missing_file_under_an_awkward_folder_creates_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "a#b"
    folder.mkdir()
    with pytest.raises(sqlite3.Error):
        peek_schema(folder / "x.db")
    assert _listing(tmp_path) == ["a#b"] and _listing(folder) == []


@pytest.mark.parametrize("name", ["a#b", "c?d"])
def test_a_native_workspace_in_an_awkward_folder_opens_reads_and_writes(tmp_path: Path, name: str) -> None:
    root = tmp_path / name / "ws"
    root.parent.mkdir()
    write_demo(root).close()
    before = _listing(tmp_path), _listing(root.parent)
    with open_store(root, read_only=True) as store:
        assert [s.format for s in store.sources] == ["mnemoscope"]
        first = store.page(MemoryQuery(), 5)
        assert len(first) == 5 and store.count(MemoryQuery()) > 5
    with open_store(root) as store:
        assert store.count(MemoryQuery()) > 5
    assert (_listing(tmp_path), _listing(root.parent)) == before


def _wal_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("CREATE TABLE a (x)")
    con.commit()
    con.close()


def test_a_symlinked_database_sees_writes_that_are_only_in_the_wal(tmp_path: Path) -> None:
    real, link = tmp_path / "real.db", tmp_path / "link.db"
    _wal_db(real)
    link.symlink_to(real.name)
    assert set(peek_schema(link)) == {"a"}
    state, token = file_state(link), files_token(link)

    writer = sqlite3.connect(real)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        writer.execute("CREATE TABLE b (y)")
        writer.commit()
        assert (tmp_path / "real.db-wal").stat().st_size > 0
        assert not (tmp_path / "link.db-wal").exists()
        assert file_state(link) != state
        assert files_token(link) != token
        assert set(peek_schema(link)) == {"a", "b"}
    finally:
        writer.close()


def test_file_state_tells_apart_two_writes_of_the_same_size_in_one_mtime_tick(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (v)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    st = db.stat()
    state = file_state(db)
    con.execute("UPDATE t SET v = 2")
    con.commit()
    con.close()
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))  # a coarse clock: the same mtime, the same size
    assert db.stat().st_size == st.st_size
    assert file_state(db) != state
