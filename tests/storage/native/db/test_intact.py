"""What a writable open of memory.db checks: the whole file once per state nobody vouched for,
then nothing that reads every page again until the file changes under another program."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage.errors import StoreError
from mnemoscope.storage.native.db.intact import check_intact
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.query import MemoryQuery


def _store(tmp_path: Path) -> Path:
    db = SqliteSource.open(tmp_path / "memory.db", create=True)
    db.insert_memory_rows([db.memory_row(f"memory {i} " + "x" * 200) for i in range(300)])
    db.close()
    return tmp_path / "memory.db"


def test_the_whole_file_is_read_once_then_the_verdict_is_remembered(tmp_path: Path) -> None:
    db_path = _store(tmp_path)
    assert check_intact(db_path) is False  # the source that wrote the rows vouched for them
    sqlite3.connect(db_path).execute("PRAGMA user_version = 7").connection.commit()  # another program
    assert check_intact(db_path) is True
    assert check_intact(db_path) is False


def test_a_rm_then_an_undo_read_the_file_once(tmp_path: Path) -> None:
    db_path = _store(tmp_path)
    with sqlite3.connect(db_path) as con:
        con.execute("UPDATE memories SET salience = 0.25")  # another program: nobody vouches
    source = SqliteSource.open(db_path)
    memory_id = source.page(MemoryQuery(), 1)[0].id
    source.write_record(memory_id, source.read_record(memory_id), {**source.read_record(memory_id), "status": "deleted"})
    source.close()
    assert check_intact(db_path) is False


def test_a_page_damaged_after_the_verdict_is_refused_before_a_write_not_at_open(tmp_path: Path) -> None:
    db_path = _store(tmp_path)
    check_intact(db_path)
    with sqlite3.connect(db_path) as con:
        (root,) = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories'").fetchone()
        (page,) = con.execute("PRAGMA page_size").fetchone()
    data = bytearray(db_path.read_bytes())
    data[(root - 1) * page : (root - 1) * page + 12] = b"\x0d" + b"\xff" * 11  # its b-tree header
    db_path.write_bytes(bytes(data))  # same size; mtime and ctime move
    source = SqliteSource.open(db_path)  # the header and the schema only: no page of rows read
    try:
        with pytest.raises(StoreError, match="damaged|malformed"):
            source.add_memory("one more")
    finally:
        source.close()
    assert db_path.read_bytes() == bytes(data)
    with pytest.raises(StoreError, match="damaged|malformed"):
        check_intact(db_path)


def test_a_step_in_one_transaction_on_a_damaged_page_writes_nothing(tmp_path: Path) -> None:
    from mnemoscope.storage import Curator, open_store

    db_path = _store(tmp_path)
    with contextlib.closing(sqlite3.connect(db_path)) as con:
        (memory_id,) = con.execute("SELECT id FROM memories ORDER BY rowid DESC LIMIT 1").fetchone()
        with con:
            con.execute("UPDATE memories SET salience = 0.3 WHERE id = ?", (memory_id,))  # nobody vouches now
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (page,) = con.execute("PRAGMA page_size").fetchone()
        (pages,) = con.execute("PRAGMA page_count").fetchone()
    data = bytearray(db_path.read_bytes())
    at = data.find(f"memory {299}".encode())  # the row's own leaf page
    assert 0 < at < pages * page
    leaf = at // page * page
    data[leaf + 3 : leaf + 5] = b"\xff\xff"  # its cell count: cells past the page's end
    db_path.write_bytes(bytes(data))
    with open_store(tmp_path) as store:
        with pytest.raises(StoreError, match="damaged|malformed|corrupt"):
            Curator(store).delete(memory_id)
    assert db_path.read_bytes() == bytes(data)


@pytest.mark.parametrize("ddl", [
    "CREATE TABLE t (x); CREATE VIEW memories AS SELECT x AS id FROM t; CREATE VIEW sessions AS SELECT x AS id FROM t;",
    "CREATE TABLE t (x); CREATE VIEW audit AS SELECT x AS seq FROM t;",
])
def test_a_file_of_an_old_version_whose_tables_are_views_is_refused_and_left_as_it_was(tmp_path: Path, ddl: str) -> None:
    """Another program's file that says it is memory.db version 1, with views named like our
    tables: the migration's checks refuse it before a byte is written (a table an older version
    lacked is not probed; a view in its place is)."""
    db = tmp_path / "memory.db"
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); "
                          "INSERT INTO meta VALUES ('schema_version', '1'); " + ddl)
    before = db.read_bytes()
    with pytest.raises(StoreError):
        SqliteSource.open(db).close()
    assert db.read_bytes() == before


def test_a_commit_made_while_the_open_waits_for_a_lock_is_not_covered_by_the_verdict(tmp_path: Path) -> None:
    """The verdict is looked up by the state the open leaves the file in: another program that
    holds the lock while the open reads the schema, and commits, changed a file that was vouched
    for; its first write reads it whole again."""
    import threading
    import time

    db_path = _store(tmp_path)
    con = sqlite3.connect(db_path)
    con.execute("PRAGMA journal_mode = DELETE")  # a rollback journal: readers wait for the writer
    con.close()
    assert check_intact(db_path) is True
    locked, done = threading.Event(), threading.Event()

    def other_program() -> None:
        writer = sqlite3.connect(db_path, isolation_level=None)
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("INSERT INTO meta(key, value) VALUES ('other', 'program')")
        locked.set()
        time.sleep(0.8)
        writer.execute("COMMIT")
        writer.close()
        done.set()

    threading.Thread(target=other_program, daemon=True).start()
    assert locked.wait(10)
    source = SqliteSource.open(db_path)  # waits for the lock, then reads the schema
    try:
        assert done.is_set()
        assert not source._known_intact()
    finally:
        source.close()


def test_the_verdict_holds_for_the_next_open_whose_reading_connection_made_a_wal(tmp_path: Path) -> None:
    """The open's look at the schema stays open as its reader, and the -wal it made holds nothing:
    the file is as the source that wrote it left it, and nothing reads it whole again."""
    db_path = _store(tmp_path)
    source = SqliteSource.open(db_path)
    try:
        assert (tmp_path / "memory.db-wal").exists()
        assert source._known_intact()
    finally:
        source.close()


def test_verdicts_another_process_wrote_since_the_last_read_are_seen(tmp_path: Path) -> None:
    """The verdicts are kept parsed between opens while their file stays as it was: one another
    process wrote meanwhile (a `check` run from a terminal) counts at the next look."""
    import json
    import os

    from mnemoscope.storage.data_folder import data_folder
    from mnemoscope.storage.native.db import intact

    db_path = _store(tmp_path)
    key = intact._state(db_path)
    assert key is not None and intact.is_remembered(key)
    verdicts = data_folder() / intact.VERDICTS_FILE
    scratch = verdicts.with_name("elsewhere")
    scratch.write_text(json.dumps({}))
    os.replace(scratch, verdicts)  # another process forgot them all (its own copy of the file)
    assert not intact.is_remembered(key)
    scratch.write_text(json.dumps({key[0]: key[1]}))
    os.replace(scratch, verdicts)
    assert intact.is_remembered(key)
