"""sqlite_engine.py on real SQLite files: memory.db's writes without SQLAlchemy, behaving as the
SQLAlchemy engine they replace (transactions, a pool that notices a replaced file, rows by name),
statements built with SQLAlchemy compiled for it, and Alembic lent a connection inside its
transaction."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from helpers.small_db import one_row_database
from mnemoscope.storage.errors import UnreadableStoreError
from mnemoscope.storage.sqlite_engine import (
    empty_wal,
    has_changed_rows,
    rehearsal,
    sqlalchemy_connection,
    sqlite_engine,
    write_transaction,
)
from mnemoscope.storage.sqlite_files import friendly_errors, read_only_rows, writing


def test_an_engine_commits_a_write_transaction_and_rolls_back_a_rehearsal(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    engine = sqlite_engine(db)
    try:
        with rehearsal(engine) as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES (2)")
        assert not has_changed_rows(engine)
        with write_transaction(engine) as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES (?)", (3,))
            assert conn.exec_driver_sql("SELECT ln(1.0)").scalar() == 0.0  # math functions on any SQLite
        assert has_changed_rows(engine)
        with pytest.raises(UnreadableStoreError, match="does not have the expected tables"), friendly_errors(db):
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT * FROM missing")
        with pytest.raises(ZeroDivisionError), engine.begin() as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES (4)")
            raise ZeroDivisionError
        with engine.connect() as conn:  # closed without a commit: rolled back, as SQLAlchemy does
            conn.exec_driver_sql("INSERT INTO t VALUES (5)")
    finally:
        engine.dispose()
    assert read_only_rows(db, "SELECT v FROM t ORDER BY v") == [(1,), (3,)]


def test_a_write_transaction_holds_the_write_lock_before_it_reads(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    engine = sqlite_engine(db)
    other = sqlite3.connect(db, timeout=0.05)
    try:
        with write_transaction(engine) as conn:
            conn.exec_driver_sql("SELECT count(*) FROM t").scalar()
            with pytest.raises(sqlite3.OperationalError, match="locked"):
                other.execute("INSERT INTO t VALUES (9)")
        with engine.connect() as conn:  # a plain read takes no write lock
            conn.exec_driver_sql("SELECT count(*) FROM t").scalar()
            other.execute("INSERT INTO t VALUES (9)")
            other.commit()
    finally:
        other.close()
        engine.dispose()


def test_rows_read_by_position_by_name_and_as_a_mapping(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    engine = sqlite_engine(db)
    try:
        with engine.connect() as conn:
            row = conn.exec_driver_sql("SELECT v, v + 1 AS next FROM t").first()
            assert row == (1, 2) and row.v == 1 and row.next == 2 and row._mapping == {"v": 1, "next": 2}
            with pytest.raises(AttributeError):
                _ = row.missing
            assert conn.exec_driver_sql("SELECT v FROM t WHERE v > 5").first() is None
            assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar_one() == 1
            with pytest.raises(LookupError):
                conn.exec_driver_sql("SELECT v FROM t WHERE v > 5").scalar_one()
            result = conn.exec_driver_sql("INSERT INTO t VALUES (?)", [(7,), (8,)])
            assert result.rowcount == 2
            assert [r.v for r in conn.exec_driver_sql("SELECT v FROM t ORDER BY v")] == [1, 7, 8]
    finally:
        engine.dispose()


def test_statements_built_with_sqlalchemy_run_compiled_for_sqlite(tmp_path: Path) -> None:
    from sqlalchemy import Column, Integer, MetaData, Table, Text, insert, select, text, update

    db = tmp_path / "x.db"
    table = Table("m", MetaData(), Column("id", Text, primary_key=True), Column("n", Integer))
    engine = sqlite_engine(db)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE m (id TEXT PRIMARY KEY, n INTEGER)")
            conn.execute(insert(table), [{"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "c", "n": 3}])
            conn.execute(update(table).where(table.c.id == "b").values(n=table.c.n + 10))
            rows = conn.execute(select(table.c.id, table.c.n).where(table.c.id.in_(["a", "b"])).order_by(table.c.id)).all()
            assert [(r.id, r.n) for r in rows] == [("a", 1), ("b", 12)]
            assert conn.execute(text("SELECT n FROM m WHERE id = :i"), {"i": "c"}).scalar() == 3
    finally:
        engine.dispose()
    assert read_only_rows(db, "SELECT id, n FROM m ORDER BY id") == [("a", 1), ("b", 12), ("c", 3)]


def test_a_pooled_connection_to_a_file_since_replaced_is_not_used(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    engine = sqlite_engine(db, wal=False)
    try:
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT v FROM t").scalar() == 1
        replacement = tmp_path / "new.db"
        con = sqlite3.connect(replacement)
        con.execute("CREATE TABLE t (v)")
        con.execute("INSERT INTO t VALUES (42)")
        con.commit()
        con.close()
        os.replace(replacement, db)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT v FROM t").scalar() == 42
    finally:
        engine.dispose()


def test_threads_each_get_their_own_connection(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    engine = sqlite_engine(db)
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            for i in range(20):
                with write_transaction(engine) as conn:
                    conn.exec_driver_sql("INSERT INTO t VALUES (?)", (n * 100 + i,))
        except BaseException as exc:  # (reported below)
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    engine.dispose()
    assert errors == []
    assert read_only_rows(db, "SELECT count(*) FROM t") == [(81,)]


def test_alembic_and_create_all_run_inside_the_engines_transaction(tmp_path: Path) -> None:
    """What needs SQLAlchemy's own connection (a migration) is lent one in the transaction it
    runs in: rolled back with it, committed with it."""
    from sqlalchemy import Column, MetaData, Table, Text

    db = one_row_database(tmp_path / "x.db")
    metadata = MetaData()
    Table("made", metadata, Column("id", Text, primary_key=True))
    engine = sqlite_engine(db)
    try:
        with pytest.raises(ZeroDivisionError), engine.begin() as conn:
            with sqlalchemy_connection(conn) as lent:
                metadata.create_all(lent)
            raise ZeroDivisionError
        assert read_only_rows(db, "SELECT name FROM sqlite_master WHERE name = 'made'") == []
        with engine.begin() as conn:
            with sqlalchemy_connection(conn) as lent:
                metadata.create_all(lent)
            conn.exec_driver_sql("INSERT INTO made VALUES ('x')")
    finally:
        engine.dispose()
    assert read_only_rows(db, "SELECT id FROM made") == [("x",)]


def test_writing_through_an_engine_never_imports_sqlalchemy(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mnemoscope.storage.sqlite_engine import sqlite_engine, write_transaction\n"
        f"engine = sqlite_engine(Path({str(db)!r}))\n"
        "with write_transaction(engine) as conn:\n"
        "    conn.exec_driver_sql('INSERT INTO t VALUES (?)', (2,))\n"
        "engine.dispose()\n"
        "print('sqlalchemy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    assert read_only_rows(db, "SELECT v FROM t ORDER BY v") == [(1,), (2,)]


def test_writes_zero_what_they_remove_and_empty_wal_leaves_no_frame_behind(tmp_path: Path) -> None:
    """A purge relies on both: a removed value is zeroed in the file (secure_delete, whatever the
    SQLite build's default), and the -wal, emptied, keeps no older page."""
    db = one_row_database(tmp_path / "x.db")
    secret = "a text to forget " * 40
    engine = sqlite_engine(db)
    try:
        with write_transaction(engine) as conn:
            assert conn.exec_driver_sql("PRAGMA secure_delete").scalar() == 1
            conn.exec_driver_sql("CREATE TABLE s (v TEXT)")
            conn.exec_driver_sql("INSERT INTO s VALUES (?)", (secret,))
        reader = sqlite3.connect(db)  # another program holds the file open: the -wal stays
        try:
            reader.execute("SELECT count(*) FROM s").fetchall()
            with write_transaction(engine) as conn:
                conn.exec_driver_sql("DELETE FROM s")
            assert secret.encode() in Path(f"{db}-wal").read_bytes()
            assert empty_wal(engine, db) == []
            assert Path(f"{db}-wal").stat().st_size == 0
            assert secret.encode() not in db.read_bytes()
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM s").fetchall()  # a read that holds its snapshot
            with write_transaction(engine) as conn:
                conn.exec_driver_sql("INSERT INTO s VALUES ('x')")
            [note] = empty_wal(engine, db)
            assert "x.db-wal could not be emptied now" in note
        finally:
            reader.close()
    finally:
        engine.dispose()
    with writing(db) as con:
        assert con.execute("PRAGMA secure_delete").fetchone()[0] == 1


def test_a_new_files_first_connection_is_kept_for_the_next_use(tmp_path: Path) -> None:
    """The connection that made the file is pooled as a connection to that file (not as one to
    a file since replaced, which would close it and checkpoint on every first write)."""
    engine = sqlite_engine(tmp_path / "new.db")
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE t (v)")
            first = conn.connection.driver_connection
        with engine.connect() as conn:
            assert conn.connection.driver_connection is first
    finally:
        engine.dispose()


def test_one_parameter_set_names_the_columns_an_insert_or_update_writes(tmp_path: Path) -> None:
    from sqlalchemy import Column, Integer, MetaData, Table, Text, insert, update

    table = Table("m", MetaData(), Column("id", Text, primary_key=True), Column("n", Integer), Column("note", Text))
    engine = sqlite_engine(tmp_path / "x.db")
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE m (id TEXT PRIMARY KEY, n INTEGER, note TEXT DEFAULT 'kept')")
            conn.execute(insert(table), {"id": "a", "n": 1})
            conn.execute(update(table).where(table.c.id == "a"), {"n": 5})
            assert conn.exec_driver_sql("SELECT id, n, note FROM m").all() == [("a", 5, "kept")]
    finally:
        engine.dispose()


def test_a_transaction_sqlite_ended_itself_is_not_committed_as_if_whole(tmp_path: Path) -> None:
    db = one_row_database(tmp_path / "x.db")
    engine = sqlite_engine(db)
    try:
        with pytest.raises(sqlite3.OperationalError, match="rolled back by SQLite"), write_transaction(engine) as conn:
            conn.exec_driver_sql("INSERT INTO t VALUES (2)")
            conn.exec_driver_sql("ROLLBACK")  # as SQLite does after some errors (a full disk, an I/O error)
        with engine.connect() as conn:  # the pool still works
            assert conn.exec_driver_sql("SELECT count(*) FROM t").scalar() == 1
    finally:
        engine.dispose()
