"""The native store's schema (SQLAlchemy Core), on SQLite (``memory.db``) and PostgreSQL.

Versioning: the schema version lives in the ``meta`` table (key ``schema_version``) on both
databases, and is mirrored into SQLite's ``PRAGMA user_version`` so the file identifies itself
to any SQLite tool. Migrations are Alembic revisions (``migrations/versions``), one per version:
``MIGRATIONS[n]`` is what revision n+1 runs. ``migrate`` reads the version cheaply and imports
Alembic only when a database needs upgrading; a database newer than this code is refused, never
downgraded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping

from sqlalchemy import (
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    Table,
    Text,
    UniqueConstraint,
    func,
    text,
)

from ...journal import tables as journal_tables
from ...sqlite_engine import AnyConnection as Connection

SCHEMA_VERSION = 5
# The oldest version a read-only open reads as it is (the versions after it add indexes, and the
# journal's audit_changes, whose changes an older file keeps in audit and are read there).
READS_FROM = 2
# The tables a version after READS_FROM added (a file of an older version lacks them, rightly).
TABLES_ADDED_AT = {"audit_changes": 5}

metadata = MetaData()

sessions = Table(
    "sessions",
    metadata,
    Column("id", Text, primary_key=True),
    Column("channel", Text, nullable=False, server_default="_global"),
    Column("title", Text, nullable=False, server_default=""),
    Column("user_id", Text, nullable=False, server_default=""),
    Column("started_at", Text, nullable=False),
    Column("metadata", Text, nullable=False, server_default="{}"),
    Index("ix_sessions_channel", "channel"),
    Index("ix_sessions_started_at", "started_at"),
)

turns = Table(
    "turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), nullable=False),
    Column("idx", Integer, nullable=False),
    Column("role", Text, nullable=False),
    Column("content", Text, nullable=False),
    Column("timestamp", Text, nullable=False),
    UniqueConstraint("session_id", "idx", name="uq_turns_session_idx"),
    Index("ix_turns_timestamp", "timestamp"),
)

scratchpad = Table(
    "scratchpad",
    metadata,
    Column("session_id", Text, ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True),
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
)

memories = Table(
    "memories",
    metadata,
    Column("id", Text, primary_key=True),
    Column("layer", Text, nullable=False),
    Column("channel", Text, nullable=False, server_default="_global"),
    Column("content", Text, nullable=False),
    Column("created_at", Text, nullable=False),
    Column("updated_at", Text, nullable=False),
    Column("last_accessed", Text, nullable=False),
    Column("access_count", Integer, nullable=False, server_default="0"),
    Column("salience", Float, nullable=False, server_default="0.5"),
    Column("confidence", Float, nullable=False, server_default="1.0"),
    Column("conversations", Integer, nullable=False, server_default="0"),
    Column("tags", Text, nullable=False, server_default="[]"),
    Column("metadata", Text, nullable=False, server_default="{}"),
    Column("status", Text, nullable=False, server_default="active"),
    Column("promoted_from", Text),
    Column("derived_from", Text, nullable=False, server_default="[]"),
    Column("imported_from", Text),
    Column("import_key", Text, unique=True),
    # Relative path of a workspace markdown file holding a copy of this memory.
    Column("md_file", Text),
    # none: no vector copy; fresh: vector matches content; stale: content changed, not re-embedded.
    Column("vector_state", Text, nullable=False, server_default="none"),
    Index("ix_memories_filter", "status", "channel", "layer"),
    Index("ix_memories_updated", "updated_at"),
    Index("ix_memories_created", "created_at"),
    Index("ix_memories_accessed", "last_accessed"),
    Index("ix_memories_salience", "salience"),
    Index("ix_memories_channel_updated", "channel", "updated_at"),
)
_m = memories.c
# One per order a page is asked in, behind the status every page filters on and ending in id as
# the order does: a page (and a seek to the row after a known one) reads only its own rows.
PAGE_INDEXES = (
    Index("ix_memories_status_updated", _m.status, _m.updated_at, _m.id),
    Index("ix_memories_status_created", _m.status, _m.created_at, _m.id),
    Index("ix_memories_status_accessed", _m.status, _m.last_accessed, _m.id),
    Index("ix_memories_status_salience", _m.status, _m.salience, _m.id),
    Index("ix_memories_status_channel_updated", _m.status, _m.channel, _m.updated_at, _m.id),
)

entities = Table(
    "entities",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("type", Text, nullable=False, server_default="thing"),
    Column("channel", Text, nullable=False, server_default="_global"),
    Column("description", Text, nullable=False, server_default=""),
    Column("aliases", Text, nullable=False, server_default="[]"),
    Column("salience", Float, nullable=False, server_default="0.5"),
    Column("access_count", Integer, nullable=False, server_default="0"),
    Column("first_seen", Text),
    Column("last_accessed", Text),
    Index("ix_entities_name", "name"),
)
# An entity is looked up by its name in any case (`graph --center stripe`).
ENTITY_NAME_INDEX = Index("ix_entities_lower_name", func.lower(entities.c.name))

relations = Table(
    "relations",
    metadata,
    Column("id", Text, primary_key=True),
    # source/target are entity ids or memory ids (ABOUT, DERIVED_FROM, PROMOTED_FROM).
    Column("source_id", Text, nullable=False),
    Column("target_id", Text, nullable=False),
    Column("type", Text, nullable=False),
    Column("channel", Text, nullable=False, server_default="_global"),
    Column("weight", Float, nullable=False, server_default="1.0"),
    Column("created_at", Text),
    Index("ix_relations_source", "source_id"),
    Index("ix_relations_target", "target_id"),
    Index("ix_relations_type", "type"),
)


FTS_INSERT_TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS memories_fts_ai AFTER INSERT ON memories BEGIN "
    "INSERT INTO memories_fts(rowid, content, tags) VALUES (new.rowid, new.content, new.tags); END"
)
FTS_SQLITE = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5("
    "content, tags, content='memories', content_rowid='rowid', tokenize='unicode61')",
    FTS_INSERT_TRIGGER,
    "CREATE TRIGGER IF NOT EXISTS memories_fts_ad AFTER DELETE ON memories BEGIN "
    "INSERT INTO memories_fts(memories_fts, rowid, content, tags) "
    "VALUES ('delete', old.rowid, old.content, old.tags); END",
    "CREATE TRIGGER IF NOT EXISTS memories_fts_au AFTER UPDATE OF content, tags ON memories BEGIN "
    "INSERT INTO memories_fts(memories_fts, rowid, content, tags) "
    "VALUES ('delete', old.rowid, old.content, old.tags); "
    "INSERT INTO memories_fts(rowid, content, tags) VALUES (new.rowid, new.content, new.tags); END",
]


# PostgreSQL's own full-text search over what FTS5 indexes on SQLite: 'simple' lowercases and
# splits words as unicode61 does, without stemming. Queries must spell the expression as here.
FTS_DOCUMENT_POSTGRESQL = "to_tsvector('simple'::regconfig, content || ' ' || tags)"
# The change token on PostgreSQL: one counter, bumped by a statement-level trigger on every table
# in the writing transaction, so it changes exactly when another session's commit becomes visible.
REVISION_TABLE = "store_revision"
_POSTGRESQL_V1 = [
    f"CREATE INDEX IF NOT EXISTS ix_memories_fts ON memories USING gin ({FTS_DOCUMENT_POSTGRESQL})",
    f"CREATE TABLE IF NOT EXISTS {REVISION_TABLE} (id integer PRIMARY KEY CHECK (id = 1), value bigint NOT NULL)",
    f"INSERT INTO {REVISION_TABLE} (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    "CREATE OR REPLACE FUNCTION mnemoscope_bump_revision() RETURNS trigger LANGUAGE plpgsql AS "
    f"$$BEGIN UPDATE {REVISION_TABLE} SET value = value + 1 WHERE id = 1; RETURN NULL; END$$",
]


def revision_triggers(table: str) -> list[str]:
    """The statements that make every write to table bump the store's revision (PostgreSQL)."""
    return [
        f'DROP TRIGGER IF EXISTS "{table}_revision" ON "{table}"',
        f'CREATE TRIGGER "{table}_revision" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "{table}" '
        "FOR EACH STATEMENT EXECUTE FUNCTION mnemoscope_bump_revision()",
    ]


