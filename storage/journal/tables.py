"""The journal's own tables: ``meta`` (the store's settings, and memory.db's schema version),
``audit`` (one row per curation step), ``audit_changes`` (each step's changes as JSON, apart from
its row so that marking a step undone or dropped never rewrites megabytes of snapshots) and
``audit_targets`` (which memories each step touched), on SQLite and PostgreSQL.

One migration path for every journal: ``migrate(conn)`` takes the journal tables on conn to
JOURNAL_VERSION, whether they live in memory.db (its schema's revisions call it), in a PostgreSQL
store, or in a sidecar ``.mnemoscope/journal.db`` beside a store that has no memory.db. The version
is kept in ``meta`` (key ``journal_version``); journals from before it was kept are version 1. A
journal newer than this code is refused, never downgraded. A step that changes these tables is one
more entry in MIGRATIONS, and one more memory.db schema revision that calls ``migrate``.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Column, ForeignKey, Index, Integer, MetaData, Table, Text, text

from ..sqlite_engine import AnyConnection as Connection

JOURNAL_VERSION = 3
VERSION_KEY = "journal_version"

metadata = MetaData()

meta = Table(
    "meta",
    metadata,
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

audit = Table(
    "audit",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("at", Text, nullable=False),
    Column("operation", Text, nullable=False),
    Column("targets", Text, nullable=False),
    Column("channel", Text),
    Column("actor", Text, nullable=False),
    # done: applied; undone: reverted by undo (redo-able); dropped: undone, then superseded.
    Column("state", Text, nullable=False, server_default="done"),
    Column("details", Text, nullable=False, server_default="{}"),
    Index("ix_audit_state", "state"),
)

audit_changes = Table(
    "audit_changes",
    metadata,
    Column("seq", Integer, ForeignKey("audit.seq", ondelete="CASCADE"), primary_key=True),
    # JSON list of {"record": id, "before": snapshot|null, "after": snapshot|null}; from version 2
    # an after-image with the before-image's columns is {"record", "before", "set": {changed columns}}
    Column("changes", Text, nullable=False),
)

audit_targets = Table(
    "audit_targets",
    metadata,
    Column("seq", Integer, ForeignKey("audit.seq", ondelete="CASCADE"), primary_key=True),
    Column("target", Text, primary_key=True),
    Index("ix_audit_targets_target", "target"),
)


def _create(conn: Connection) -> None:
    """The tables at JOURNAL_VERSION (a journal made new takes no migration)."""
    metadata.create_all(conn)


def _after_images_as_changed_columns(conn: Connection) -> None:
    """Version 2 writes an after-image as the columns it changes (log._kept_as); the entries
    already written stay as they are (both forms are read): the version tells an older
    Mnemoscope, which would read such an after-image as missing, not to open the journal."""


def _changes_apart(conn: Connection) -> None:
    """Version 3 keeps each entry's changes in audit_changes: SQLite and PostgreSQL rewrite a whole
    row on any update, and a bulk step's row held megabytes that every later state change (undo,
    a new step dropping what was undone) copied again."""
    audit_changes.create(conn, checkfirst=True)
    conn.execute(text("INSERT INTO audit_changes(seq, changes) SELECT seq, changes FROM audit"))
    conn.execute(text("ALTER TABLE audit DROP COLUMN changes"))


# MIGRATIONS[n] takes a journal at version n to n+1; version 0 (no journal tables) is made at
# JOURNAL_VERSION by _create.
MIGRATIONS: dict[int, Callable[[Connection], None]] = {1: _after_images_as_changed_columns, 2: _changes_apart}


def read_version(conn: Connection) -> int:
    """The journal's version on conn: 0 without its tables, 1 for a journal from before the
    version was kept."""
    if not conn.dialect.has_table(conn, "audit"):
        return 0
    row = conn.execute(text("SELECT value FROM meta WHERE key = :k"), {"k": VERSION_KEY}).first()
    if row is None:
        return 1
    try:
        return int(str(row[0]).strip())
    except ValueError:
        from ..errors import UnreadableStoreError

        raise UnreadableStoreError(f"The journal's version {row[0]!r} is not a version number.") from None


def migrate(conn: Connection) -> int:
    """Bring the journal tables on conn to JOURNAL_VERSION, in conn's transaction; returns the
    version they had. Nothing is written to a journal already at JOURNAL_VERSION."""
    found = read_version(conn)
    if found > JOURNAL_VERSION:
        from ..errors import UnreadableStoreError

        raise UnreadableStoreError(
            f"The journal has version {found}; this Mnemoscope understands up to {JOURNAL_VERSION}. "
            "Upgrade Mnemoscope to open it."
        )
    if found < JOURNAL_VERSION:
        from ..sqlite_engine import sqlalchemy_connection

        with sqlalchemy_connection(conn) as lent:
            if found == 0:
                _create(lent)
            else:
                for version in range(found, JOURNAL_VERSION):
                    MIGRATIONS[version](lent)
            lent.execute(meta.delete().where(meta.c.key == VERSION_KEY))
            lent.execute(meta.insert().values(key=VERSION_KEY, value=str(JOURNAL_VERSION)))
    return found
