"""Any SQLite file, whichever program wrote it (a tool's database as much as memory.db): what is
one, its change token, read-only connections, and SQLite errors turned into user messages (the
engines memory.db is written through: sqlite_engine.py)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import math
import os
import sqlite3
import stat
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from .detect.looks import looked
from .errors import LockedError, StoreError, StoreFileError, UnreadableStoreError
from .sqlite_heads import SQLITE_MAGIC, database_head

# How long a statement waits for another program's lock before giving up: long beside an agent's
# writes (milliseconds), short enough that a database held locked is reported within seconds.
BUSY_TIMEOUT = 4.0
# How long opening a store waits, once, for a lock on a file it probes (its schema, what format it is):
# a program that holds a database locked for longer is named in the error at once, and no other
# probe of the same open waits again.
PROBE_TIMEOUT = 3.0


def is_sqlite_file(path: Path) -> bool:
    return bool(looked("sqlite magic", path, lambda: _is_sqlite_file(path), state=schema_state))


def _is_sqlite_file(path: Path | str) -> bool:
    return _is_database(database_head(os.fspath(path), len(SQLITE_MAGIC)))


def sqlite_uri(path: Path | str, query: str = "", *, real: bool = False) -> str:
    """A file: URI naming the file at path (its real path, a symlink resolved) and nothing else:
    "#", "?" and "%" in a folder's name are percent-encoded, where a bare one would end the path
    and open another file (created, in SQLite's default mode). query: "mode=ro" and the like.
    real: path is already a real path."""
    name = os.fspath(path) if real else os.path.realpath(path)
    if os.sep != "/":
        name = Path(name).as_posix()
    if not name.startswith("/"):  # a Windows drive: file:///C:/...
        name = "/" + name
    return "file://" + urllib.parse.quote(name, safe="/") + (f"?{query}" if query else "")


def file_state(path: Path | str, *, real: bool = False) -> tuple[int, ...] | None:
    """Device, inode, mtime and size of a SQLite file and the change counter in its header, with
    mtime and size and the header (checkpoint sequence, salts) of its -wal if there is one; None
    when the file is not there. A file in the same state holds the same database, whatever path
    it is reached by (SQLite names the -wal after the real file, a symlink resolved): a key for
    what was read from it. The counters tell apart two writes of one size within one mtime tick,
    and a file replaced by one that got the same inode. real: path is already a real path."""
    look = FileLook.at(os.fspath(path) if real else os.path.realpath(path))
    return None if look is None else look.state


_OWN_STATE = 5  # FileLook.state: the file's own fields, then its -wal's


class FileLook(NamedTuple):
    """One look at a SQLite file by its real path: its stat, its -wal's (None when there is
    none), whether its header is a database's and its file_state, for every question an open
    asks of them without a second system call."""

    real: str
    stat: os.stat_result
    wal: os.stat_result | None
    is_sqlite: bool
    state: tuple[int, ...]

    @classmethod
    def at(cls, real: str) -> FileLook | None:
        """None when nothing is at real."""
        try:
            st = os.stat(real)
        except OSError:
            return None
        header = database_head(real, 28, st)  # None: not a regular file, or unreadable
        state: tuple[int, ...] = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size, _header_int(header, 24, 28))
        try:
            wal = os.stat(real + "-wal")
        except OSError:
            return cls(real, st, None, _is_database(header), state)
        state = (*state, wal.st_mtime_ns, wal.st_size, _header_int(_wal_head(real + "-wal", wal), 12, 24))
        return cls(real, st, wal, _is_database(header), state)

    def without_empty_wal(self) -> FileLook:
        """This look as it would be without its -wal if that is empty (as a reading connection
        makes it: it holds nothing)."""
        if self.wal is None or self.wal.st_size:
            return self
        return self._replace(wal=None, state=self.state[:_OWN_STATE])


def _is_database(header: bytes | None) -> bool:
    return header is not None and header[: len(SQLITE_MAGIC)] == SQLITE_MAGIC


def _wal_head(name: str, st: os.stat_result) -> bytes | None:
    """A -wal file's header (SQLite locks the database and its -shm, never the -wal: a plain read)."""
    if not stat.S_ISREG(st.st_mode) or st.st_size < 32:  # a FIFO would block the read
        return None
    try:
        with open(name, "rb") as handle:
            return handle.read(32)
    except OSError:
        return None