def _create_v1(conn: Connection) -> None:
    metadata.create_all(conn)
    journal_tables.migrate(conn)
    if conn.dialect.name == "sqlite":
        for statement in FTS_SQLITE:
            conn.exec_driver_sql(statement)
    elif conn.dialect.name == "postgresql":
        for statement in _POSTGRESQL_V1:
            conn.exec_driver_sql(statement)
        for table in all_tables():
            for statement in revision_triggers(table.name):
                conn.exec_driver_sql(statement)


def _journal_at_its_version(conn: Connection) -> None:
    """The journal tables at JOURNAL_VERSION (revision 4 took them to version 2, revision 5 to 3:
    each runs the journal's own migrations, so either finds them where the other left them); on
    PostgreSQL a table a migration made bumps the store's revision as the others do."""
    journal_tables.migrate(conn)
    if conn.dialect.name == "postgresql":
        for statement in revision_triggers(journal_tables.audit_changes.name):
            conn.exec_driver_sql(statement)


def _add_page_indexes(conn: Connection) -> None:
    for index in PAGE_INDEXES:
        index.create(conn, checkfirst=True)


def _add_entity_name_index(conn: Connection) -> None:
    # (checkfirst does not see an index on an expression)
    conn.exec_driver_sql(f"CREATE INDEX IF NOT EXISTS {ENTITY_NAME_INDEX.name} ON entities (lower(name))")


