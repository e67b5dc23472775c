"""The native schema's parts written as SQL, not as SQLAlchemy tables (schema_tables.py): memory.db's
FTS5 index and the triggers that keep it, PostgreSQL's full-text document and the revision counter
every write bumps. Read without SQLAlchemy (an open checks the triggers; see fts.py and
stored_as_bound.py)."""

from __future__ import annotations

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


def revision_triggers(table: str) -> list[str]:
    """The statements that make every write to table bump the store's revision (PostgreSQL)."""
    return [
        f'DROP TRIGGER IF EXISTS "{table}_revision" ON "{table}"',
        f'CREATE TRIGGER "{table}_revision" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "{table}" '
        "FOR EACH STATEMENT EXECUTE FUNCTION mnemoscope_bump_revision()",
    ]
