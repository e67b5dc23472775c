"""The native store's tables for SQLAlchemy (Core and Alembic), on SQLite and PostgreSQL, and the
migrations that make them: loaded through schema.py's names (``schema.memories``) at the first use,
so that a command that only reads or writes rows by SQL (``rm ID``, ``undo``) never imports
SQLAlchemy. schema.TABLE_COLUMNS names the same columns for that SQL, and a test holds them the same.
"""

from __future__ import annotations

from collections.abc import Callable

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
)
from sqlalchemy.engine import Connection

from ...journal import tables as journal_tables
from .schema_sql import FTS_DOCUMENT_POSTGRESQL, FTS_SQLITE, REVISION_TABLE, revision_triggers

POSTGRESQL_V1 = [
    f"CREATE INDEX IF NOT EXISTS ix_memories_fts ON memories USING gin ({FTS_DOCUMENT_POSTGRESQL})",
    f"CREATE TABLE IF NOT EXISTS {REVISION_TABLE} (id integer PRIMARY KEY CHECK (id = 1), value bigint NOT NULL)",
    f"INSERT INTO {REVISION_TABLE} (id, value) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    "CREATE OR REPLACE FUNCTION mnemoscope_bump_revision() RETURNS trigger LANGUAGE plpgsql AS "
    f"$$BEGIN UPDATE {REVISION_TABLE} SET value = value + 1 WHERE id = 1; RETURN NULL; END$$",
]

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


def _create_v1(conn: Connection) -> None:
    metadata.create_all(conn)
    journal_tables.migrate(conn)
    if conn.dialect.name == "sqlite":
        for statement in FTS_SQLITE:
            conn.exec_driver_sql(statement)
    elif conn.dialect.name == "postgresql":
        for statement in POSTGRESQL_V1:
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