def all_tables() -> list[Table]:
    """memory.db's tables, the journal's included."""
    return [*metadata.sorted_tables, *journal_tables.metadata.sorted_tables]


# MIGRATIONS[n] takes a database at version n to n+1 (Alembic revision n+1 runs it). Version 0 is
# an empty database.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {
    0: _create_v1, 1: _add_page_indexes, 2: _add_entity_name_index, 3: _journal_at_its_version,
    4: _journal_at_its_version,
}


def read_version(conn: Connection) -> int:
    has_meta = conn.dialect.has_table(conn, "meta")
    if not has_meta:
        return 0
    row = conn.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).first()
    if not row:
        return 0
    version = version_of(row[0])
    if version is None:
        from ...errors import UnreadableStoreError

        raise UnreadableStoreError(f"memory.db has schema version {row[0]!r}, which is not a version number.")
    return version


def version_of(value: object) -> int | None:
    """The schema version meta holds (as text), or None when it is not a version number."""
    try:
        version = int(str(value).strip())
    except ValueError:
        return None
    return version if version >= 0 else None


def write_probes(present: Collection[str] | None = None) -> list[str]:
    """Statements that compile every write this schema's tables get, triggers included, and run
    nothing (EXPLAIN ... WHERE 0): a trigger some other program added that cannot work (a table
    it names is missing, its text is damaged) fails them before a write is made. present: the
    tables the file holds (one an older version lacks is made by its migration, not probed)."""
    probes = []
    for table in all_tables():
        if present is not None and table.name not in present:
            continue
        columns = ", ".join(f'"{c.name}" = "{c.name}"' for c in table.columns)
        probes += [
            f'EXPLAIN INSERT INTO "{table.name}" DEFAULT VALUES',
            f'EXPLAIN UPDATE "{table.name}" SET {columns} WHERE 0',
            f'EXPLAIN DELETE FROM "{table.name}" WHERE 0',
        ]
    return probes


def structure_problems(found: Mapping[str, tuple[str, Collection[str]]], version: int = SCHEMA_VERSION) -> list[str]:
    """What in a SQLite file that says it holds this schema version does not match it, given its
    tables and views (name -> (type, column names)): a table missing, replaced by a view, or
    lacking columns. Extra tables, columns, indexes and triggers are the owner's business."""
    problems = []
    for name, expected in _expected_tables():
        if TABLES_ADDED_AT.get(name, 0) > version:
            continue
        kind, columns = found.get(name, ("", ()))
        if not kind:
            problems.append(f"no table {name}")
        elif kind != "table":
            problems.append(f"{name} is a {kind}, not a table")
        else:
            missing = [c for c in expected if c not in columns]
            if missing:
                problems.append(f"{name} lacks {', '.join(missing)}")
    return problems


@functools.cache
def _expected_tables() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each table of this schema version with its columns (sorted_tables sorts anew per call)."""
    return tuple((t.name, tuple(c.name for c in t.columns)) for t in all_tables())


def migrate(conn: Connection) -> int:
    """Bring the database to SCHEMA_VERSION (in conn's transaction); return the version it had.
    An up-to-date database costs one query: Alembic is imported only to upgrade."""
    found = read_version(conn)
    check_not_newer(found, "memory.db" if conn.dialect.name == "sqlite" else "The database")
    if found != SCHEMA_VERSION:
        from ...sqlite_engine import sqlalchemy_connection
        from .migrate import upgrade

        with sqlalchemy_connection(conn) as lent:
            upgrade(lent, found)
        conn.execute(
            text(
                "INSERT INTO meta(key, value) VALUES ('schema_version', :v) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
            ),
            {"v": str(SCHEMA_VERSION)},
        )
        if conn.dialect.name == "sqlite":
            conn.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return found


def check_not_newer(found: int, name: str) -> None:
    from ...errors import UnreadableStoreError

    if found > SCHEMA_VERSION:
        raise UnreadableStoreError(
            f"{name} has schema version {found}; this Mnemoscope understands up to "
            f"{SCHEMA_VERSION}. Upgrade Mnemoscope to open it."
        )
