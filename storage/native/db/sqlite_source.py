"""The native SQLite store: ``memory.db`` (sessions, turns, scratchpad, memories,
entities, relations, audit) through SQLAlchemy Core."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from ...errors import ConflictError, StoreFileError, UnreadableStoreError
from ...journal.log import PENDING
from ...model import Memory
from ...query import SMALLEST_SALIENCE, MemoryQuery
from ...source import Change, Snapshot, same_record
from ...sqlite_engine import AnyConnection as Connection
from ...sqlite_engine import (
    SqliteEngine,
    empty_wal,
    has_changed_rows,
    rehearsal,
    sqlite_engine,
    write_transaction,
)
from ...sqlite_files import (
    PROBE_TIMEOUT,
    FileLook,
    Schema,
    SqliteConnector,
    checkpoint_held_off,
    file_state,
    files_token,
    friendly_errors,
    in_wal_mode,
    peek_schema,
    read_only_connection,
    read_only_rows,
    sees_writes_and_never_checkpoints,
    sqlite_error,
)
from ...timeutil import to_iso, utcnow
from . import fts, fts_search, schema
from .fts import FTS_PREFIX
from .intact import check_intact, file_key, is_remembered, remember_intact
from .positions import Positions
from .readers import HeldReaders
from .rows import DB_NAME, ORDER_COLUMNS
from .stored_as_bound import Kept, StoredAsBound
from .tables import NativeDb


class SqliteSource(NativeDb):
    """The native memory.db of a workspace: its reads run on held sqlite3 connections (see
    reading), its writes through SQLAlchemy."""

    def __init__(self, db_path: Path, *, read_only: bool, engine: SqliteEngine | None = None,
                 schema_version: int | None = None, found_wal: bool = False,
                 not_null: frozenset[str] | None = None, real_path: str | None = None,
                 intact: bool | tuple[str, list[object]] | None = False,
                 reader: tuple[sqlite3.Connection, tuple[int, int]] | None = None,
                 settled: tuple[int, ...] | None = None, finished: tuple[int, ...] | None = None) -> None:
        """engine: the writable engine an open made (and migrated with); a read-only source
        makes one only when something asks for it (the journal): its reads need none.
        found_wal: whether another program's -wal was there before the engine opened the file.
        not_null: the memories columns declared NOT NULL, when the open has read them (a
        read-only open then connects at its first read). real_path: db_path's real path.
        intact: whether the file is known intact (checked, remembered, or made here), or its
        state at the open (intact.file_key), looked up in the remembered verdicts at the first
        write that asks (reading them costs an open a third of its time). reader: a connection
        the open read the schema with, held as this thread's reading connection (a new one
        would parse the schema again), and the file's (device, inode) as the open saw it before
        connecting (a file replaced since is then not taken for the one it reads). settled: the
        file's state at the open when no write to it is recent enough to share its clock tick
        (_settled_state), under which this process remembers finding no unfinished step.
        finished: the file's state (an empty -wal left out) when the open found no unfinished
        step in its journal; its answer stands while the file is in that state."""
        self.db_path = db_path if isinstance(db_path, Path) else Path(db_path)
        self._intact = intact
        self._settled = settled
        self._finished_at_open = finished
        self._found_wal = found_wal
        self.root = self.db_path.parent
        self._connect = SqliteConnector(self.db_path, read_only=read_only, real_path=real_path)
        self._read_only = read_only
        self._engine = engine
        self._engine_lock = threading.Lock()
        self._readers = HeldReaders(self._connect, self.db_path)
        try:
            if reader is not None:
                self._readers.adopt(self._connect.prepared(reader[0], busy_timeout=True), reader[1])
            if schema_version is None:
                with friendly_errors(self.db_path), self.engine.connect() as conn:
                    schema_version = schema.read_version(conn)
            self.schema_version = schema_version
            if not_null is None:
                with self.reading() as dbapi:
                    not_null = frozenset(row[1] for row in self._fetch(dbapi, "PRAGMA table_info(memories)")[1] if row[3])
        except BaseException:
            self.close()  # a connection left open would keep the -wal it made after we fail
            raise
        self._nullable_orders = {order for order, column in ORDER_COLUMNS.items() if column not in not_null}
        self._salience_now_columns_not_null = {"salience", "last_accessed", "access_count"} <= not_null
        self._positions = Positions(self.change_token)
        self._stored_as_bound = StoredAsBound()

    @property
    def engine(self) -> SqliteEngine:
        """The SQLAlchemy engine for writes and the journal, made on first use. Its first
        connection switches a rollback-journal file to WAL and rolls a hot journal back: writes,
        so that a file not in WAL mode already is checked intact first (ensure_intact)."""
        if self._engine is None:
            if not self._read_only and not _connects_without_writing(self.db_path):
                self.ensure_intact()
            with self._engine_lock:
                if self._engine is None:
                    self._engine = (sqlite_engine(self.db_path, read_only=True, creator=self._connect.opener)
                                    if self._read_only else sqlite_engine(self.db_path, spare=self._reader_for_writes))
        return self._engine

    def _reader_for_writes(self, identity: object) -> sqlite3.Connection | None:
        """This thread's reading connection, given to the write engine when no read is using it:
        the engine's first connection then parses no schema (a quarter of a millisecond at every
        `rm` and `undo`). A writable source reads on read-write connections that refuse writes
        (query_only) until then; the next read connects again."""
        dbapi = self._readers.hand_over(identity, usable=lambda con: not sees_writes_and_never_checkpoints(con))
        if dbapi is not None:
            try:
                dbapi.execute("PRAGMA query_only = OFF")
            except sqlite3.Error:  # the engine connects anew
                dbapi.close()
                return None
        return dbapi

    # -- opening -------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, *, create: bool = False, read_only: bool = False) -> SqliteSource:
        """Every open reads the header and the schema only. A writable open also finishes a
        killed writer's rollback (checked on a copy first), compiles every write the schema gets,
        and reads every page (quick_check) before a migration, or later before the first write
        that needs it (ensure_intact; see intact.py for what is checked when); the write engine
        is made at the first write of a file already at this schema version: a writable open
        costs about what a read-only one does."""
        if os.path.isdir(path):
            name = os.path.join(path, DB_NAME)
            db_path = Path(name)
        else:  # (a Path taken as it is: parsing one again costs a tenth of an open's Python)
            name = os.fspath(path)
            db_path = path if isinstance(path, Path) else Path(name)
        look = FileLook.at(real := os.path.realpath(name))
        if look is None:
            if not create:
                raise UnreadableStoreError(f"No {DB_NAME} in {db_path.parent}.")
            db_path.parent.mkdir(parents=True, exist_ok=True)
        elif not os.access(name, os.R_OK):
            raise StoreFileError(f"Cannot read {db_path}: permission denied.")
        elif not read_only and not look.is_sqlite:  # (a read-only open: in _peek_tables)
            raise _not_sqlite(db_path)
        stored: object = None
        not_null: frozenset[str] | None = None
        peeked_on: sqlite3.Connection | None = None  # the peek's connection, kept as the first reader
        try:
            if look is not None:
                # Refused here, before an engine switches the file to WAL, migrates it or writes to it.
                if not read_only:
                    _check_inside(db_path, real)
                    _check_writable(name)
                    if _finish_interrupted_write(db_path):  # (it may have rolled back, or waited for a lock)
                        look = FileLook.at(real) or look
                opened_on = (look.stat.st_dev, look.stat.st_ino)
                (found, stored, not_null), read, peeked_on, finished = _peek_tables(db_path, look, read_only=read_only)
                if read and not read_only:  # (it may have waited for another program's lock: the state now)
                    peeked, again = look, FileLook.at(real) or look
                    # (without the empty -wal that the peek's connection, kept open, made on a file that had none)
                    look = again.without_empty_wal() if peeked_on is not None and look.wal is None else again
                    if finished and (settled := _settled_state(look)) is not None and settled == _settled_state(peeked):
                        _remember_finished(settled)  # (nothing written while the peek read the journal)
                if not found and not create:
                    raise UnreadableStoreError(f"{db_path} is an empty SQLite database, not a Mnemoscope memory.db.")
            reader = None if peeked_on is None else (peeked_on, opened_on)
            if read_only:
                _check_read_only_version(db_path, stored)
                return cls(db_path, read_only=True, schema_version=schema.SCHEMA_VERSION, not_null=not_null,
                           real_path=real, reader=reader, finished=_state_if(finished, look))
            if look is not None and schema.version_of(stored) == schema.SCHEMA_VERSION:  # nothing to migrate: the engine waits
                return cls(db_path, read_only=False, schema_version=schema.SCHEMA_VERSION, found_wal=look.wal is not None,
                           not_null=not_null, real_path=real, intact=file_key(look), reader=reader,
                           settled=_settled_state(look), finished=_state_if(finished, look))
        except BaseException:
            if peeked_on is not None:
                peeked_on.close()
            raise
        if peeked_on is not None:
            peeked_on.close()
        found_wal = os.path.exists(real + "-wal")  # named after the real file
        exists = look is not None
        if exists and found:  # a migration writes: checked first
            check_intact(db_path)
        engine = sqlite_engine(db_path)
        try:
            with friendly_errors(db_path):
                with engine.begin() as conn:
                    schema.migrate(conn)
        except BaseException:
            with checkpoint_held_off(db_path) if found_wal else contextlib.nullcontext():
                engine.dispose()
            raise
        return cls(db_path, read_only=False, engine=engine, found_wal=found_wal, intact=True)

    def ensure_intact(self) -> None:
        """Before a write that could leave something behind if it failed half-way (a step's
        intent in the journal, a write outside one transaction): refuse a damaged file (see
        intact.py), reading it whole once unless it is remembered intact."""
        if not self._read_only and not self._known_intact():
            check_intact(self.db_path)
            self._intact = True

    def without_unfinished_steps(self) -> bool:
        """Whether this process found no unfinished step in the journal of this file in the state
        the open saw: every open asks (MemoryStore), and the question costs a new connection its
        schema parse, most of an open's time, when the answer cannot have changed."""
        at_open, self._finished_at_open = self._finished_at_open, None  # (the open's answer, asked once)
        now = FileLook.at(self._connect.real_path)
        if now is None:
            return False
        if at_open is not None and now.without_empty_wal().state == at_open:
            return True
        settled = _settled_state(now)  # (not the open's: a long-lived store asks about the file as it is now)
        return settled is not None and settled in _FINISHED

    def found_no_unfinished_steps(self) -> None:
        """Remember that the journal, read after the open's look, held no unfinished step: when
        the file is still in the state that look saw (nothing written between them)."""
        if self._settled is None:
            return
        now = FileLook.at(self._connect.real_path)
        if now is not None and _settled_state(now) == self._settled:
            _remember_finished(self._settled)

    def _known_intact(self) -> bool:
        if not isinstance(self._intact, bool):
            self._intact = is_remembered(self._intact)
        return self._intact

    def close(self) -> None:
        # Another program's -wal is folded into memory.db only by a source that wrote rows
        # itself: a refused or failed write leaves every file as it found them (a source that
        # made no connection has none to close).
        wrote = self._engine is not None and has_changed_rows(self._engine)
        hold_off = self._found_wal and not wrote and (
            self._engine is not None or not all(map(sees_writes_and_never_checkpoints, self._readers.connections())))
        with checkpoint_held_off(self.db_path) if hold_off else contextlib.nullcontext():
            self._readers.close()
            if self._engine is not None:
                self._engine.dispose()
        if wrote and self._known_intact():  # our own writes to a file known intact (intact.py)
            remember_intact(self.db_path)

    def describe(self) -> dict[str, Any]:
        return {"format": self.format, "label": self.label, "path": str(self.root)}

    def change_token(self) -> str:
        return "sqlite:" + files_token(self._connect.real_path, real=True)

    def read_state(self) -> object:
        """memory.db's and its -wal's identity, mtime, size and header counters (file_state): a
        commit appends to the -wal or, after a checkpoint, starts it over with new salts."""
        return file_state(self._connect.real_path, real=True)

    # -- reading memories ----------------------------------------------------

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """This thread's DB-API connection for the read paths, which render their SQL
        themselves: SQLAlchemy's execution layer would add half the query's time again to a
        page, and a checkout from the pool a fifth."""
        with friendly_errors(self.db_path), self._readers.reading() as dbapi:
            yield dbapi

    def errors(self) -> contextlib.AbstractContextManager[None]:
        return friendly_errors(self.db_path)

    def write_transaction(self) -> contextlib.AbstractContextManager[Connection]:
        self.ensure_intact()
        return write_transaction(self.engine)

    def atomic_transaction(self) -> contextlib.AbstractContextManager[Connection]:
        """A curation step written whole in one transaction with its journal entry (write_records)
        is not checked first: SQLite reports SQLITE_CORRUPT on a damaged page the step reads or
        writes (cell_size_check on), and the transaction then rolls back, its entry with it."""
        return write_transaction(self.engine, after_commit=self._remember_written)

    def _commits_seen(self, conn: Connection) -> object:
        # what PRAGMA data_version counts: other connections' commits (never this one's own)
        dbapi = conn.connection.dbapi_connection
        assert dbapi is not None
        return dbapi.execute("PRAGMA data_version").fetchone()[0]

    def _remember_written(self, conn: Connection) -> None:
        """After a step's commit: the rows it wrote, with the state the file is in, where no other
        connection committed since the step's last statement (the state is read before that is
        asked, so it holds this step's commit and nothing after it)."""
        writing, self._writing, self.written_as = self._writing, None, None
        if writing is None:
            return
        state = self.read_state()
        if state is not None and self._commits_seen(conn) == writing[0]:
            self.written_as = (state, writing[1])

    def rehearsal(self) -> contextlib.AbstractContextManager[Connection]:
        self.ensure_intact()
        return rehearsal(self.engine)

    # An FTS5 index entry is a record too (fts:<rowid>), so that a consistency repair of the
    # index is a curation step like any other (see fts.py).

    def read_record(self, record_id: str) -> Snapshot | None:
        if record_id.startswith(FTS_PREFIX):
            with self.errors(), self.engine.connect() as conn:
                return fts.read_entry(conn, fts.fts_rowid(record_id))
        return super().read_record(record_id)

    def _is_memory_record(self, record_id: str) -> bool:
        return not record_id.startswith(FTS_PREFIX) and super()._is_memory_record(record_id)

    def _kept_types(self, dbapi: Any) -> Kept | None:
        return self._stored_as_bound.kept(dbapi)

    def _write_row(self, conn: Connection, record_id: str, expected: Snapshot | None,
                   new: Snapshot | None) -> Snapshot | None:
        if not record_id.startswith(FTS_PREFIX):
            return super()._write_row(conn, record_id, expected, new)
        rowid = fts.fts_rowid(record_id)
        current = fts.read_entry(conn, rowid)
        if not same_record(current, expected):
            raise ConflictError(f"{record_id} changed since it was read; nothing was written. Check again.")
        return fts.write_entry(conn, rowid, current, new)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        super().prepare_write([c for c in changes if not c.record.startswith(FTS_PREFIX)])

    def forget_purged(self, removed: Sequence[Change]) -> list[str]:
        """After a purge removed rows: the full-text index merged into one segment, so that none
        keeps their tokens, and the -wal emptied into memory.db, so that no page written before
        stays there (the rows' pages were zeroed as they were freed: secure_delete)."""
        with self.errors(), self.write_transaction() as conn:
            if fts.has_fts(conn):
                fts.optimize(conn)
        return empty_wal(self.engine, self.db_path)

    def _not_found(self) -> str:
        return str(self.db_path)

    def time_bin_sql(self, bin_format: str, column: str) -> tuple[str, list[Any]]:
        return f"strftime({self._mark}, {column})", [bin_format]

    def effective_salience(self, rate: float, boost: float, at: datetime) -> Any:
        return effective_salience_sql(rate, boost, at)

    def salience_bucket(self, effective: Any, bins: int) -> Any:
        from sqlalchemy import Integer, func

        return func.min(func.cast(effective * bins, Integer), bins - 1)

    def effective_salience_key_sql(self, ln_rate: float, boost: float) -> str:
        # julianday - 2440587.5: days since the Unix epoch, as the Python-side key counts them
        return (f"(ln(max(salience, {SMALLEST_SALIENCE!r})) + (julianday(last_accessed) - 2440587.5) * {-ln_rate!r}"
                f" + ln(1.0 + {boost!r} * ln(1.0 + max(access_count, 0))))")

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        if not query.wants_kind(self.kind):
            return []
        if not fts_search.WORD.search(text_query):
            return []
        clauses, params = self._filter(query, "m.")
        where = " AND ".join([f"memories_fts MATCH {self._mark}", *clauses])
        # rank: bm25, ordered by FTS5 itself as it reads its lists (bm25() would sort after)
        sql = (
            "SELECT m.* FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
            f"WHERE {where} ORDER BY rank LIMIT {self._mark}"
        )
        with self.reading() as dbapi:
            match = fts_search.match_expression(dbapi, text_query)
            names, rows = self._fetch(dbapi, sql, [match, *params, k])
        now = utcnow()
        return [self._memory(dict(zip(names, row, strict=True)), now) for row in rows]

    indexes_words = True  # document_frequencies reads the FTS vocabulary: no scan

    def document_frequencies(self, terms: Sequence[str], query: MemoryQuery | None = None) -> tuple[int, dict[str, int]]:
        """How many memories there are, and how many hold a word starting with each term (the
        statistics BM25 weighs terms by), read from the FTS index's vocabulary instead of a scan:
        index-wide, as search engines keep them, whatever filters the search has."""
        with self.reading() as dbapi:
            return fts_search.document_frequencies(dbapi, terms)


