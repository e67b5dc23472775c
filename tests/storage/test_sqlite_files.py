"""sqlite_files.py, on real SQLite files: what is one, read-only connections that write no byte,
write transactions, SQLite's errors as one sentence. And SQLite files reached by
awkward paths: a folder whose name holds a URI's "#" or "?", and a
database opened through a symlink (SQLite names its -wal after the file the link resolves to)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from helpers.small_db import one_row_database
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.demo import write_demo
from mnemoscope.storage.errors import LockedError, StoreFileError, UnreadableStoreError
from mnemoscope.storage.sqlite_files import (
    FileLook,
    escape_like,
    file_state,
    files_token,
    holders,
    is_sqlite_file,
    peek_schema,
    read_only_connection,
    read_only_rows,
    schema_state,
    sqlite_error,
    writing,
)

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
        assert [s.format for s in store._sources] == ["mnemoscope"]
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



def test_is_sqlite_file_reads_the_header_only_of_regular_files(tmp_path: Path) -> None:
    assert is_sqlite_file(one_row_database(tmp_path / "x.db"))
    (tmp_path / "notes.db").write_text("not a database")
    os.mkfifo(tmp_path / "fifo.db")  # opening it to read would block forever
    (tmp_path / "folder.db").mkdir()
    assert not any(is_sqlite_file(tmp_path / name) for name in ("notes.db", "fifo.db", "folder.db", "missing.db"))


def test_one_look_at_a_file_answers_what_an_open_asks_as_the_single_questions_do(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("INSERT INTO t VALUES (2)")
    writer.commit()  # frames in a -wal: its header is part of the state
    try:
        look = FileLook.at(os.path.realpath(db))
        assert look is not None and look.wal is not None
        assert (look.is_sqlite, look.state) == (is_sqlite_file(db), file_state(db))
        writer.execute("INSERT INTO t VALUES (3)")
        writer.commit()
        assert FileLook.at(os.path.realpath(db)).state != look.state  # type: ignore[union-attr]
    finally:
        writer.close()
    (tmp_path / "notes.db").write_text("not a database")
    assert not FileLook.at(str(tmp_path / "notes.db")).is_sqlite  # type: ignore[union-attr]
    assert FileLook.at(str(tmp_path / "missing.db")) is None


def test_a_rollback_journal_database_switched_to_wal_while_read_is_left_without_our_files(tmp_path: Path) -> None:
    """An agent that first connects while Mnemoscope reads may switch the file to WAL: the
    read-only connections then read its frames and leave no -wal or -shm of their own behind."""
    db = one_row_database(tmp_path / "x.db")
    first, second = read_only_connection(db), read_only_connection(db)
    try:
        assert first.execute("SELECT v FROM t").fetchall() == second.execute("SELECT v FROM t").fetchall() == [(1,)]
        agent = sqlite3.connect(db)
        agent.execute("PRAGMA journal_mode = WAL")
        agent.execute("INSERT INTO t VALUES (2)")
        agent.commit()
        agent.close()
        assert first.execute("SELECT count(*) FROM t").fetchall() == [(2,)]
        assert second.execute("SELECT count(*) FROM t").fetchall() == [(2,)]
    finally:
        first.close()
        second.close()
    assert _listing(tmp_path) == ["x.db"]
    assert read_only_rows(db, "SELECT count(*) FROM t") == [(2,)]


def test_a_read_only_connection_writes_no_byte_and_the_token_moves_on_a_write(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    token, state = files_token(db), file_state(db)
    con = read_only_connection(db)
    try:
        assert con.execute("SELECT v FROM t").fetchall() == [(1,)]
        with pytest.raises(sqlite3.Error):
            con.execute("INSERT INTO t VALUES (2)")
    finally:
        con.close()
    assert (files_token(db), file_state(db), sorted(os.listdir(tmp_path))) == (token, state, ["x.db"])
    with writing(db) as con:
        con.execute("INSERT INTO t VALUES (2)")
    assert files_token(db) != token
    assert read_only_rows(db, "SELECT count(*) FROM t") == [(2,)]


def test_sqlite_errors_become_one_sentence_naming_the_file(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    assert isinstance(sqlite_error(db, sqlite3.OperationalError("database is locked")), LockedError)
    assert "x.db is not a readable SQLite database" in str(sqlite_error(db, sqlite3.DatabaseError("file is not a database")))
    assert isinstance(sqlite_error(db, sqlite3.OperationalError("attempt to write a readonly database")), StoreFileError)
    (tmp_path / "junk.db").write_bytes(b"x" * 4096)
    with pytest.raises(UnreadableStoreError), writing(tmp_path / "junk.db") as con:
        con.execute("SELECT * FROM sqlite_master")


def test_holders_names_another_program_that_has_the_file_open(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = one_row_database(tmp_path / "x.db")
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sqlite3, sys, time; c = sqlite3.connect({str(db)!r}); "
         "c.execute('SELECT * FROM t').fetchall(); print('open', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        assert f"pid {holder.pid}" in " ".join(holders(db))
    finally:
        holder.kill()
        holder.wait()


def test_like_patterns_match_their_characters_literally(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "like.db")
    con.execute("CREATE TABLE t (v TEXT)")
    con.executemany("INSERT INTO t VALUES (?)", [("100%",), ("1000",), ("a_b",), ("axb",), ("c\\d",)])
    found = {
        text: [v for (v,) in con.execute("SELECT v FROM t WHERE v LIKE ? ESCAPE '\\'", (f"%{escape_like(text)}%",))]
        for text in ("0%", "_", "\\")
    }
    con.close()
    assert found == {"0%": ["100%"], "_": ["a_b"], "\\": ["c\\d"]}


def test_a_schema_read_while_an_agents_wal_holds_frames_is_kept_until_the_agent_changes_it(tmp_path: Path) -> None:
    """While an agent keeps its connection open its -wal holds frames (the newest page 1 may be
    there): the schema is kept by the cookie SQLite reads through the WAL, so a row the agent
    writes makes the next peek read no table's columns, and a table it adds is seen at once."""
    from helpers.file_calls import sql_statements

    db = tmp_path / "agent.db"
    agent = sqlite3.connect(db, isolation_level=None)
    try:
        agent.execute("PRAGMA journal_mode = WAL")
        agent.execute("CREATE TABLE notes (body TEXT)")
        agent.execute("INSERT INTO notes VALUES ('first')")
        assert os.path.getsize(f"{db}-wal") > 0
        assert set(peek_schema(db)) == {"notes"}
        agent.execute("INSERT INTO notes VALUES ('second')")
        with sql_statements() as statements:
            assert set(peek_schema(db)) == {"notes"}
        assert [sql for _, sql in statements] == ["PRAGMA schema_version"]
        agent.execute("CREATE TABLE tags (name TEXT)")
        assert set(peek_schema(db)) == {"notes", "tags"}
        before = schema_state(db)
        agent.execute("INSERT INTO notes VALUES ('third')")
        assert schema_state(db) == before
        agent.execute("ALTER TABLE tags ADD COLUMN colour TEXT")
        assert schema_state(db) != before
        assert peek_schema(db)["tags"] == ("table", frozenset({"name", "colour"}))
    finally:
        agent.close()


