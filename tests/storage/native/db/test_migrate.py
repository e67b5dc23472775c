"""memory.db files from before Alembic (versions 1 and 2, no alembic_version table) and stamped
ones open and are migrated and stamped; an up-to-date open never loads Alembic."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mnemoscope.storage import UnreadableStoreError, open_store
from mnemoscope.storage.native.db import schema
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.views.graph import resolve_entity
from sqlalchemy import create_engine


def _old_file(path: Path, version: int) -> None:
    """memory.db as Mnemoscope wrote it at version before Alembic: its DDL, meta and user_version."""
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        for migration in range(version):
            schema.MIGRATIONS[migration](conn)
        if version == 1:
            for index in schema.PAGE_INDEXES:  # version 1 had none of them
                conn.exec_driver_sql(f"DROP INDEX {index.name}")
        if version < 3:
            conn.exec_driver_sql(f"DROP INDEX {schema.ENTITY_NAME_INDEX.name}")
        if version < 5:  # the journal's changes in audit itself (before its version 3)
            conn.exec_driver_sql("DROP TABLE audit_changes")
            conn.exec_driver_sql("ALTER TABLE audit ADD COLUMN changes TEXT NOT NULL DEFAULT '[]'")
            conn.exec_driver_sql("UPDATE meta SET value = '2' WHERE key = 'journal_version'")
            conn.exec_driver_sql(
                "INSERT INTO audit (at, operation, targets, actor, state, changes) VALUES ('2025-01-02T00:00:00+00:00', "
                "'edit', '[\"m-old\"]', 'user', 'done', ?)", (OLD_STEP,))
        if version < 4:  # the journal at version 1 (its version was first kept at version 2)
            conn.exec_driver_sql("DELETE FROM meta WHERE key = 'journal_version'")
        conn.exec_driver_sql(f"INSERT INTO meta (key, value) VALUES ('schema_version', '{version}')")
        conn.exec_driver_sql(f"PRAGMA user_version = {version}")
        conn.exec_driver_sql(
            "INSERT INTO memories (id, layer, content, created_at, updated_at, last_accessed) VALUES "
            "('m-old', 'semantic', 'kept across the upgrade', '2025-01-01T00:00:00+00:00', "
            "'2025-01-01T00:00:00+00:00', '2025-01-01T00:00:00+00:00')"
        )
    engine.dispose()


OLD_STEP = json.dumps([{"record": "m-old", "before": {"content": "as first written"},
                        "after": {"content": "kept across the upgrade"}}])


def _facts(path: Path) -> dict[str, object]:
    con = sqlite3.connect(path)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {
            "user_version": con.execute("PRAGMA user_version").fetchone()[0],
            "schema_version": con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0],
            "alembic": con.execute("SELECT version_num FROM alembic_version").fetchall() if "alembic_version" in tables else None,
            "page_indexes": sorted(r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'ix_memories_status_%'")),
            "entity_name_index": con.execute(
                "SELECT count(*) FROM sqlite_master WHERE name = 'ix_entities_lower_name'").fetchone()[0],
            "journal_version": (con.execute("SELECT value FROM meta WHERE key = 'journal_version'").fetchone()
                                or ("1",))[0],
        }
    finally:
        con.close()


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_a_file_from_before_alembic_is_stamped_and_migrated(tmp_path: Path, version: int) -> None:
    _old_file(tmp_path / "memory.db", version)
    assert _facts(tmp_path / "memory.db")["alembic"] is None
    with open_store(tmp_path) as store:
        assert store.get("m-old").content == "kept across the upgrade"
        (step,) = store.history()
        assert (step.operation, step.before, step.after) == (
            "edit", [{"content": "as first written"}], [{"content": "kept across the upgrade"}])
    assert _facts(tmp_path / "memory.db") == {
        "user_version": 5, "schema_version": "5", "alembic": [("0005",)],
        "page_indexes": sorted(i.name for i in schema.PAGE_INDEXES), "entity_name_index": 1, "journal_version": "3"}
    with sqlite3.connect(tmp_path / "memory.db") as con:  # the step's changes moved out of its row
        assert [r[1] for r in con.execute("PRAGMA table_info(audit)") if r[1] == "changes"] == []
        assert con.execute("SELECT changes FROM audit_changes").fetchall() == [(OLD_STEP,)]


def test_a_current_file_from_before_alembic_is_opened_as_it_is(tmp_path: Path) -> None:
    _old_file(tmp_path / "memory.db", schema.SCHEMA_VERSION)
    with open_store(tmp_path) as store:
        assert store.get("m-old").content == "kept across the upgrade"
    facts = _facts(tmp_path / "memory.db")  # nothing written, Alembic not needed
    assert facts["schema_version"] == str(schema.SCHEMA_VERSION) and facts["alembic"] is None


def test_a_version_2_file_finds_an_entity_by_name_through_the_new_index(tmp_path: Path) -> None:
    _old_file(tmp_path / "memory.db", 2)
    con = sqlite3.connect(tmp_path / "memory.db")
    con.execute("INSERT INTO entities (id, name) VALUES ('e-stripe', 'Stripe')")
    con.commit()
    con.close()
    with open_store(tmp_path) as store:
        assert resolve_entity(store, "STRIPE") == "e-stripe"
    con = sqlite3.connect(tmp_path / "memory.db")
    plan = " ".join(r[3] for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM entities WHERE lower(name) = lower('STRIPE')"))
    con.close()
    assert "ix_entities_lower_name" in plan


def test_the_head_revision_is_the_schema_version() -> None:
    from alembic.script import ScriptDirectory
    from mnemoscope.storage.native.db.migrate import SCRIPTS, revision_of

    heads = ScriptDirectory(str(SCRIPTS)).get_heads()
    assert heads == [revision_of(schema.SCHEMA_VERSION)]


def test_a_file_alembic_stamped_with_an_unknown_revision_is_refused(tmp_path: Path) -> None:
    _old_file(tmp_path / "memory.db", 1)
    con = sqlite3.connect(tmp_path / "memory.db")
    con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
    con.execute("INSERT INTO alembic_version VALUES ('9999')")
    con.commit()
    con.close()
    with pytest.raises(UnreadableStoreError, match="another Mnemoscope"):
        SqliteSource.open(tmp_path / "memory.db")
    assert _facts(tmp_path / "memory.db")["schema_version"] == "1"


def test_an_up_to_date_open_does_not_import_alembic(tmp_path: Path) -> None:
    SqliteSource.open(tmp_path / "memory.db", create=True).close()
    code = (
        "import sys; from pathlib import Path; from mnemoscope.storage import open_store\n"
        f"store = open_store(Path({str(tmp_path)!r})); store.page.__call__\n"
        "print(sorted(m for m in ('alembic', 'psycopg') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_version_2_file_opens_read_only_as_it_is_and_finds_names_without_the_index(tmp_path: Path) -> None:
    _old_file(tmp_path / "memory.db", 2)
    con = sqlite3.connect(tmp_path / "memory.db")
    con.execute("INSERT INTO entities (id, name) VALUES ('e-stripe', 'Stripe')")
    con.commit()
    con.close()
    with open_store(tmp_path, read_only=True) as store:
        assert store.get("m-old").content == "kept across the upgrade"
        assert resolve_entity(store, "STRIPE") == "e-stripe"
        assert [e.after for e in store.history()] == [[{"content": "kept across the upgrade"}]]  # read where it is
    assert _facts(tmp_path / "memory.db") == {
        "user_version": 2, "schema_version": "2", "alembic": None,
        "page_indexes": sorted(i.name for i in schema.PAGE_INDEXES), "entity_name_index": 0, "journal_version": "1"}


def test_a_version_1_file_is_still_refused_read_only(tmp_path: Path) -> None:
    _old_file(tmp_path / "memory.db", 1)
    with pytest.raises(UnreadableStoreError, match="open it once without read-only"):
        open_store(tmp_path, read_only=True)