def _header_int(header: bytes | None, start: int, end: int) -> int:
    """Bytes start:end of a file's header as one number; -1 when there are none."""
    return int.from_bytes(header[start:end], "big") if header is not None and len(header) >= end else -1


def files_token(*paths: Path | str, real: bool = False) -> str:
    """Name, mtime and size of each SQLite file and its -wal companion that exists now (named
    after the real file: a symlink resolved, as SQLite names it). real: the paths are real paths.

    A -wal file comes and goes as connections open and close, so it can vanish
    between listing and stat: a missing file is simply not part of the token, nor is an empty
    one (it holds no frame: the first reader of a file whose last connection removed its -wal
    makes one, and the file is what it was)."""
    parts = []
    for path in paths:
        name = os.fspath(path) if real else os.path.realpath(path)
        for candidate in (name, name + "-wal"):
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            if st.st_size or candidate is name:
                parts.append(f"{os.path.basename(candidate)}:{st.st_mtime_ns}:{st.st_size}")
    return "/".join(parts)


# This process's open query_only connections per real path (see _ReadOnlyConnections), counted
# together whoever opened them: a source's reader, its engine, a probe, a sqlite-vec connection.
_OPEN: dict[str, int] = {}
_OPEN_LOCK = threading.RLock()  # reentrant: a connection dropped unclosed may be collected while it is held


class _ReadOnlyConnections:
    """Connections that write no byte of a database and leave no file behind.

    A WAL database opened with mode=ro creates -wal and -shm files it then cannot remove.
    So a connection is mode=ro only while another program's -wal (or rollback -journal: its
    rollback is not ours to make) exists and none of ours (of this process, to the same file)
    is open; otherwise it is a query_only connection, and the last of those to close removes
    the empty WAL they made, checkpointing nothing. (Not mode=ro for a file in rollback-journal
    mode either: an agent that switches it to WAL while the connection is open would leave it
    a -wal and -shm it cannot remove.) Where nothing may be created (a read-only
    folder or file) no one can be writing either, and the file is read as immutable.

    dbapi: the DB-API module to connect with (pysqlite3, whose connections load extensions);
    prepare: what to do on each connection before it is handed out (load an extension)."""

    def __init__(
        self, path: Path | str, timeout: float, *, dbapi: Any = sqlite3, prepare: Callable[[Any], None] | None = None,
        real: bool = False,
    ) -> None:
        self._name = os.fspath(path) if real else os.path.realpath(path)
        self.timeout = timeout
        self.dbapi = dbapi
        self.prepare = prepare

    @property
    def _open(self) -> int:
        return _OPEN.get(self._name, 0)

    def __call__(self) -> sqlite3.Connection:
        con = self._opened()
        try:
            if getattr(con, "_counted", False):
                con.execute("PRAGMA query_only = ON")
            if self.prepare is not None:
                self.prepare(con)
        except BaseException:
            con.close()
            raise
        return con

    def _opened(self) -> sqlite3.Connection:
        name = self._name
        exists = os.path.exists(name)
        if not os.access(os.path.dirname(name), os.W_OK) or (exists and not os.access(name, os.W_OK)):
            return self._connect("mode=ro&immutable=1")
        with _OPEN_LOCK:
            wal, journal = (os.path.exists(name + end) for end in ("-wal", "-journal"))
            if journal and not wal and in_wal_mode(name):
                # A stray -journal beside a WAL database: a writable connection would delete it and
                # mode=ro would create a -wal it cannot remove. With no -wal, the file holds every page.
                return self._connect("mode=ro&immutable=1")
            if not exists or ((wal or journal) and _OPEN.get(name, 0) == 0):
                return self._connect("mode=ro", factory=_mode_ro_class(_connection_class(self.dbapi)))
            con = self._connect("mode=rw", factory=_counted_class(_connection_class(self.dbapi)))
            con._owner = self  # type: ignore[attr-defined]
            _OPEN[name] = _OPEN.get(name, 0) + 1
        return con

    def _connect(self, mode: str, factory: Any = None) -> sqlite3.Connection:
        con: sqlite3.Connection = self.dbapi.connect(
            sqlite_uri(self._name, mode, real=True), uri=True, timeout=self.timeout, check_same_thread=False,
            factory=factory or _connection_class(self.dbapi),
        )
        return con

    def closed(self) -> None:
        with _OPEN_LOCK:
            left = _OPEN.get(self._name, 0) - 1
            if left > 0:
                _OPEN[self._name] = left
            else:
                _OPEN.pop(self._name, None)