def test_another_database_copied_over_the_file_is_read_for_itself_whatever_its_cookie(tmp_path: Path) -> None:
    """A restore by copying over the file keeps its inode, and two databases made alike share a
    schema cookie: the file's own page 1 tells them apart while an agent's -wal holds frames."""
    import shutil
    from contextlib import closing

    db, other = tmp_path / "agent.db", tmp_path / "other.db"
    for path, tables in ((db, ("notes", "tags")), (other, ("secrets", "other"))):
        with closing(sqlite3.connect(path)) as con:
            con.execute("PRAGMA journal_mode = WAL")
            for table in tables:
                con.execute(f"CREATE TABLE {table} (body TEXT)")
    inode = db.stat().st_ino
    for expected in (("notes", "tags"), ("other", "secrets")):
        with closing(sqlite3.connect(db, isolation_level=None)) as agent:
            agent.execute(f"INSERT INTO {expected[0]} VALUES ('x')")
            assert os.path.getsize(f"{db}-wal") > 0
            assert sorted(peek_schema(db)) == list(expected)
        shutil.copyfile(other, db)
    assert db.stat().st_ino == inode  # (else this test shows nothing)


def test_an_emptied_file_beside_a_live_wal_is_looked_at_without_losing_the_wal(tmp_path: Path) -> None:
    """SQLite deletes the -wal of a database file of 0 bytes at its first read, even through a
    mode=ro connection: a look at such a file (its schema's state, a detection) connects to nothing."""
    import shutil
    from contextlib import closing

    from mnemoscope.storage.opening import detect_everything

    db = tmp_path / "memory.db"
    with closing(sqlite3.connect(db)) as agent:
        agent.execute("PRAGMA journal_mode = WAL")
        agent.execute("CREATE TABLE notes (body TEXT)")
        agent.execute("INSERT INTO notes VALUES ('kept in the wal')")
        agent.commit()
        shutil.copyfile(f"{db}-wal", tmp_path / "saved-wal")
    db.write_bytes(b"")
    shutil.copyfile(tmp_path / "saved-wal", f"{db}-wal")
    wal = Path(f"{db}-wal").read_bytes()
    assert wal and schema_state(db) is not None
    detect_everything(tmp_path)
    assert Path(f"{db}-wal").read_bytes() == wal


def test_a_damaged_schema_whose_names_are_not_utf8_is_a_sqlite_error(tmp_path: Path) -> None:
    """SQLite names the object of a damaged schema in its message; bytes there that are not UTF-8
    made Python's sqlite3 raise UnicodeDecodeError out of any statement, which every reader's
    `except sqlite3.Error` missed (a crash, exit 3). Every connection made here raises it as a
    sqlite3.DatabaseError."""
    db = tmp_path / "bad.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t (x)")
    con.execute("CREATE INDEX ixx ON t (x)")
    con.commit()
    con.close()
    data = bytearray(db.read_bytes())
    at = data.find(b"ixx")
    data[at : at + 3] = b"\xff\xfe\xc3"
    at = data.find(b"ON t (x)")
    data[at : at + 8] = b"ON q (x)"
    db.write_bytes(bytes(data))
    with pytest.raises(UnicodeDecodeError):  # what the plain module does
        sqlite3.connect(db).execute("SELECT * FROM t")
    with pytest.raises(sqlite3.DatabaseError, match=r"malformed database schema \(\\xff\\xfe\\xc3\)"):
        read_only_rows(db, "SELECT * FROM t")
    for statement in (lambda c: c.execute("SELECT * FROM t"), lambda c: c.executemany("INSERT INTO t VALUES (?)", [(1,)]),
                      lambda c: c.executescript("SELECT * FROM t;")):
        con = read_only_connection(db)
        try:
            with pytest.raises(sqlite3.DatabaseError):
                statement(con)
        finally:
            con.close()
    with pytest.raises(UnreadableStoreError, match="not a readable SQLite database"), writing(db) as con:
        con.execute("SELECT * FROM t")
