"""The journal's own tables and their one migration path, in a sidecar journal and in memory.db."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import UnreadableStoreError, create_workspace
from mnemoscope.storage.journal import tables
from mnemoscope.storage.journal.log import SIDECAR_DB, SIDECAR_DIR, Journal
from mnemoscope.storage.source import Change
from sqlalchemy import create_engine


def _meta(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as con:
        return dict(con.execute("SELECT key, value FROM meta").fetchall())


def _tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as con:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_sidecar_journal_is_made_at_the_journal_version_on_its_first_write(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    db = tmp_path / SIDECAR_DIR / SIDECAR_DB
    assert not db.exists()  # nothing on a read
    assert journal.history() == []
    assert not db.exists()
    journal.record("edit", ["m1"], [Change("m1", {"content": "a"}, {"content": "b"})])
    journal.close()
    assert {"meta", "audit", "audit_targets"} <= _tables(db)
    assert _meta(db)[tables.VERSION_KEY] == str(tables.JOURNAL_VERSION)


def test_memory_db_holds_the_journal_tables_at_the_same_version(tmp_path: Path) -> None:
    create_workspace(tmp_path / "ws").close()
    db = tmp_path / "ws" / "memory.db"
    assert {"memories", "meta", "audit", "audit_targets"} <= _tables(db)
    assert _meta(db)[tables.VERSION_KEY] == str(tables.JOURNAL_VERSION)


V1_DDL = (  # what sidecars held at first: the tables, no version, each step's changes in its audit row
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, operation TEXT NOT NULL, "
    "targets TEXT NOT NULL, channel TEXT, actor TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'done', "
    "details TEXT NOT NULL DEFAULT '{}', changes TEXT NOT NULL)",
    "CREATE INDEX ix_audit_state ON audit (state)",
    "CREATE TABLE audit_targets (seq INTEGER NOT NULL REFERENCES audit (seq) ON DELETE CASCADE, "
    "target TEXT NOT NULL, PRIMARY KEY (seq, target))",
    "CREATE INDEX ix_audit_targets_target ON audit_targets (target)",
)


def _v1_sidecar(root: Path, changes: str) -> Path:
    db = root / SIDECAR_DIR / SIDECAR_DB
    db.parent.mkdir()
    with sqlite3.connect(db) as con:
        for statement in V1_DDL:
            con.execute(statement)
        con.execute("INSERT INTO audit(at, operation, targets, actor, state, changes) VALUES "
                    "('2026-01-01T00:00:00+00:00', 'edit', '[\"m1\"]', 'user', 'done', ?)", (changes,))
        con.execute("INSERT INTO audit_targets VALUES (1, 'm1')")
    con.close()
    return db


def test_a_journal_from_before_its_version_was_kept_is_version_1_and_its_entries_stay_readable(
        tmp_path: Path) -> None:
    old = '[{"record": "m1", "before": {"content": "a", "n": 1}, "after": {"content": "b", "n": 1}}]'
    db = _v1_sidecar(tmp_path, old)
    engine = create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        assert tables.read_version(conn) == 1
    engine.dispose()
    before = db.read_bytes()
    reader = Journal.sidecar(tmp_path, read_only=True)  # read where it is, nothing written
    assert [e.after for e in reader.history()] == [[{"content": "b", "n": 1}]]
    assert [e.after for e in reader.history(target="m1")] == [[{"content": "b", "n": 1}]]
    reader.close()
    assert db.read_bytes() == before
    journal = Journal.sidecar(tmp_path)
    journal.record("edit", ["m2"], [Change("m2", {"content": "c", "n": 1}, {"content": "d", "n": 1})])
    assert _meta(db)[tables.VERSION_KEY] == str(tables.JOURNAL_VERSION) == "3"
    first, second = sorted(journal.history(), key=lambda e: e.seq)
    assert first.after == [{"content": "b", "n": 1}] and second.after == [{"content": "d", "n": 1}]
    journal.close()
    with sqlite3.connect(db) as con:
        kept = [r[0] for r in con.execute("SELECT changes FROM audit_changes ORDER BY seq")]
        audit_columns = [r[1] for r in con.execute("PRAGMA table_info(audit)")]
    con.close()
    assert kept[0] == old  # an entry of version 1 is moved as it was written
    assert '"set": {"content": "d"}' in kept[1] and '"after"' not in kept[1]
    assert "changes" not in audit_columns


def test_a_state_change_leaves_a_steps_changes_where_they_are(tmp_path: Path) -> None:
    """Undo marks a step undone, a new step drops what was undone: neither writes the step's
    changes again (SQLite writes a whole row again on any update: megabytes for a bulk step)."""
    journal = Journal.sidecar(tmp_path)
    big = [Change(f"m{i}", {"content": f"fact {i} " * 100}, None) for i in range(200)]
    seq = journal.record("delete", [c.record for c in big], big).seq
    with sqlite3.connect(tmp_path / SIDECAR_DIR / SIDECAR_DB) as con:  # what an update of them would leave
        con.execute("CREATE TABLE rewritten (seq INTEGER)")
        con.execute("CREATE TRIGGER changes_rewritten AFTER UPDATE ON audit_changes "
                    "BEGIN INSERT INTO rewritten VALUES (old.seq); END")
    con.close()
    journal.set_state(seq, "undone")
    journal.record("edit", ["m2"], [Change("m2", {"content": "b"}, {"content": "c"})])  # drops seq
    assert journal.entry(seq).state == "dropped" and journal.changes(seq) == big
    journal.close()
    with sqlite3.connect(tmp_path / SIDECAR_DIR / SIDECAR_DB) as con:
        assert con.execute("SELECT count(*) FROM rewritten").fetchone() == (0,)
    con.close()


def test_an_empty_database_is_taken_to_the_journal_version(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'new.db'}")
    with engine.begin() as conn:
        assert tables.read_version(conn) == 0
        assert tables.migrate(conn) == 0
        assert tables.read_version(conn) == tables.JOURNAL_VERSION
    engine.dispose()


def test_a_journal_newer_than_this_code_is_refused_and_not_written(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    journal.record("edit", ["m1"], [])
    journal.close()
    db = tmp_path / SIDECAR_DIR / SIDECAR_DB
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = ? WHERE key = ?", (str(tables.JOURNAL_VERSION + 1), tables.VERSION_KEY))
    before = db.read_bytes()
    with pytest.raises(UnreadableStoreError, match="Upgrade Mnemoscope"):
        Journal.sidecar(tmp_path).record("edit", ["m2"], [])
    assert db.read_bytes() == before


def test_a_version_that_is_no_number_is_reported(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'bad.db'}")
    with engine.begin() as conn:
        tables.migrate(conn)
        conn.execute(tables.meta.update().values(value="two").where(tables.meta.c.key == tables.VERSION_KEY))
        with pytest.raises(UnreadableStoreError, match="not a version number"):
            tables.read_version(conn)
    engine.dispose()