def escape_like(value: str) -> str:
    """value matched as it is by LIKE ... ESCAPE '\\' (on SQLite and PostgreSQL alike)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def placeholder(engine: Any) -> str:
    """The engine's driver's parameter placeholder, for SQL run on its DB-API cursor."""
    return "?" if engine.dialect.paramstyle == "qmark" else "%s"


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at path: another file there (a replaced one) has another."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def in_wal_mode(path: Path | str) -> bool:
    """Whether the file's header says WAL (file format version 2 at offsets 18 and 19)."""
    header = database_head(os.fspath(path), 20) or b""
    return header[:16] == SQLITE_MAGIC and header[18:20] == b"\x02\x02"


def sees_writes_and_never_checkpoints(con: object) -> bool:
    """Whether con is a mode=ro connection (not immutable) of _ReadOnlyConnections: it reads
    what other connections commit, never writes, and its close folds no -wal into the file."""
    return getattr(con, "_mode_ro", False)


def _undecodable(exc: UnicodeDecodeError) -> sqlite3.DatabaseError:
    """SQLite's message as the error it is: one that names an object of a damaged schema can hold
    bytes that are not UTF-8, which Python's sqlite3 fails to decode (a UnicodeDecodeError, not a
    sqlite3.Error, out of any statement: every reader's except would miss it)."""
    raw = exc.object if isinstance(exc.object, bytes | bytearray) else str(exc.object).encode()
    return sqlite3.DatabaseError(bytes(raw).decode("utf-8", "backslashreplace"))


class DecodedConnection(sqlite3.Connection):
    """A connection whose statements raise SQLite's errors as sqlite3.DatabaseError whatever bytes
    their message holds (see _undecodable): every connection Mnemoscope makes with the sqlite3
    module, so that a store's damaged schema is a sqlite3.Error like any other. (Its execute*
    methods, which every reader calls; a cursor of its own would outlive the connection's close,
    whose last one folds a -wal into the file: cursors stay sqlite3's.)"""

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        try:
            return super().execute(sql, parameters)
        except UnicodeDecodeError as exc:
            raise _undecodable(exc) from None

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        try:
            return super().executemany(sql, parameters)
        except UnicodeDecodeError as exc:
            raise _undecodable(exc) from None

    def executescript(self, sql_script: str, /) -> Any:
        try:
            return super().executescript(sql_script)
        except UnicodeDecodeError as exc:
            raise _undecodable(exc) from None


def _connection_class(dbapi: Any) -> type:
    return DecodedConnection if dbapi is sqlite3 else dbapi.Connection


@functools.lru_cache(maxsize=8)
def _mode_ro_class(base: type) -> type:
    return type("ModeRo", (base,), {"_mode_ro": True})


@functools.lru_cache(maxsize=8)
def _counted_class(base: type) -> type:
    """A subclass of a DB-API Connection class whose connections tell their _owner when they close."""

    class Counted(base):
        _counted = True
        _owner: _ReadOnlyConnections | None = None

        def close(self) -> None:
            if self._counted:
                self._counted = False
                super().close()
                if self._owner is not None:
                    self._owner.closed()

        def __del__(self) -> None:  # dropped unclosed: it no longer counts
            if self._counted:
                self._counted = False
                if self._owner is not None:
                    self._owner.closed()

    return Counted




@contextlib.contextmanager
def checkpoint_held_off(path: Path) -> Iterator[None]:
    """Close connections to path in the block without folding another program's -wal into it.

    When the last connection to a WAL database closes, SQLite checkpoints the -wal into the
    file and deletes it. A store that wrote nothing (a failed or refused write) should leave
    the files as the agent left them, so a read-only connection holds the file open across the
    block (in WAL mode any open connection keeps the others' closes from checkpointing) and
    closes last: a read-only connection never checkpoints."""
    guard: sqlite3.Connection | None = None
    try:
        guard = sqlite3.connect(sqlite_uri(path, "mode=ro"), uri=True, timeout=0, check_same_thread=False)
        guard.execute("PRAGMA schema_version").fetchall()  # begins its hold on the file (a read of page 1, no schema parse)
    except sqlite3.Error:  # nothing to hold: not a WAL database, or unreadable; closes change nothing then
        if guard is not None:
            guard.close()
        guard = None
    try:
        yield
    finally:
        if guard is not None:
            guard.close()


