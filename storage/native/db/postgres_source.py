"""The native store on a PostgreSQL server: the tables memory.db holds, in a database, for a team
whose agents share one memory (``postgresql+psycopg://USER@HOST/DATABASE``).

What differs from SQLite is said in PostgreSQL's own SQL: keyword search is full-text search
(``websearch_to_tsquery`` over the index schema_sql.FTS_DOCUMENT_POSTGRESQL, ranked), time bins use
``to_char``/``extract``, effective salience ``extract(epoch ...)``, and the change token is a
revision counter every committed write bumps (statement-level triggers), one cheap query to poll.
A read-only open runs every transaction read-only on the server. Errors become one readable
message that never holds the password.

psycopg is imported with this module only, never with ``mnemoscope.storage``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Float, Integer, cast, func, literal
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.types import TIMESTAMP

from ...credentials import Secret, redacted, scrubbed
from ...errors import (
    ConflictError,
    LockedError,
    ReadOnlyError,
    SecretRefusedError,
    StoreError,
    StoreFileError,
    UnreadableStoreError,
    UnsupportedError,
)
from ...journal.log import Journal
from ...model import Kind, Memory
from ...query import SMALLEST_SALIENCE, MemoryQuery
from ...source import StoreParts
from ...timeutil import to_iso, utcnow
from . import schema
from .positions import Positions
from .rows import ORDER_COLUMNS
from .schema_sql import FTS_DOCUMENT_POSTGRESQL, REVISION_TABLE
from .tables import NativeDb

CONNECT_TIMEOUT = 10  # seconds: an unreachable server is reported, not waited for
_MIGRATION_LOCK = 0x6D6E656D6F  # pg_advisory_xact_lock key: one process migrates a database at a time
_TOKEN = re.compile(r"\w+", re.UNICODE)


class PostgresSource(NativeDb):
    """The native tables in one PostgreSQL database (the schema search_path names first)."""

    label = "Mnemoscope on PostgreSQL"
    kind = Kind.POSTGRESQL
    _mark = "%s"
    _lock_rows = " FOR UPDATE"
    _among_json = "{column} IN (SELECT jsonb_array_elements_text(CAST({mark} AS jsonb)))"
    _where = "postgresql"
    _bytewise = ' COLLATE "C"'
    _degree_by_groups = True

    def __init__(self, engine: Engine, *, location: str, secret: Secret | None, read_only: bool,
                 schema_version: int, nullable: set[str]) -> None:
        self._engine = engine
        self.location = location
        self._secret = secret
        self._read_only = read_only
        self.schema_version = schema_version
        self._nullable_orders = {order for order, column in ORDER_COLUMNS.items() if column in nullable}
        self._positions = Positions(self.change_token)

    @classmethod
    def open(cls, url: str, *, location: str | None = None, read_only: bool = False,
             create: bool = False) -> PostgresSource:
        """Connect, check the schema and migrate it (create it in an empty database with create).
        Nothing is written unless the schema is created or upgraded, in one transaction."""
        location = location or redacted(url)
        password = make_url(url).password
        secret = Secret(str(password)) if password else None
        engine = postgres_engine(url, read_only=read_only)
        try:
            with postgres_errors(location, secret), engine.begin() as conn:
                version, nullable = _prepare(conn, location, read_only=read_only, create=create)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, location=location, secret=secret, read_only=read_only,
                   schema_version=version, nullable=nullable)

    @property
    def engine(self) -> Engine:
        return self._engine

    def close(self) -> None:
        self._engine.dispose()

    def describe(self) -> dict[str, Any]:
        return {"format": self.format, "label": self.label, "path": self.location}

    def _not_found(self) -> str:
        return self.location

    # -- connections and errors ----------------------------------------------------------------

    def errors(self) -> contextlib.AbstractContextManager[None]:
        return postgres_errors(self.location, self._secret)

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        with self.errors():
            pooled = self._engine.raw_connection()
            try:
                yield pooled.driver_connection
            finally:
                pooled.close()  # back to the pool, rolled back

    @contextlib.contextmanager
    def write_transaction(self) -> Iterator[Connection]:
        # A conflict check's read locks its row (SELECT ... FOR UPDATE): it cannot change before the write.
        with self._engine.begin() as conn:
            yield conn

    @contextlib.contextmanager
    def rehearsal(self) -> Iterator[Connection]:
        with self._engine.connect() as conn:
            transaction = conn.begin()
            try:
                yield conn
            finally:
                transaction.rollback()

    def change_token(self) -> str:
        """Changes with every committed write to the store's tables, by any process."""
        rows = self._query(f"SELECT value FROM {REVISION_TABLE} WHERE id = 1")
        return f"postgresql:{rows[0][0] if rows else 0}"

    # -- PostgreSQL's SQL ------------------------------------------------------------------------

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        """Memories holding any word of the text (as a prefix, as FTS5 matches on SQLite); those
        matching the whole text as a web search reads it (every word, "phrases", -exclusions)
        rank first, then by how well the words match (normalised by length, as bm25 favours short texts)."""
        if not query.wants_kind(self.kind):
            return []
        words = _TOKEN.findall(text_query)
        if not words:
            return []
        prefixes = " | ".join("'" + word.replace("'", "''") + "':*" for word in words)
        document = FTS_DOCUMENT_POSTGRESQL.replace("content", "m.content").replace("tags", "m.tags")
        clauses, params = self._filter(query, "m.")
        where = " AND ".join([f"{document} @@ (whole || anyword)", *clauses])
        sql = (
            "SELECT m.* FROM memories m, websearch_to_tsquery('simple', %s) AS whole, "
            "to_tsquery('simple', %s) AS anyword "
            f"WHERE {where} ORDER BY ts_rank({document}, whole, 1) DESC, ts_rank({document}, anyword, 1) DESC, m.id "
            "LIMIT %s"
        )
        with self.reading() as dbapi:
            names, rows = self._fetch(dbapi, sql, [text_query, prefixes, *params, k])
        now = utcnow()
        return [self._memory(dict(zip(names, row, strict=True)), now) for row in rows]

    def time_bin_sql(self, bin_format: str, column: str) -> tuple[str, list[Any]]:
        """to_char and extract pieces spelling bin_format as strftime does, in UTC; NULL for a
        value that is no ISO time (SQLite's strftime gives NULL too)."""
        moment = f"(({column})::timestamptz AT TIME ZONE 'UTC')"
        pieces: list[str] = []
        params: list[Any] = []
        for literal_text, directive in re.findall(r"([^%]*)(?:%(.))?", bin_format):
            if literal_text:
                pieces.append("CAST(%s AS text)")
                params.append(literal_text)
            if directive:
                if directive not in _DIRECTIVES:
                    raise UnsupportedError(f"Time bins cannot use %{directive} on PostgreSQL.")
                pieces.append(_DIRECTIVES[directive].format(t=moment))
        spelled = " || ".join(pieces) or "''"
        return f"CASE WHEN {column} ~ '^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}' THEN {spelled} END", params

    def effective_salience(self, rate: float, boost: float, at: datetime) -> Any:
        m = schema.memories.c
        now = cast(literal(to_iso(at)), TIMESTAMP(timezone=True))
        idle = func.extract("epoch", now - cast(m.last_accessed, TIMESTAMP(timezone=True))) / 86400.0
        days = func.greatest(cast(idle, Float), 0.0)
        raw = m.salience * func.power(rate, days) * (1.0 + boost * func.ln(1.0 + m.access_count))
        return func.least(raw, 1.0)

    def salience_bucket(self, effective: Any, bins: int) -> Any:
        return func.least(cast(func.floor(effective * bins), Integer), bins - 1)

    def effective_salience_key_sql(self, ln_rate: float, boost: float) -> str:
        days = "extract(epoch FROM CAST(last_accessed AS timestamptz)) / 86400.0"
        return (f"(ln(greatest(salience, {SMALLEST_SALIENCE!r})) + {days} * {-ln_rate!r}"
                f" + ln(1.0 + {boost!r} * ln(1.0 + greatest(access_count, 0))))")


