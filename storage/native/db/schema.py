"""The native store's schema, on SQLite (``memory.db``) and PostgreSQL: its version, its tables'
columns, full-text search, and what an open checks and migrates.

The tables themselves, for SQLAlchemy Core and Alembic, are in schema_tables.py, loaded at the
first use of a name such as ``schema.memories`` (see __getattr__): opening memory.db and writing
rows by SQL (``rm ID``, ``undo``) never imports SQLAlchemy.

Versioning: the schema version lives in the ``meta`` table (key ``schema_version``) on both
databases, and is mirrored into SQLite's ``PRAGMA user_version`` so the file identifies itself
to any SQLite tool. Migrations are Alembic revisions (``migrations/versions``), one per version:
``MIGRATIONS[n]`` is what revision n+1 runs. ``migrate`` reads the version cheaply and imports
Alembic only when a database needs upgrading; a database newer than this code is refused, never
downgraded.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ...sqlite_engine import AnyConnection as Connection

SCHEMA_VERSION = 5
# The oldest version a read-only open reads as it is (the versions after it add indexes, and the
# journal's audit_changes, whose changes an older file keeps in audit and are read there).
READS_FROM = 2
# The tables a version after READS_FROM added (a file of an older version lacks them, rightly).
TABLES_ADDED_AT = {"audit_changes": 5}
# Each table of this version with its columns, in schema_tables.all_tables()'s order (the journal's
# last); tests/storage/native/db/test_schema_tables.py holds them the same as the tables there.
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "entities": ("id", "name", "type", "channel", "description", "aliases", "salience", "access_count",
                 "first_seen", "last_accessed"),
    "memories": ("id", "layer", "channel", "content", "created_at", "updated_at", "last_accessed", "access_count",
                 "salience", "confidence", "conversations", "tags", "metadata", "status", "promoted_from",
                 "derived_from", "imported_from", "import_key", "md_file", "vector_state"),
    "relations": ("id", "source_id", "target_id", "type", "channel", "weight", "created_at"),
    "sessions": ("id", "channel", "title", "user_id", "started_at", "metadata"),
    "scratchpad": ("session_id", "key", "value", "updated_at"),
    "turns": ("id", "session_id", "idx", "role", "content", "timestamp"),
    "audit": ("seq", "at", "operation", "targets", "channel", "actor", "state", "details"),
    "meta": ("key", "value"),
    "audit_changes": ("seq", "changes"),
    "audit_targets": ("seq", "target"),
}
# The names schema_tables.py defines, reached through this module.
_DEFINED = frozenset({"metadata", "sessions", "turns", "scratchpad", "memories", "entities", "relations",
                      "PAGE_INDEXES", "ENTITY_NAME_INDEX", "MIGRATIONS", "all_tables"})


def column_of(table: str, name: str) -> str:
    """name, when it is one of table's columns (a name asked from outside goes into SQL only
    then); KeyError otherwise."""
    if name not in TABLE_COLUMNS[table]:
        raise KeyError(name)
    return name


def __getattr__(name: str) -> Any:
    if name in _DEFINED:
        from . import schema_tables

        return getattr(schema_tables, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

def read_version(conn: Connection) -> int:
    has_meta = conn.dialect.has_table(conn, "meta")
    if not has_meta:
        return 0
    row = conn.exec_driver_sql("SELECT value FROM meta WHERE key = 'schema_version'").first()
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
    for table, names in TABLE_COLUMNS.items():
        if present is not None and table not in present:
            continue
        columns = ", ".join(f'"{c}" = "{c}"' for c in names)
        probes += [
            f'EXPLAIN INSERT INTO "{table}" DEFAULT VALUES',
            f'EXPLAIN UPDATE "{table}" SET {columns} WHERE 0',
            f'EXPLAIN DELETE FROM "{table}" WHERE 0',
        ]
    return probes


def structure_problems(found: Mapping[str, tuple[str, Collection[str]]], version: int = SCHEMA_VERSION) -> list[str]:
    """What in a SQLite file that says it holds this schema version does not match it, given its
    tables and views (name -> (type, column names)): a table missing, replaced by a view, or
    lacking columns. Extra tables, columns, indexes and triggers are the owner's business."""
    problems = []
    for name, expected in TABLE_COLUMNS.items():
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
            from sqlalchemy import text

            lent.execute(
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
