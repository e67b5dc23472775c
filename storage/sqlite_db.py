"""SQLAlchemy engines for SQLite files, and SQLite errors turned into user messages."""

from __future__ import annotations

import contextlib
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from sqlalchemy import create_engine, event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.pool import NullPool

from .errors import StoreError, UnreadableStoreError

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def files_token(*paths: Path) -> str:
    """Name, mtime and size of each SQLite file and its -wal companion that exists now.

    A -wal file comes and goes as connections open and close, so it can vanish
    between listing and stat: a missing file is simply not part of the token."""
    parts = []
    for path in paths:
        for candidate in (path, path.with_name(path.name + "-wal")):
            try:
                st = candidate.stat()
            except OSError:
                continue
            parts.append(f"{candidate.name}:{st.st_mtime_ns}:{st.st_size}")
    return "/".join(parts)


def read_only_rows(path: Path, sql: str) -> list[tuple]:
    """Rows of one query on a SQLite file opened read-only: no byte of it is written.
    Raises sqlite3.Error for the caller to word."""
    con = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def sqlite_engine(path: Path, *, read_only: bool = False, wal: bool = True) -> Engine:
    """An engine on one SQLite file: WAL, a busy timeout, foreign keys, math functions."""
    path = Path(path)
    if read_only:
        url = f"sqlite:///file:{path.resolve()}?mode=ro&uri=true"
    else:
        url = f"sqlite:///{path.resolve()}"
    # NullPool: each use opens and closes its connection, so no idle handle keeps
    # the file locked for an agent writing to it.
    engine = create_engine(url, poolclass=NullPool, connect_args={"timeout": 5.0})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        # The driver would begin a transaction only at the first write, after the reads a
        # conflict check makes; SQLAlchemy's "begin" below opens it instead.
        dbapi_conn.isolation_level = None
        dbapi_conn.execute("PRAGMA busy_timeout = 5000")
        if not read_only:
            dbapi_conn.execute("PRAGMA foreign_keys = ON")
            if wal:
                dbapi_conn.execute("PRAGMA journal_mode = WAL")
                dbapi_conn.execute("PRAGMA synchronous = NORMAL")
        _ensure_math_functions(dbapi_conn)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(IMMEDIATE) else "BEGIN")

    return engine


IMMEDIATE = "mnemoscope_immediate"


@contextlib.contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction that holds SQLite's write lock from its first statement, so what it
    reads (a conflict check) cannot change before it writes (BEGIN IMMEDIATE)."""
    with engine.connect() as conn:
        conn.execution_options(**{IMMEDIATE: True})
        with conn.begin():
            yield conn


def _ensure_math_functions(dbapi_conn: sqlite3.Connection) -> None:
    try:
        dbapi_conn.execute("SELECT ln(1.0), pow(2.0, 2.0)")
    except sqlite3.OperationalError:
        dbapi_conn.create_function("ln", 1, math.log, deterministic=True)
        dbapi_conn.create_function("pow", 2, math.pow, deterministic=True)


@contextlib.contextmanager
def friendly_errors(path: Path) -> Iterator[None]:
    """Re-raise SQLite's environment errors as one readable StoreError."""
    try:
        yield
    except (OperationalError, DBAPIError) as exc:
        raise sqlite_error(path, exc.orig if exc.orig is not None else exc) from exc
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from exc


def sqlite_error(path: Path, exc: BaseException) -> StoreError:
    message = str(exc).lower()
    name = Path(path).name
    if "locked" in message or "busy" in message:
        return StoreError(f"{name} is locked by another program; try again when it is idle.")
    if "not a database" in message or "malformed" in message or "file is encrypted" in message:
        return UnreadableStoreError(f"{name} is not a readable SQLite database (corrupt or truncated).")
    if "disk" in message and ("full" in message or "i/o" in message):
        return StoreError(f"Cannot write {name}: {exc}.")
    if "readonly" in message or "read-only" in message:
        return StoreError(f"{name} is read-only here: {exc}.")
    if "no such table" in message or "no such column" in message:
        return UnreadableStoreError(f"{name} does not have the expected tables ({exc}).")
    if "unable to open" in message:
        return UnreadableStoreError(f"Cannot open {name}: {exc}.")
    return StoreError(f"SQLite error on {name}: {exc}.")