def _connects_without_writing(db_path: Path) -> bool:
    """Whether a writable connection leaves the file as it is: already in WAL mode (header bytes
    18 and 19 are 2), with no rollback journal beside it."""
    return in_wal_mode(db_path) and not os.path.exists(os.path.realpath(db_path) + "-journal")


def _check_read_only_version(db_path: Path, stored: object) -> None:
    """A read-only open reads only the schema version this Mnemoscope writes: it cannot
    migrate the file (the meta table holds the version stored)."""
    found = schema.version_of(stored) or 0
    if not schema.READS_FROM <= found <= schema.SCHEMA_VERSION:
        raise UnreadableStoreError(
            f"{db_path} has schema version {found}; this Mnemoscope reads version {schema.SCHEMA_VERSION}"
            + (" (open it once without read-only to upgrade it)." if found < schema.SCHEMA_VERSION else ".")
        )


def _not_sqlite(db_path: Path) -> UnreadableStoreError:
    return UnreadableStoreError(f"{db_path} is not a SQLite database (corrupt, truncated or another format).")


class _Peek(NamedTuple):
    found: Schema  # tables and views with their columns
    stored: object  # the schema version meta holds (None if none)
    not_null: frozenset[str] | None  # the memories columns declared NOT NULL (None: no such table)


