"""schema.py: the native tables, the version a database says it holds, what a file claiming this
version lacks, and migrate() on an empty SQLite file (Alembic's path from older files is in
test_migrate.py; PostgreSQL's in test_postgres_source.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import UnreadableStoreError
from mnemoscope.storage.native.db import schema
from mnemoscope.storage.sqlite_files import peek_schema
from sqlalchemy import create_engine, text


def _engine(path: Path):
    return create_engine(f"sqlite:///{path}")


def test_migrate_creates_every_table_index_and_the_fts_triggers_in_an_empty_file(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "memory.db")
    with engine.begin() as conn:
        assert schema.read_version(conn) == 0
        assert schema.migrate(conn) == 0
        assert schema.read_version(conn) == schema.SCHEMA_VERSION
    with engine.begin() as conn:
        assert schema.migrate(conn) == schema.SCHEMA_VERSION  # up to date: nothing to do
    engine.dispose()
    found = peek_schema(tmp_path / "memory.db")
    assert schema.structure_problems(found) == []
    con = sqlite3.connect(tmp_path / "memory.db")
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger')")}
        assert {i.name for i in schema.PAGE_INDEXES} <= names
        assert {"memories_fts_ai", "memories_fts_ad", "memories_fts_au"} <= names
        for probe in schema.write_probes():  # every write compiles against the tables as created
            con.execute(probe)
    finally:
        con.close()


def test_structure_problems_name_what_is_missing_and_nothing_extra() -> None:
    found = {t.name: ("table", frozenset(c.name for c in t.columns)) for t in schema.all_tables()}
    assert schema.structure_problems({**found, "extra": ("table", frozenset({"x"}))}) == []
    damaged = dict(found)
    del damaged["turns"]
    damaged["relations"] = ("view", found["relations"][1])
    damaged["memories"] = ("table", found["memories"][1] - {"salience"})
    assert sorted(schema.structure_problems(damaged)) == [
        "memories lacks salience", "no table turns", "relations is a view, not a table"]


def test_versions_that_are_not_numbers_and_newer_versions_are_refused(tmp_path: Path) -> None:
    assert schema.version_of(" 2 ") == 2 and schema.version_of("two") is None and schema.version_of(-1) is None
    engine = _engine(tmp_path / "memory.db")
    with engine.begin() as conn:
        schema.migrate(conn)
        conn.execute(text("UPDATE meta SET value = 'two' WHERE key = 'schema_version'"))
        with pytest.raises(UnreadableStoreError, match="not a version number"):
            schema.read_version(conn)
        conn.execute(text(f"UPDATE meta SET value = '{schema.SCHEMA_VERSION + 1}' WHERE key = 'schema_version'"))
        with pytest.raises(UnreadableStoreError, match="Upgrade Mnemoscope"):
            schema.migrate(conn)
    engine.dispose()


def test_one_migration_step_per_version() -> None:
    assert set(schema.MIGRATIONS) == set(range(schema.SCHEMA_VERSION))
    assert {t.name for t in schema.all_tables()} >= {"memories", "meta", "audit", "audit_targets"}