def read_only_connections(path: Path | str, timeout: float = BUSY_TIMEOUT) -> Callable[[], sqlite3.Connection]:
    """What makes read-only connections to path, one per call (see _ReadOnlyConnections)."""
    return _ReadOnlyConnections(path, timeout)


def read_only_connection(
    path: Path | str, timeout: float = BUSY_TIMEOUT, *, dbapi: Any = sqlite3, prepare: Callable[[Any], None] | None = None,
    real: bool = False,
) -> sqlite3.Connection:
    """One connection that writes no byte of the database (see _ReadOnlyConnections); dbapi and
    prepare: another DB-API module's connection, set up by prepare (an extension loaded). real:
    path is already a real path (a symlink resolved)."""
    return _ReadOnlyConnections(path, timeout, dbapi=dbapi, prepare=prepare, real=real)()


@contextlib.contextmanager
def writing(
    path: Path, *, dbapi: Any = sqlite3, prepare: Callable[[Any], None] | None = None
) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken before reading (BEGIN IMMEDIATE) so that a conflict check
    and the write see the same database; rows as dbapi.Row, SQLite's errors as StoreError.
    dbapi and prepare as for read_only_connection."""
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,) if dbapi is sqlite3 else (sqlite3.Error, dbapi.Error)
    try:
        con = dbapi.connect(os.path.realpath(path), timeout=BUSY_TIMEOUT, isolation_level=None,
                           factory=_connection_class(dbapi))
    except errors as exc:
        raise sqlite_error(path, exc) from None
    try:
        if prepare is not None:
            prepare(con)
        con.row_factory = dbapi.Row
        con.execute("PRAGMA secure_delete = ON")  # removed values are zeroed in the file (see _set_up)
        con.execute("BEGIN IMMEDIATE")
        yield con
        con.execute("COMMIT")
    except BaseException as exc:
        if con.in_transaction:
            con.execute("ROLLBACK")
        if isinstance(exc, errors):
            raise sqlite_error(path, exc) from None
        raise
    finally:
        con.close()


def read_only_rows(path: Path, sql: str, timeout: float = BUSY_TIMEOUT) -> list[tuple]:
    """Rows of one query on a SQLite file opened read-only: no byte of it is written.
    Raises sqlite3.Error for the caller to word."""
    con = read_only_connection(path, timeout)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


Schema = dict[str, tuple[str, frozenset[str]]]  # table or view name -> (type, column names)
_SCHEMAS: dict[tuple[Any, ...], Schema] = {}
SCHEMAS_KEPT = 256  # a home of a few hundred stores discovered again reads none twice


def schema_state(path: Path | str, *, real: bool = False) -> tuple[Any, ...] | None:
    """What tells that a SQLite file still holds the same schema: device, inode, the header's
    fixed fields (magic, page size, versions), the schema cookie SQLite bumps on every schema
    change and a hash of page 1 past its header. While a -wal holds frames (the newest page 1 may
    be there) the cookie is SQLite's, read through a connection that waits for no lock, or
    file_state when none can read it or the file's own header is not a database's. A write of
    rows leaves it as it was. real: path is already a real path."""
    name = os.fspath(path) if real else os.path.realpath(path)
    state = _page_one_state(name)
    if state is not _WAL_FRAMES:
        return state
    if not _is_sqlite_file(name):  # (no connection: SQLite deletes the -wal of a file of 0 bytes, even mode=ro)
        return file_state(name, real=True)
    try:
        with contextlib.closing(read_only_connection(name, 0, real=True)) as con:
            return _cookie_state(con, name) or file_state(name, real=True)
    except sqlite3.Error:
        return file_state(name, real=True)


_WAL_FRAMES = ("a -wal with frames",)


def _page_one_state(name: str) -> tuple[Any, ...] | None:
    """schema_state as the file itself tells it; _WAL_FRAMES when its -wal holds frames; None
    when nothing is there."""
    try:
        if os.stat(name + "-wal").st_size:
            return _WAL_FRAMES
    except OSError:
        pass
    try:
        st = os.stat(name)
    except OSError:
        return None
    return _file_page_one(name, st)


def _file_page_one(name: str, st: os.stat_result) -> tuple[Any, ...] | None:
    """The file's identity, its header's fixed fields and schema cookie, and a hash of the rest
    of its page 1, as the file itself holds them (a -wal may hold a newer page 1)."""
    header = database_head(name, 100, st)  # never open()/close(): see sqlite_heads
    if header is None or len(header) < 100:
        return file_state(name, real=True)
    size = int.from_bytes(header[16:18], "big")
    page_one = database_head(name, 65536 if size == 1 else size, st)
    if page_one is None:
        return None
    return ("schema", st.st_dev, st.st_ino, header[:24], header[40:48], hashlib.sha1(page_one[100:]).digest())


def peek_schema(path: Path, con: sqlite3.Connection | None = None, *, real_path: str | None = None) -> Schema:
    """The tables and views of a SQLite file and their columns, read without writing a byte and
    waiting at most PROBE_TIMEOUT for another program's lock. Remembered as long as the file
    keeps its identity, its schema cookie and the rest of page 1 (where the schema table starts):
    a write of rows does not make the next open read the schema again. While a -wal holds frames
    (the newest page 1 may be in it) SQLite itself tells the cookie, as it does to decide whether
    a connection's parsed schema still holds: one PRAGMA, no schema parse. Raises LockedError when it stays
    locked, sqlite3.Error when it is no database. con: a read-only connection to the file the
    caller reads more with (the schema is parsed once for both). real_path: path's real path,
    when the caller knows it."""
    real = real_path or os.path.realpath(path)
    key = _page_one_state(real)
    kept = _SCHEMAS.get(key) if key is not None else None
    if kept is not None:
        return kept
    try:
        with contextlib.nullcontext(con) if con is not None else contextlib.closing(
                read_only_connection(path, PROBE_TIMEOUT)) as con:
            if key is _WAL_FRAMES:
                key = _cookie_state(con, real)
                kept = _SCHEMAS.get(key) if key is not None else None
                if kept is not None:
                    return kept
            names = con.execute("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'view')").fetchall()
            schema: Schema = {}
            for name, kind in names:
                try:
                    columns = frozenset(r[1] for r in con.execute(f'PRAGMA table_info("{name}")'))
                except sqlite3.Error:  # a virtual table whose module is not loaded
                    columns = frozenset()
                schema[name] = (kind, columns)
    except sqlite3.OperationalError as exc:
        error = sqlite_error(path, exc)
        if isinstance(error, LockedError):
            raise error from None
        raise
    if key is not None:  # (None: nothing there, or replaced as it was read)
        if len(_SCHEMAS) >= SCHEMAS_KEPT:
            with contextlib.suppress(StopIteration, KeyError):  # (another thread may have taken it)
                del _SCHEMAS[next(iter(_SCHEMAS))]
        _SCHEMAS[key] = schema
    return schema


def _cookie_state(con: sqlite3.Connection, real: str) -> tuple[Any, ...] | None:
    """What con's schema is: the schema cookie con reads (from the -wal when page 1 is there),
    as SQLite itself tells whether a connection's parsed schema still holds, with the file's own
    page 1 (_file_page_one: another database copied over the file, inode kept, changes it even
    where the cookie is the same); None when the file changed identity meanwhile."""
    before = os.stat(real)
    (cookie,) = con.execute("PRAGMA schema_version").fetchone()
    own = _file_page_one(real, before)
    after = os.stat(real)
    if (before.st_dev, before.st_ino) != (after.st_dev, after.st_ino) or own is None:
        return None
    return ("cookie", cookie, *own)


class SqliteConnector:
    """New connections to one SQLite file for reading, set up as an engine's are (autocommit,
    a busy timeout, ln and pow), held by a reader: a read-only open that only reads needs
    no engine. read_only: connections that write no byte (see _ReadOnlyConnections); else
    query-only connections to a file this process writes through its engine."""

    def __init__(self, path: Path, *, read_only: bool = False, real_path: str | None = None) -> None:
        self.real_path = real_path or os.path.realpath(path)  # as SQLite names the file's -wal
        # An engine made later on the same read-only file takes its connections from opener,
        # so that both count the same open connections.
        self.opener: Callable[[], sqlite3.Connection] = (
            _ReadOnlyConnections(self.real_path, BUSY_TIMEOUT, real=True) if read_only
            else functools.partial(_query_only_connection, self.real_path)
        )

    def __call__(self) -> sqlite3.Connection:
        return self.prepared(self.opener())

    @staticmethod
    def prepared(con: sqlite3.Connection, *, busy_timeout: bool = False) -> sqlite3.Connection:
        """con set up as this connector's connections are (closed if that fails); busy_timeout:
        con is one of the same kind made elsewhere, with another busy timeout."""
        try:
            con.isolation_level = None
            if busy_timeout:
                con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
            ensure_math_functions(con)
        except BaseException:
            con.close()
            raise
        return con


def _query_only_connection(path: Path | str) -> sqlite3.Connection:
    """A connection for reading a database this process may write: it refuses writes itself
    (writes go through the engine, in a transaction with a conflict check)."""
    con = sqlite3.connect(path, timeout=BUSY_TIMEOUT, check_same_thread=False, factory=DecodedConnection)
    con.execute("PRAGMA query_only = ON")
    return con


_BUILT_IN_MATH: list[bool] = []  # whether this process's SQLite has ln and pow, once known


def ensure_math_functions(dbapi_conn: sqlite3.Connection) -> None:
    if not _BUILT_IN_MATH:
        try:
            dbapi_conn.execute("SELECT ln(1.0), pow(2.0, 2.0)")
            _BUILT_IN_MATH.append(True)
        except sqlite3.OperationalError:
            _BUILT_IN_MATH.append(False)
    if not _BUILT_IN_MATH[0]:
        dbapi_conn.create_function("ln", 1, math.log, deterministic=True)
        dbapi_conn.create_function("pow", 2, math.pow, deterministic=True)


@contextlib.contextmanager
def friendly_errors(path: Path) -> Iterator[None]:
    """Re-raise SQLite's environment errors as one readable StoreError."""
    try:
        yield
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from exc
    except UnicodeDecodeError:  # the driver decodes TEXT as UTF-8: a corrupt page gives garbage
        raise UnreadableStoreError(
            f"{Path(path).name} holds text that is not UTF-8 (a corrupt page?); it cannot be read."
        ) from None
    except Exception as exc:
        if not is_database_error(exc):
            raise
        raise sqlite_error(path, getattr(exc, "orig", None) or exc) from exc