def _peek_tables(
    db_path: Path, look: FileLook, *, read_only: bool,
) -> tuple[_Peek, bool, sqlite3.Connection | None, bool | None]:
    """Tables and views with their columns, the schema version meta holds and which memories
    columns are NOT NULL, read without writing a byte (no WAL switch, no migration) and waiting once for a lock, of a
    file that is a memory.db this code reads (or an empty SQLite file); raises otherwise. It is
    remembered, as peek_schema is, while the file and its -wal keep the state look saw. With
    whether the file was read (and so may have changed since look), and the connection that read
    it, for the caller to read with or close: a read-only open's, or a writable open's that
    refuses writes as its reading connections do (query_only); else None. Last, for a writable
    open whose file was read: whether its journal held no unfinished step (None: not asked)."""
    key = look.state
    if key in _PEEKED:
        return _PEEKED[key], False, None, None
    finished: bool | None = None
    if not look.is_sqlite:
        raise _not_sqlite(db_path)
    try:
        con = read_only_connection(look.real, PROBE_TIMEOUT, real=True)  # one schema parse for all
        try:
            found = peek_schema(db_path, con, real_path=look.real)
            stored = None
            if found.get("meta", ("", frozenset()))[1] >= {"key", "value"}:
                # A journal's unfinished steps asked in the same statement: every open asks them next.
                asks = "state" in found.get("audit", ("", frozenset()))[1]
                stored, pending = con.execute(_VERSION_AND_PENDING if asks else _VERSION).fetchone()
                finished = None if pending is None else not pending
            checked = _CHECKED.get(id(found))
            if checked is not None and checked.found is found and checked.stored == stored:  # a schema peek_schema kept
                not_null = checked.not_null
            else:
                not_null = (frozenset(r[1] for r in con.execute("PRAGMA table_info(memories)") if r[3])
                            if "memories" in found else None)
                _check_schema(db_path, found, stored)
                if len(_CHECKED) >= 16:
                    with contextlib.suppress(StopIteration, KeyError):  # (another thread may have taken it)
                        del _CHECKED[next(iter(_CHECKED))]
                _CHECKED[id(found)] = _Peek(found, stored, not_null)  # (found held: its id is not reused)
        except BaseException:
            con.close()
            raise
    except sqlite3.Error as exc:
        raise sqlite_error(db_path, exc) from None
    except UnicodeDecodeError:
        raise UnreadableStoreError(f"{db_path} holds names that are not UTF-8 (a corrupt page?).") from None
    if len(_PEEKED) >= 16:
        del _PEEKED[next(iter(_PEEKED))]
    _PEEKED[key] = _Peek(found, stored, not_null)
    if not read_only and not (getattr(con, "_counted", False) or sees_writes_and_never_checkpoints(con)):
        con.close()  # an immutable connection: it would not see this store's own writes
        return _PEEKED[key], True, None, finished
    return _PEEKED[key], True, con, finished


