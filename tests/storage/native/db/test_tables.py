"""tables.py: NativeDb, the API an agent embeds to write its memory (sessions, turns, scratchpad,
memories, entities, relations, touch), on a real memory.db read back with sqlite3."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Entity, Layer, NotFoundError, Relation, Status
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.native.db.tables import NativeDb

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def source(tmp_path: Path) -> Iterator[SqliteSource]:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    yield source
    source.close()


def _rows(source: SqliteSource, sql: str) -> list[tuple]:
    con = sqlite3.connect(source.db_path)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_sources_of_both_databases_share_one_native_db(source: SqliteSource) -> None:
    assert isinstance(source, NativeDb)


def test_sessions_and_their_turns_append_in_order(source: SqliteSource) -> None:
    source.add_session("s1", channel="webshop", title="Checkout bug", user_id="dana", started_at=NOW)
    source.add_turns("s1", [("user", "Hi", NOW), ("assistant", "Hello", NOW + timedelta(seconds=1))])
    source.add_turns("s1", [("user", "Bye", NOW + timedelta(seconds=2))])
    source.add_turns("s1", [])
    assert _rows(source, "SELECT id, channel, title, user_id FROM sessions") == [("s1", "webshop", "Checkout bug", "dana")]
    assert _rows(source, "SELECT idx, role, content FROM turns ORDER BY idx") == [
        (0, "user", "Hi"), (1, "assistant", "Hello"), (2, "user", "Bye")]
    (session,) = source.sessions()
    assert (session.turn_count, session.started_at) == (3, NOW)


def test_set_scratch_keeps_one_value_per_key(source: SqliteSource) -> None:
    source.add_session("s1")
    source.set_scratch("s1", "retries", 2, updated_at=NOW)
    source.set_scratch("s1", "retries", {"max": 3}, updated_at=NOW + timedelta(minutes=1))
    source.set_scratch("s1", "note", "plain text", updated_at=NOW)
    assert _rows(source, "SELECT key, value FROM scratchpad ORDER BY key") == [
        ("note", "plain text"), ("retries", '{"max": 3}')]


def test_add_memory_writes_the_row_memory_row_builds(source: SqliteSource) -> None:
    memory_id = source.add_memory("Dana likes decaf", layer=Layer.EPISODIC, channel="webshop", tags=("coffee",),
                                  created_at=NOW, salience=0.8, metadata={"b": 1, "a": 2})
    (row,) = _rows(source, "SELECT id, layer, channel, tags, salience, metadata, status, created_at FROM memories")
    assert row == (memory_id, "episodic", "webshop", '["coffee"]', 0.8, '{"a": 2, "b": 1}', "active",
                   "2026-11-01T12:00:00+00:00")
    memory = source.get(memory_id)
    assert (memory.layer, memory.channel, memory.tags, memory.status) == (Layer.EPISODIC, "webshop", ("coffee",),
                                                                        Status.ACTIVE)


def test_rows_go_in_together_and_existing_values_finds_them(source: SqliteSource) -> None:
    rows = [NativeDb.memory_row(f"fact {n}", memory_id=f"m-{n}", import_key=f"k-{n}") for n in range(1200)]
    source.insert_memory_rows(rows)
    source.insert_memory_rows([])
    assert _rows(source, "SELECT count(*) FROM memories") == [(1200,)]
    wanted = [f"k-{n}" for n in range(0, 2400, 2)]  # past the 500-value chunks, half of them absent
    assert source.existing_values("import_key", wanted) == {f"k-{n}" for n in range(0, 1200, 2)}


def test_touch_reinforces_and_a_missing_memory_is_refused(source: SqliteSource) -> None:
    memory_id = source.add_memory("Dana likes decaf", created_at=NOW)
    source.touch(memory_id, at=NOW + timedelta(days=1))
    memory = source.get(memory_id)
    assert (memory.access_count, memory.last_accessed) == (1, NOW + timedelta(days=1))
    with pytest.raises(NotFoundError):
        source.touch("m-missing")


def test_entities_and_relations_read_back_as_written(source: SqliteSource) -> None:
    dana = Entity("e-dana", "Dana", "person", aliases=("D",), salience=0.7, first_seen=NOW)
    source.add_entity(dana)
    memory_id = source.add_memory("Dana likes decaf")
    relation = Relation("r-1", memory_id, "e-dana", "ABOUT", weight=0.9, created_at=NOW)
    source.add_relation(relation)
    assert source.entities() == [dana]
    assert source.relations() == [relation]
    assert [m.id for m in source.memories_about("e-dana")] == [memory_id]
