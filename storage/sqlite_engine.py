"""memory.db's writes and the journal on sqlite3, without SQLAlchemy.

``sqlite_engine(path)`` gives the few parts of SQLAlchemy's Engine and Connection that the native
store's code uses (connect, begin, execute, exec_driver_sql, raw_connection, dispose), run on
sqlite3 itself: importing SQLAlchemy costs a command that writes one row (``rm ID``, ``undo``) a
quarter of a second here, more than the command's own work. Statements written as SQL
(exec_driver_sql) run as they are; a statement built with SQLAlchemy Core (or text()) is compiled
for SQLite where it runs, which needs SQLAlchemy imported by whoever built it. The same code runs on
a real SQLAlchemy connection (PostgreSQL, the tests' own engines), which is why it keeps that API.

Connections behave as SQLAlchemy's do with the events sqlite_files set on them before: a small pool
(an idle connection holds no lock), a pooled connection dropped when the file at the path was
replaced, a transaction begun at the first statement (BEGIN, or BEGIN IMMEDIATE with the
IMMEDIATE execution option: a write transaction takes SQLite's write lock before it reads), rolled
back when the connection closes uncommitted, and whether any commit changed a row
(has_changed_rows).
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from .sqlite_files import (
    BUSY_TIMEOUT,
    DecodedConnection,
    ensure_math_functions,
    file_identity,
    friendly_errors,
    read_only_connections,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection as SqlAlchemyConnection

# What the native store's shared code (memory.db and PostgreSQL alike) is handed: a SQLAlchemy
# Engine or a SqliteEngine, and their connections, which share the API that code uses.
AnyEngine: TypeAlias = Any
AnyConnection: TypeAlias = Any

IMMEDIATE = "mnemoscope_immediate"
POOL_SIZE = 2  # idle connections kept: a new one reads the schema again and starts with a cold page cache


class _Dialect:
    """What the store's code asks of conn.dialect."""

    name = "sqlite"
    paramstyle = "qmark"

    @staticmethod
    def has_table(conn: SqliteConnection, name: str) -> bool:
        found = conn.exec_driver_sql(
            "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", (name,)).first()
        return found is not None


DIALECT = _Dialect()