def is_database_error(exc: BaseException) -> bool:
    """Whether exc is the database's own error: sqlite3's, or one SQLAlchemy wrapped (a test's
    own engine); SQLAlchemy is not imported to ask."""
    if isinstance(exc, sqlite3.Error):
        return True
    sqlalchemy_errors = sys.modules.get("sqlalchemy.exc")
    return sqlalchemy_errors is not None and isinstance(exc, sqlalchemy_errors.DBAPIError)


def sqlite_error(path: Path, exc: BaseException) -> StoreError:
    """One sentence for a SQLite error on path. Every one of them is about that file, so the
    command line exits 2 (unusable input) for all but a full disk."""
    message = str(exc).lower()
    code = getattr(exc, "sqlite_errorname", "")
    name = Path(path).name
    if code == "SQLITE_READONLY_ROLLBACK":
        return UnreadableStoreError(
            f"{name} holds a write another program never finished (a hot {name}-journal), which only "
            "a writer may roll back: open the store for writing once (any curation command does)."
        )
    if "locked" in message or "busy" in message:
        held = holders(Path(path))
        by = f" ({', '.join(held)})" if held else ""
        return LockedError(f"{name} is locked by another program{by}; try again when it is idle.")
    if "not a database" in message or "malformed" in message or "file is encrypted" in message:
        return UnreadableStoreError(f"{name} is not a readable SQLite database (corrupt or truncated).")
    if "disk" in message and "full" in message:
        return StoreError(f"Cannot write {name}: {exc}.")
    if "readonly" in message or "read-only" in message:
        return StoreFileError(f"{name} is read-only here: {exc}.")
    if "no such table" in message or "no such column" in message:
        return UnreadableStoreError(f"{name} does not have the expected tables ({exc}).")
    if "unable to open" in message:
        return UnreadableStoreError(f"Cannot open {name}: {exc}.")
    return StoreFileError(f"SQLite error on {name}: {exc}.")


def holders(path: Path) -> list[str]:
    """The other programs that have path (or its -wal / -journal) open, as "name pid N", where
    the OS tells (Linux /proc; only processes this user may inspect). Slow-ish: for errors only."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    try:
        wanted = {os.path.realpath(path) + end for end in ("", "-wal", "-journal")}
    except OSError:
        return []
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if any(os.readlink(fd) in wanted for fd in (entry / "fd").iterdir()):
                name = (entry / "comm").read_text().strip() or "?"
                found.append(f"{name} pid {entry.name}")
        except OSError:  # gone meanwhile, or not ours to look at
            continue
        if len(found) == 3:
            break
    return found
