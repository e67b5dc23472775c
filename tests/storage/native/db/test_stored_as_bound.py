"""stored_as_bound.py: a bulk step trusts what it bound as the rows' after-images only where SQLite
stores it unchanged; each answer is checked against what a real SQLite file then holds."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.native.db.stored_as_bound import StoredAsBound, affinity, as_written
from mnemoscope.storage.source import Change

NOW = "2026-11-01T12:00:00+00:00"


@pytest.fixture
def source(tmp_path: Path) -> Iterator[SqliteSource]:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    yield source
    source.close()


def _kept(db: Path) -> object:
    with contextlib.closing(sqlite3.connect(db)) as con:
        return StoredAsBound().kept(con)


@pytest.mark.parametrize("declared", ["TEXT", "INTEGER", "FLOAT", "NUMERIC", "BLOB", "", "VARCHAR(20)", "DOUBLE"])
def test_a_value_called_kept_is_what_sqlite_stores_and_reads_back(tmp_path: Path, declared: str) -> None:
    values = ["text", "12", "1.5", 7, 0, 2**62, 1.0, 2.5, -0.0, float("nan"), b"\x00\xff", None, True]
    with contextlib.closing(sqlite3.connect(tmp_path / "t.db")) as con:
        con.execute(f"CREATE TABLE memories (id INTEGER PRIMARY KEY, v {declared})")
        kept = StoredAsBound().kept(con)
        assert kept is not None
        for n, value in enumerate(values):
            con.execute("INSERT INTO memories VALUES (?, ?)", (n, value))
            (back,) = con.execute("SELECT v FROM memories WHERE id = ?", (n,)).fetchone()
            unchanged = type(back) is type(value) and (back == value or back != back)
            if as_written({"v": value}, kept):
                assert unchanged, (declared, value, back)


def test_affinity_follows_sqlites_rules() -> None:
    assert [affinity(t) for t in ("BIGINT", "NVARCHAR(9)", "CLOB", "", "BLOB", "REAL", "FLOAT", "DECIMAL(5)")] == [
        "INTEGER", "TEXT", "TEXT", "BLOB", "BLOB", "REAL", "REAL", "NUMERIC"]


def test_a_foreign_trigger_or_a_generated_column_means_reading_back(source: SqliteSource) -> None:
    db = source.db_path
    assert _kept(db) is not None  # our own FTS triggers write no memories row
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("CREATE TRIGGER stamp AFTER UPDATE ON memories BEGIN "
                    "UPDATE memories SET metadata = '{\"touched\": 1}' WHERE id = new.id; END")
        con.commit()
    assert _kept(db) is None
    with contextlib.closing(sqlite3.connect(db)) as con:
        con.execute("DROP TRIGGER stamp")
        con.execute("ALTER TABLE memories ADD COLUMN shout TEXT GENERATED ALWAYS AS (upper(content)) VIRTUAL")
        con.commit()
    assert _kept(db) is None


def test_a_bulk_step_journals_what_the_rows_hold_with_or_without_a_foreign_trigger(source: SqliteSource) -> None:
    ids = [source.add_memory(f"fact {n}") for n in range(4)]
    for stamp in (False, True):
        if stamp:  # another program's trigger rewrites what we write: read back, not trusted
            with contextlib.closing(sqlite3.connect(source.db_path)) as con:
                con.execute("CREATE TRIGGER stamp AFTER UPDATE OF status ON memories BEGIN "
                            "UPDATE memories SET metadata = '{\"seen\": 1}' WHERE id = new.id; END")
                con.commit()
        befores = source.read_records(ids)
        edits = itertools.cycle([{"status": "deleted"}, {"salience": 0.25, "tags": '["x"]'}])
        changes = [Change(i, befores[i], {**befores[i], **edit, "updated_at": NOW}) for i, edit in zip(ids, edits)]
        written = source.write_records(changes)
        held = source.read_records(ids)
        for change in written:
            assert change.after == held[change.record]
            assert [type(v) for v in change.after.values()] == [type(v) for v in held[change.record].values()]
        assert all(("seen" in held[i]["metadata"]) is stamp for i in ids[::2])
        source.write_records([Change(c.record, c.after, befores[c.record]) for c in written])