class Row(tuple):
    """A result row: a tuple whose columns are also attributes and a mapping, as SQLAlchemy's."""

    __slots__ = ()
    _keys: tuple[str, ...] = ()
    _index: Mapping[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        try:
            return self[self._index[name]]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def _mapping(self) -> dict[str, Any]:
        return dict(zip(self._keys, self, strict=True))


@functools.lru_cache(maxsize=256)
def _row_class(keys: tuple[str, ...]) -> type[Row]:
    index: dict[str, int] = {}
    for position, key in enumerate(keys):
        index.setdefault(key, position)
    return type("Row", (Row,), {"__slots__": (), "_keys": keys, "_index": index})


class Result:
    """A statement's rows (SQLAlchemy's CursorResult, the part the store uses)."""

    def __init__(self, cursor: sqlite3.Cursor) -> None:
        self._cursor = cursor
        self.rowcount = cursor.rowcount
        description = cursor.description
        self._row = _row_class(tuple(d[0] for d in description)) if description else None

    def fetchone(self) -> Row | None:
        raw = self._cursor.fetchone() if self._row else None
        return None if raw is None else self._row(raw)  # type: ignore[misc]

    def fetchall(self) -> list[Row]:
        return list(map(self._row, self._cursor.fetchall())) if self._row else []

    all = fetchall

    def __iter__(self) -> Iterator[Row]:
        return map(self._row, self._cursor) if self._row else iter(())

    def first(self) -> Row | None:
        try:
            return self.fetchone()
        finally:
            self._cursor.close()

    def one(self) -> Row:
        rows = self.fetchall()
        if len(rows) != 1:
            raise LookupError(f"expected one row, the statement gave {len(rows)}")
        return rows[0]

    def scalar(self) -> Any:
        row = self.first()
        return None if row is None else row[0]

    def scalar_one(self) -> Any:
        return self.one()[0]


class _Pooled:
    """One pooled DB-API connection as SQLAlchemy hands it out (conn.connection, raw_connection())."""

    def __init__(self, engine: SqliteEngine, dbapi: sqlite3.Connection) -> None:
        self._engine = engine
        self.dbapi_connection: sqlite3.Connection | None = dbapi
        self.driver_connection = dbapi

    def close(self) -> None:
        if self.dbapi_connection is not None:
            self._engine._check_in(self.dbapi_connection)
            self.dbapi_connection = None


class _Transaction:
    def __init__(self, conn: SqliteConnection) -> None:
        self._conn = conn

    def commit(self) -> None:
        self._conn.commit()

    def rollback(self) -> None:
        self._conn.rollback()

    def __enter__(self) -> _Transaction:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is None:
            self.commit()
        else:
            self.rollback()


class SqliteConnection:
    """A connection checked out of a SqliteEngine until it closes (with: closes it)."""

    dialect = DIALECT

    def __init__(self, engine: SqliteEngine) -> None:
        self.engine = engine
        self.connection = engine._check_out()
        self._dbapi: sqlite3.Connection = self.connection.driver_connection
        self._options: dict[str, Any] = {}
        self._in_transaction = False
        self._changes_at_begin = 0

    def execution_options(self, **options: Any) -> SqliteConnection:
        self._options.update(options)
        return self

    def in_transaction(self) -> bool:
        return self._in_transaction

    def begin(self) -> _Transaction:
        if not self._in_transaction:
            self._begin()
        return _Transaction(self)

    def _begin(self) -> None:
        self._changes_at_begin = self._dbapi.total_changes
        self._dbapi.execute("BEGIN IMMEDIATE" if self._options.get(IMMEDIATE) else "BEGIN")
        self._in_transaction = True

    def commit(self) -> None:
        if self._in_transaction:
            self._in_transaction = False
            if not self._dbapi.in_transaction:  # SQLite ended it after an error a caller went past
                raise sqlite3.OperationalError(
                    "the transaction was rolled back by SQLite after an error; what followed was not written with it")
            self._dbapi.execute("COMMIT")
            if self._dbapi.total_changes != self._changes_at_begin:
                self.engine.changed_rows = True

    def rollback(self) -> None:
        if self._in_transaction:
            self._in_transaction = False
            if self._dbapi.in_transaction:  # (SQLite itself rolls back a transaction some errors end)
                self._dbapi.execute("ROLLBACK")

    def exec_driver_sql(self, sql: str, parameters: Sequence[Any] | Mapping[str, Any] | None = None) -> Result:
        """sql with the driver's placeholders (?, :name); parameters a list of them runs it once each."""
        if not self._in_transaction:
            self._begin()
        if isinstance(parameters, list):
            return Result(self._dbapi.executemany(sql, parameters))
        return Result(self._dbapi.execute(sql, () if parameters is None else parameters))

    def execute(self, statement: Any, parameters: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None) -> Result:
        """A statement built with SQLAlchemy (Core or text()), compiled for SQLite here."""
        many = isinstance(parameters, list)
        sets: list[Mapping[str, Any]] = parameters if many else [parameters or {}]  # type: ignore[assignment,list-item]
        # (the columns an insert or update names are the parameters' keys, as SQLAlchemy takes them)
        sql, bind = _compiled(statement, list(sets[0]) if sets and sets[0] else None)
        if many:
            return self.exec_driver_sql(sql, [bind(values) for values in sets])
        return self.exec_driver_sql(sql, bind(sets[0]))

    def close(self) -> None:
        if self.connection.dbapi_connection is None:
            return
        try:
            self.rollback()
        finally:
            self.connection.close()

    def __enter__(self) -> SqliteConnection:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _compiled(statement: Any, column_keys: list[str] | None) -> tuple[str, Callable[[Mapping[str, Any]], tuple[Any, ...]]]:
    """statement's SQL for SQLite and what turns a parameter set into its positional values."""
    compiled = statement.compile(dialect=_sqlalchemy_dialect(), column_keys=column_keys,
                                 compile_kwargs={"render_postcompile": True})
    order = compiled.positiontup or ()
    processors = compiled._bind_processors

    def bind(values: Mapping[str, Any]) -> tuple[Any, ...]:
        params = compiled.construct_params(dict(values) if values else None)
        return tuple(processors[name](params[name]) if name in processors else params[name] for name in order)

    return str(compiled), bind


@functools.cache
def _sqlalchemy_dialect() -> Any:
    from sqlalchemy.dialects.sqlite import pysqlite

    return pysqlite.dialect(paramstyle="qmark")


class SqliteEngine:
    """Connections to one SQLite file (see the module's docstring)."""

    dialect = DIALECT

    def __init__(self, path: Path, connect: Callable[[], sqlite3.Connection],
                 set_up: Callable[[sqlite3.Connection], None],
                 spare: Callable[[object], sqlite3.Connection | None] | None = None) -> None:
        self.path = path
        self._connect = connect
        self._set_up = set_up
        self._spare = spare
        self._idle: list[tuple[sqlite3.Connection, object]] = []
        self._lock = threading.Lock()
        self._generation = 0
        # id of a checked-out connection -> the pool's generation and the file it opened
        self._out: dict[int, tuple[int, object]] = {}
        self.changed_rows = False  # whether a commit of this engine's changed a row

    def connect(self) -> SqliteConnection:
        return SqliteConnection(self)

    @contextlib.contextmanager
    def begin(self) -> Iterator[SqliteConnection]:
        with self.connect() as conn, conn.begin():
            yield conn

    def raw_connection(self) -> _Pooled:
        return self._check_out()

    def dispose(self) -> None:
        """Close the idle connections; one in use closes when it is given back."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._generation += 1
        for dbapi, _file in idle:
            dbapi.close()

    def _check_out(self) -> _Pooled:
        file = file_identity(self.path)
        with self._lock:
            while self._idle:
                dbapi, made_on = self._idle.pop()
                # A pooled connection reads the file it opened: if another program replaced the
                # file since, a new connection opens the file there now.
                if made_on == file:
                    self._out[id(dbapi)] = (self._generation, made_on)
                    return _Pooled(self, dbapi)
                dbapi.close()
            generation = self._generation
        dbapi = (self._spare(file) if self._spare is not None and file is not None else None) or self._connect()
        try:
            self._set_up(dbapi)
        except BaseException:
            dbapi.close()
            raise
        if file is None:  # the connection made the file
            file = file_identity(self.path)
        with self._lock:
            self._out[id(dbapi)] = (generation, file)
        return _Pooled(self, dbapi)

    def _check_in(self, dbapi: sqlite3.Connection) -> None:
        with self._lock:
            generation, made_on = self._out.pop(id(dbapi), (None, None))
        try:
            if dbapi.in_transaction:  # (a raw connection given back inside a transaction)
                dbapi.execute("ROLLBACK")
        except BaseException:
            dbapi.close()  # not kept holding a lock: closing rolls back what it can
            raise
        with self._lock:
            if generation == self._generation and len(self._idle) < POOL_SIZE:
                self._idle.append((dbapi, made_on))
                return
        dbapi.close()


def _set_up(dbapi: sqlite3.Connection, *, read_only: bool, wal: bool) -> None:
    # Transactions are begun and ended by SqliteConnection (sqlite3's own would begin only at the
    # first write, after the reads a conflict check makes). (The busy timeout is the driver's:
    # every connection here is made with timeout=BUSY_TIMEOUT.)
    dbapi.isolation_level = None
    if not read_only:
        dbapi.execute("PRAGMA foreign_keys = ON")
        # What a write removes (an edited text, a deleted row, an index segment merged away) is
        # zeroed in the file, not left in its free space: a purge means gone (SQLite builds
        # differ in the default).
        dbapi.execute("PRAGMA secure_delete = ON")
        # every cell of a page a write reads is checked: damage there is SQLITE_CORRUPT, not spread
        dbapi.execute("PRAGMA cell_size_check = ON")
        if wal:
            dbapi.execute("PRAGMA journal_mode = WAL")
            dbapi.execute("PRAGMA synchronous = NORMAL")
    ensure_math_functions(dbapi)


def sqlite_engine(
    path: Path, *, read_only: bool = False, wal: bool = True, creator: Callable[[], sqlite3.Connection] | None = None,
    spare: Callable[[object], sqlite3.Connection | None] | None = None,
) -> SqliteEngine:
    """An engine on one SQLite file: WAL, a busy timeout, foreign keys, math functions.
    creator: where a read-only engine gets its connections (a SqliteConnector's opener),
    so that it and the connector count the same open connections. spare: asked, when the pool
    has no idle connection, for a read-write connection made elsewhere to the file of the given
    (device, inode) that is free to take (one whose schema is parsed already: a new connection's
    first statement parses it again), or None; the engine sets it up as its own."""
    path = Path(path)
    if read_only:
        connect = creator or read_only_connections(path, BUSY_TIMEOUT)
    else:
        # Connections made here, not from a URL: a "?" in a folder's name would start its query.
        name = str(path.resolve())

        def connect() -> sqlite3.Connection:
            return sqlite3.connect(name, timeout=BUSY_TIMEOUT, check_same_thread=False, factory=DecodedConnection)

    return SqliteEngine(path, connect, functools.partial(_set_up, read_only=read_only, wal=wal), spare)


def has_changed_rows(engine: Any) -> bool:
    """Whether a transaction of engine's committed a change to a row."""
    return bool(getattr(engine, "changed_rows", False))


def empty_wal(engine: SqliteEngine, path: Path) -> list[str]:
    """Fold path's -wal into the file and empty it (a checkpoint that truncates it), so that no page
    a write replaced (a purged row's, an index segment's) stays in it; a database not in WAL mode
    has none. What could not be done, as notes (another program reading the file holds the
    -wal's frames until it is done: the next checkpoint empties it)."""
    raw = engine.raw_connection()
    try:
        with friendly_errors(path):
            dbapi = raw.driver_connection
            (mode,) = dbapi.execute("PRAGMA journal_mode").fetchone()
            if str(mode).lower() != "wal":
                return []
            busy, _frames, _copied = dbapi.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    finally:
        raw.close()
    if busy:
        return [f"{Path(path).name}-wal could not be emptied now: another program is reading {Path(path).name}. "
                "It is emptied at the next checkpoint (when the last program using the file closes it)."]
    return []


@contextlib.contextmanager
def write_transaction(engine: Any, after_commit: Callable[[Any], None] | None = None) -> Iterator[Any]:
    """A transaction that holds SQLite's write lock from its first statement, so what it
    reads (a conflict check) cannot change before it writes (BEGIN IMMEDIATE). after_commit:
    run on the connection once the transaction committed, before another may take it."""
    with engine.connect() as conn:
        conn.execution_options(**{IMMEDIATE: True})
        with conn.begin():
            yield conn
        if after_commit is not None:
            after_commit(conn)


@contextlib.contextmanager
def rehearsal(engine: Any) -> Iterator[Any]:
    """A write_transaction that is always rolled back: whether its writes would succeed, and
    nothing written."""
    with engine.connect() as conn:
        conn.execution_options(**{IMMEDIATE: True})
        transaction = conn.begin()
        try:
            yield conn
        finally:
            transaction.rollback()


class _Borrowed:
    """A DB-API connection lent to SQLAlchemy inside its owner's transaction: SQLAlchemy's commit,
    rollback and close leave the transaction and the connection to the owner."""

    def __init__(self, dbapi: sqlite3.Connection) -> None:
        self._dbapi = dbapi

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dbapi, name)

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        pass

    def close(self) -> None:
        pass


@contextlib.contextmanager
def sqlalchemy_connection(conn: Any) -> Iterator[SqlAlchemyConnection]:
    """conn as a SQLAlchemy connection, in conn's transaction, for what needs SQLAlchemy's own
    (Alembic's migrations, MetaData.create_all): conn itself when it is one."""
    if not isinstance(conn, SqliteConnection):
        yield conn
        return
    from sqlalchemy import create_engine
    from sqlalchemy.pool import StaticPool

    if not conn.in_transaction():
        conn._begin()
    borrowed = _Borrowed(conn._dbapi)
    engine = create_engine("sqlite://", creator=lambda: borrowed, poolclass=StaticPool)
    try:
        with engine.connect() as lent:
            yield lent
    finally:
        engine.dispose()