_VERSION = "SELECT (SELECT value FROM meta WHERE key = 'schema_version'), NULL"
_VERSION_AND_PENDING = (
    "SELECT (SELECT value FROM meta WHERE key = 'schema_version'), "
    f"EXISTS (SELECT 1 FROM audit WHERE state = '{PENDING}')"
)
_PEEKED: dict[tuple[int, ...], _Peek] = {}
_CHECKED: dict[int, _Peek] = {}  # by the id of a schema peek_schema returned: its NOT NULL columns, checked
_FINISHED: dict[tuple[int, ...], None] = {}  # file states in which this process found no unfinished step
_FINISHED_LOCK = threading.Lock()
SETTLED_NS = 50_000_000  # a write's time stamps come from a clock that ticks every few milliseconds
_COARSE_SETTLED_NS = 2_000_000_000  # times in whole seconds (ext3, HFS+, FAT's two): two seconds


def _remember_finished(settled: tuple[int, ...]) -> None:
    with _FINISHED_LOCK:
        _FINISHED[settled] = None
        while len(_FINISHED) > 16:
            del _FINISHED[next(iter(_FINISHED))]


def _state_if(finished: bool | None, look: FileLook | None) -> tuple[int, ...] | None:
    """The state under which an open's "no unfinished step" holds (None: it found some, or did not ask)."""
    return look.without_empty_wal().state if finished and look is not None else None