# strftime directives the timeline uses, as PostgreSQL spells them ({t}: a timestamp in UTC).
# %W, Monday-first weeks with days before the first Monday in week 00, has no to_char pattern.
_DIRECTIVES = {
    "Y": "to_char({t}, 'YYYY')",
    "m": "to_char({t}, 'MM')",
    "d": "to_char({t}, 'DD')",
    "H": "to_char({t}, 'HH24')",
    "M": "to_char({t}, 'MI')",
    "S": "to_char({t}, 'SS')",
    "j": "to_char({t}, 'DDD')",
    "W": "lpad(((extract(doy FROM {t})::int + 7 - extract(isodow FROM {t})::int) / 7)::text, 2, '0')",
    "%": "'%%'",
}


def postgres_engine(url: str, *, read_only: bool) -> Engine:
    from sqlalchemy import create_engine

    connect_args: dict[str, Any] = {"connect_timeout": CONNECT_TIMEOUT, "application_name": "mnemoscope"}
    if read_only:  # the server refuses every write, whatever code path tries one
        connect_args["options"] = "-c default_transaction_read_only=on"
    return create_engine(url, connect_args=connect_args, pool_size=2, max_overflow=8, pool_pre_ping=True)


def _prepare(conn: Connection, location: str, *, read_only: bool, create: bool) -> tuple[int, set[str]]:
    """The schema version the database is at once ready (created or migrated if needed), and
    the memories columns that may hold NULL."""
    found = _tables(conn)
    version = schema.read_version(conn) if "meta" in found else 0
    if version == 0:
        others = sorted(name for name in found if name != "meta")
        if others:
            raise UnreadableStoreError(
                f"{location} holds tables ({', '.join(others[:6])}) but no Mnemoscope store "
                "(no schema version in a meta table); Mnemoscope creates its store only in an empty database."
            )
        if not create:
            raise UnreadableStoreError(
                f"{location} holds no Mnemoscope store (an empty database): create it there first "
                "(mnemoscope init, or open with create)."
            )
        if read_only:
            raise UnreadableStoreError(f"{location} is empty; a read-only open cannot create the store there.")
    schema.check_not_newer(version, location)
    if version != schema.SCHEMA_VERSION and not (read_only and version >= schema.READS_FROM):
        if read_only:
            raise UnreadableStoreError(
                f"{location} has schema version {version}; this Mnemoscope reads version "
                f"{schema.SCHEMA_VERSION} (open it once without read-only to upgrade it)."
            )
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})")
        schema.migrate(conn)  # reads the version again: another process may have migrated meanwhile
        found, version = _tables(conn), schema.SCHEMA_VERSION
    problems = schema.structure_problems({name: (kind, columns) for name, (kind, columns, _) in found.items()},
                                         version)
    if problems:
        raise UnreadableStoreError(
            f"{location} is not a store Mnemoscope can use: {'; '.join(problems[:3])}"
            + (f" (and {len(problems) - 3} more)." if len(problems) > 3 else ".")
        )
    return schema.SCHEMA_VERSION, found["memories"][2]


