"""Reading a database's head while this process has it open must not cancel this process's
SQLite locks: another program closing its connection would then delete the -wal and -shm under
ours. Driven by a real second process, as an agent beside the window is."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mnemoscope.storage import open_store
from mnemoscope.storage.sqlite_files import file_state, in_wal_mode, is_sqlite_file
from mnemoscope.storage.sqlite_heads import SQLITE_MAGIC, database_head, kept_count

AGENT_READS_AND_CLOSES = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM t').fetchall(); c.close()"
)


def _wal_database(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE t(x)")
    con.execute("INSERT INTO t VALUES (1)")
    con.commit()
    return con


def _another_program_reads_and_closes(path: Path) -> None:
    subprocess.run([sys.executable, "-c", AGENT_READS_AND_CLOSES, str(path)], check=True, timeout=60)


@pytest.mark.parametrize("read", [is_sqlite_file, in_wal_mode, file_state], ids=lambda f: f.__name__)
def test_reading_the_head_of_an_open_database_leaves_its_wal_to_the_live_connection(tmp_path: Path, read) -> None:
    db = tmp_path / "memory.db"
    con = _wal_database(db)
    read(db)
    read(db)
    _another_program_reads_and_closes(db)
    # Our connection still counts: the other program was not the last, so it neither
    # checkpointed nor deleted the WAL and its index.
    assert (tmp_path / "memory.db-wal").exists() and (tmp_path / "memory.db-shm").exists()
    con.execute("INSERT INTO t VALUES (2)")
    con.commit()
    _another_program_reads_and_closes(db)
    assert sqlite3.connect(db).execute("SELECT count(*) FROM t").fetchone() == (2,)
    con.close()


def test_a_store_open_in_this_process_keeps_its_wal_while_an_agent_comes_and_goes(demo_path: Path) -> None:
    db = demo_path / "memory.db"
    with open_store(demo_path) as store:
        store.count()
        for _ in range(3):
            file_state(db)
            is_sqlite_file(db)
            before = set(os.listdir(demo_path))
            subprocess.run(
                [sys.executable, "-c",
                 "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('SELECT count(*) FROM memories'); c.close()",
                 str(db)], check=True, timeout=60)
            assert {"memory.db-wal", "memory.db-shm"} & before <= set(os.listdir(demo_path))
        assert store.count() > 0


def test_a_file_that_is_not_a_database_is_read_and_let_go(tmp_path: Path) -> None:
    text = tmp_path / "notes.md"
    text.write_text("# not a database\n")
    kept = kept_count()
    assert database_head(os.fspath(text), 16) == b"# not a database"
    assert kept_count() == kept


def test_a_missing_empty_or_fifo_file_reads_as_such(tmp_path: Path) -> None:
    db = tmp_path / "gone.db"
    sqlite3.connect(db).execute("CREATE TABLE t(x)").connection.close()
    assert database_head(os.fspath(db), 16) == SQLITE_MAGIC
    db.unlink()
    assert database_head(os.fspath(db), 16) is None
    empty = tmp_path / "empty.db"
    empty.touch()
    assert database_head(os.fspath(empty), 16) == b""
    assert not is_sqlite_file(empty)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert database_head(os.fspath(fifo), 16) is None  # never blocks on a FIFO


def test_curating_an_open_store_leaves_its_wal_to_the_live_connection(demo_path: Path) -> None:
    """Every read of the file along a writable open, a step, its undo and a schema peek (verdicts,
    change tokens, WAL checks) keeps this process's locks: an agent's connection closing meanwhile
    is never the last one."""
    from mnemoscope.storage import Curator, Kind, MemoryQuery
    from mnemoscope.storage.sqlite_files import peek_schema

    db = demo_path / "memory.db"
    with open_store(demo_path) as store:
        rows = [m.id for m in store.page(MemoryQuery(kinds=(Kind.SQLITE,)), limit=2)]
        curator = Curator(store)
        curator.delete(rows[0])
        curator.undo()
        curator.edit(rows[1], content="edited while an agent comes and goes")
        peek_schema(db)
        assert {"memory.db-wal", "memory.db-shm"} <= set(os.listdir(demo_path))
        _another_program_counts_memories(db)
        assert {"memory.db-wal", "memory.db-shm"} <= set(os.listdir(demo_path))
        curator.undo()
    with open_store(demo_path, read_only=True) as store:
        assert store.get(rows[1]).content != "edited while an agent comes and goes"


def _another_program_counts_memories(db: Path) -> None:
    subprocess.run([sys.executable, "-c", "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
                    "c.execute('SELECT count(*) FROM memories').fetchall(); c.close()", str(db)], check=True, timeout=60)