def _settled_state(look: FileLook) -> tuple[int, ...] | None:
    """look's state with its ctimes, when the file and its -wal were last changed at least
    SETTLED_NS before now: a write after the look then gives another state, even one that
    keeps the size and, in WAL mode, SQLite's change counter; else None. An empty -wal holds
    nothing and is left out (SQLite, run as root, gives it to the file's owner at every
    connection: its ctime moves)."""
    look = look.without_empty_wal()
    stats = [look.stat] if look.wal is None else [look.stat, look.wal]
    times = [t for st in stats for t in (st.st_mtime_ns, st.st_ctime_ns)]
    coarse = all(t % 1_000_000_000 == 0 for t in times)  # a file system that keeps whole seconds
    if max(times) >= time.time_ns() - (_COARSE_SETTLED_NS if coarse else SETTLED_NS):
        return None
    return (*look.state, *(st.st_ctime_ns for st in stats))


def _check_schema(db_path: Path, found: Schema, stored: object) -> None:
    """Refuse a SQLite file that is not a memory.db of a version this code reads: another
    program's database, or ours with tables replaced or columns dropped. An empty one is a
    memory.db still to be created."""
    if not found:
        return
    if "meta" not in found:
        raise UnreadableStoreError(
            f"{db_path} is a SQLite database, but not a Mnemoscope memory.db "
            f"(tables: {', '.join(sorted(found)[:6])})."
        )
    version = schema.version_of(stored)
    if version is None or version < 1:
        raise UnreadableStoreError(
            f"{db_path} is a SQLite database, but not a Mnemoscope memory.db (its meta table holds "
            f"no schema version, or {stored!r})."
        )
    if version > schema.SCHEMA_VERSION:
        raise UnreadableStoreError(
            f"{db_path} has schema version {version}; this Mnemoscope understands up to "
            f"{schema.SCHEMA_VERSION}. Upgrade Mnemoscope to open it."
        )
    problems = schema.structure_problems(found, version) if version >= schema.READS_FROM else []
    if problems:
        raise UnreadableStoreError(
            f"{db_path} is not a memory.db Mnemoscope can use: {'; '.join(problems[:3])}"
            + (f" (and {len(problems) - 3} more)." if len(problems) > 3 else ".")
        )


