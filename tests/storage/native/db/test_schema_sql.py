"""schema_sql.py: the FTS5 index and its triggers keep full-text search in step with the memory
rows on a real SQLite file, and every PostgreSQL table's writes bump the revision counter."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemoscope.storage.native.db.schema_sql import FTS_SQLITE, revision_triggers


def test_the_fts_triggers_follow_every_insert_update_and_delete(tmp_path: Path) -> None:
    con = sqlite3.connect(tmp_path / "memory.db")
    con.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT, tags TEXT)")
    for statement in FTS_SQLITE:
        con.execute(statement)

    def found(word: str) -> list[str]:
        return [r[0] for r in con.execute(
            "SELECT m.id FROM memories_fts f JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ? "
            "ORDER BY m.id", (word,))]

    con.execute("INSERT INTO memories VALUES ('m-1', 'Dana likes decaf', '[\"coffee\"]')")
    con.execute("INSERT INTO memories VALUES ('m-2', 'Stripe in test mode', '[]')")
    assert found("decaf") == ["m-1"] and found("coffee") == ["m-1"] and found("stripe") == ["m-2"]
    con.execute("UPDATE memories SET content = 'Dana likes tea' WHERE id = 'm-1'")
    assert found("decaf") == [] and found("tea") == ["m-1"]
    con.execute("DELETE FROM memories WHERE id = 'm-2'")
    assert found("stripe") == []
    con.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")  # raises if out of step
    con.close()


def test_every_write_to_a_postgresql_table_bumps_the_revision() -> None:
    drop, create = revision_triggers("memories")
    assert drop == 'DROP TRIGGER IF EXISTS "memories_revision" ON "memories"'
    assert 'AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "memories"' in create
    assert create.endswith("FOR EACH STATEMENT EXECUTE FUNCTION mnemoscope_bump_revision()")