def _tables(conn: Connection) -> dict[str, tuple[str, set[str], set[str]]]:
    """Tables and views of the schema the store lives in: kind, columns, columns that may be NULL."""
    rows = conn.exec_driver_sql(
        "SELECT c.table_name, t.table_type, c.column_name, c.is_nullable FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name "
        "WHERE c.table_schema = current_schema()"
    ).all()
    found: dict[str, tuple[str, set[str], set[str]]] = {}
    for table, kind, column, nullable in rows:
        entry = found.setdefault(table, ("table" if kind == "BASE TABLE" else "view", set(), set()))
        entry[1].add(column)
        if nullable == "YES":
            entry[2].add(column)
    return found


# SQLSTATE classes and codes (PostgreSQL's appendix A) and the error each is for a person.
_REFUSED_SECRET = {"28P01", "28000"}
_CONFLICTS = {"40001", "40P01"}  # serialization failure, deadlock: another writer came first
_MISSING_DATABASE = "3D000"
_READ_ONLY = "25006"
_LOCKED = {"55P03", "57014"}  # lock not available, statement timeout
_UNREACHABLE = ("connection refused", "could not translate host name", "timeout expired", "could not connect",
                "no route to host", "network is unreachable", "server closed the connection",
                "connection is lost", "consuming input failed", "the database system is")