def _finish_interrupted_write(db_path: Path) -> bool:
    """Roll back what a killed writer left in a hot -journal, as the next writer of a database
    always does (a read-only probe cannot read past it). Tried on a copy first: a rollback that
    would leave the database damaged (a torn or corrupt journal) is refused, not made. Only
    integrity_check tells: a journal's checksums sample a few bytes of each page. Whether there
    was a -journal (the file was probed, waiting for its lock, and may have been rolled back)."""
    if not os.path.exists(os.fspath(db_path) + "-journal"):
        return False
    journal = db_path.with_name(db_path.name + "-journal")
    try:
        read_only_rows(db_path, "SELECT count(*) FROM sqlite_master", PROBE_TIMEOUT)
        return True  # not hot: nothing to roll back, and the stray file stays as it is
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "") != "SQLITE_READONLY_ROLLBACK":
            raise sqlite_error(db_path, exc) from None
    with tempfile.TemporaryDirectory(prefix="mnemoscope-rollback-") as scratch:
        trial = Path(scratch) / db_path.name
        shutil.copyfile(db_path, trial)
        shutil.copyfile(journal, trial.with_name(trial.name + "-journal"))
        try:
            verdict = _rolled_back(trial, "PRAGMA integrity_check(1)")
        except sqlite3.DatabaseError as exc:
            verdict = str(exc)
    if verdict != "ok":
        raise UnreadableStoreError(
            f"{db_path} holds a write another program never finished, and its {journal.name} cannot "
            f"undo it ({verdict}); Mnemoscope leaves both as they are."
        )
    try:
        _rolled_back(db_path, "SELECT count(*) FROM sqlite_master")
    except sqlite3.Error as exc:
        raise sqlite_error(db_path, exc) from None
    return True