@contextlib.contextmanager
def postgres_errors(location: str, secret: Secret | None = None) -> Iterator[None]:
    """Re-raise the driver's errors as one readable StoreError about location, without the
    password (the message of the error alone: SQLAlchemy's adds the statement and parameters)."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        error = _driver_error(exc)
        if error is None:
            raise
        raise postgres_error(location, error, secret) from None


def _driver_error(exc: BaseException) -> BaseException | None:
    import sys

    sqlalchemy_errors = sys.modules.get("sqlalchemy.exc")
    if sqlalchemy_errors is not None and isinstance(exc, sqlalchemy_errors.DBAPIError):
        return exc.orig if exc.orig is not None else exc
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None and isinstance(exc, psycopg.Error):
        return exc
    return None


def postgres_error(location: str, exc: BaseException, secret: Secret | None = None) -> StoreError:
    code = getattr(exc, "sqlstate", None) or ""
    detail = scrubbed(" ".join(str(exc).split()), secret)
    lowered = detail.lower()
    if code in _REFUSED_SECRET or "password authentication failed" in lowered or "no password supplied" in lowered:
        return SecretRefusedError(f"{location} refused the login: wrong user name or password. Nothing was opened.")
    if code == _MISSING_DATABASE or ("database" in lowered and "does not exist" in lowered):
        return UnreadableStoreError(f"{location}: the server has no such database ({detail}).")
    if code in _CONFLICTS:
        return ConflictError(
            f"Another writer changed {location} at the same moment ({detail}); nothing was written. Try again."
        )
    if code == _READ_ONLY:
        return ReadOnlyError(f"{location} was opened read-only; nothing was written.")
    if code in _LOCKED:
        return LockedError(f"{location} is busy (a lock another session holds); try again when it is idle.")
    if code.startswith("08") or any(reason in lowered for reason in _UNREACHABLE):
        return StoreFileError(f"Cannot reach the PostgreSQL server of {location}: {detail}")
    if code.startswith("42"):
        return UnreadableStoreError(f"{location} does not have the expected tables ({detail}).")
    if code == "53100":
        return StoreError(f"Cannot write {location}: the server's disk is full.")
    return StoreFileError(f"PostgreSQL error on {location}: {detail}")


def open_postgres_store(
    url: str, *, root: Path, location: str, read_only: bool = False, create: bool = False, vectors: Any = None
) -> StoreParts:
    """The native store in the PostgreSQL database url names (password included, as the
    caller resolved it), as the parts of a store: its journal in the same database, vectors (a Chroma
    source) composed in when given. root: Mnemoscope's own folder for the store; location: what
    a person is shown (no password)."""
    from ..workspace import NativeWorkspace

    db = PostgresSource.open(url, location=location, read_only=read_only, create=create)
    try:
        journal = Journal.in_database(lambda: db.engine, Path(root), None, errors=db.errors, home=db)
        return StoreParts(
            Path(root), [NativeWorkspace(Path(root), db, vectors, None)], journal, read_only=read_only, location=location
        )
    except BaseException:
        db.close()
        raise