def _rolled_back(db_path: Path, sql: str) -> str:
    """Open db_path for writing (SQLite rolls a hot journal back first) and run one query."""
    with contextlib.closing(sqlite3.connect(db_path, timeout=PROBE_TIMEOUT)) as con:
        return str(con.execute(sql).fetchone()[0])


def _check_writable(name: str) -> None:
    """SQLite would open a read-only file read-only, leave a -wal behind and fail at the first write."""
    if not os.access(name, os.W_OK) or not os.access(os.path.dirname(name) or ".", os.W_OK):
        raise StoreFileError(
            f"{name} cannot be written here (a read-only file or folder); nothing was written. "
            "Commands that only read still work."
        )


def _check_inside(db_path: Path, real: str) -> None:
    """A memory.db that is a symlink out of its folder (real: where it leads) is not written through."""
    if not os.path.islink(db_path):
        return
    target = Path(real)
    if not target.is_relative_to(db_path.parent.resolve()):
        raise UnreadableStoreError(
            f"{db_path} is a link to {target}, outside the store; Mnemoscope writes only inside the "
            "store (open that file's folder to change it)."
        )


def effective_salience_sql(rate: float, boost: float, at: datetime) -> Any:
    """effective salience computed by SQLite, matching SalienceModel.effective_raw."""
    from sqlalchemy import func

    m = schema.memories.c
    days = func.max(func.julianday(to_iso(at)) - func.julianday(m.last_accessed), 0.0)
    raw = m.salience * func.pow(rate, days) * (1.0 + boost * func.ln(1.0 + m.access_count))
    return func.min(raw, 1.0)
