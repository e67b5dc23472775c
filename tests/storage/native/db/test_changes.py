"""changes.py: the write primitive (a row written only while it is what was read) and the plans of
the Curator's operations on memories rows, on a real memory.db (the Curator's undo over them is
tested in tests/storage/test_curation.py and, on both databases, in test_native_backends.py)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from mnemoscope.storage import ConflictError, NotFoundError, NothingToDoError, Relation, StoreError, UnsupportedError
from mnemoscope.storage.native.db.changes import _same_values
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    REEMBED,
    REINFORCE,
    Change,
    PlanContext,
)

NOW = "2026-11-01T12:00:00+00:00"
CONTEXT = PlanContext(now=NOW, embed=lambda text: None)


@pytest.fixture
def source(tmp_path: Path) -> Iterator[SqliteSource]:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    yield source
    source.close()


def test_a_write_lands_only_on_the_row_it_was_planned_against(source: SqliteSource) -> None:
    memory_id = source.add_memory("Dana likes decaf")
    before = source.read_record(memory_id)
    after = source.write_record(memory_id, before, {**before, "content": "Dana likes tea"})
    assert after is not None and after["content"] == "Dana likes tea"
    with pytest.raises(ConflictError, match="changed since it was read"):
        source.write_record(memory_id, before, {**before, "content": "Dana likes water"})
    assert source.get(memory_id).content == "Dana likes tea"
    assert source.write_record(memory_id, after, None) is None
    assert source.read_record(memory_id) is None
    assert source.write_record(memory_id, None, before) == before  # undo of a delete puts it back as it was


def test_prepare_write_rehearses_and_writes_nothing(source: SqliteSource) -> None:
    memory_id = source.add_memory("Dana likes decaf")
    row = source.read_record(memory_id)
    source.prepare_write([Change(memory_id, row, {**row, "content": "rehearsed"})])
    assert source.read_record(memory_id) == row
    con = sqlite3.connect(source.db_path)
    con.execute("CREATE TRIGGER no_edits BEFORE UPDATE ON memories BEGIN SELECT RAISE(ABORT, 'no edits'); END")
    con.commit()
    con.close()
    with pytest.raises(StoreError):
        source.prepare_write([Change(memory_id, row, {**row, "content": "refused"})])
    assert source.read_record(memory_id) == row


def test_plans_change_rows_only_as_their_operation_says(source: SqliteSource) -> None:
    memory_id = source.add_memory("Dana likes decaf", tags=("coffee",), access_count=2)
    memory = source.get(memory_id)
    row = source.read_record(memory_id)
    edit = source.plan(EDIT, memory, {"content": "Dana likes tea", "tags": ["tea"]}, CONTEXT)
    assert [(c.record, c.before) for c in edit.changes] == [(memory_id, row)]
    assert edit.changes[0].after == {**row, "content": "Dana likes tea", "tags": '["tea"]', "updated_at": NOW}
    assert source.plan(EDIT, memory, {"content": "Dana likes decaf"}, CONTEXT).changes == []
    assert source.plan(DELETE, memory, {}, CONTEXT).changes[0].after["status"] == "deleted"
    reinforced = source.plan(REINFORCE, memory, {}, CONTEXT).changes[0].after
    assert (reinforced["access_count"], reinforced["last_accessed"]) == (3, NOW)
    reembed = source.plan(REEMBED, memory, {}, CONTEXT)
    assert reembed.embed_text == "Dana likes decaf" and reembed.changes[0].after["vector_state"] == "fresh"
    assert source.read_record(memory_id) == row  # planning writes nothing


def test_a_purge_takes_the_relations_touching_the_memory(source: SqliteSource) -> None:
    memory_id = source.add_memory("Dana likes decaf")
    other = source.add_memory("Dana is on the webshop team")
    source.add_relation(Relation("r-1", memory_id, other, "RELATED"))
    source.add_relation(Relation("r-2", other, "e-dana", "ABOUT"))
    plan = source.plan(PURGE, source.get(memory_id), {}, CONTEXT)
    assert [(c.record, c.after) for c in plan.changes] == [(memory_id, None), ("relation:r-1", None)]


def test_a_promotion_plans_a_linked_copy(source: SqliteSource) -> None:
    memory_id = source.add_memory("Deploys need two approvals", channel="webshop")
    memory = source.get(memory_id)
    plan = source.plan(PROMOTE, memory, {"to": "_global", "reason": "seen everywhere"}, CONTEXT)
    copy, link = plan.changes
    assert copy.before is None and copy.after["channel"] == "_global" and copy.after["promoted_from"] == memory_id
    assert plan.new_id == copy.record == copy.after["id"] != memory_id
    assert link.record.startswith("relation:") and (link.after["source_id"], link.after["target_id"]) == (
        copy.record, memory_id)
    with pytest.raises(NothingToDoError):
        source.plan(PROMOTE, memory, {"to": "webshop"}, CONTEXT)


def test_a_missing_memory_or_an_unknown_operation_is_refused(source: SqliteSource) -> None:
    memory = source.get(source.add_memory("Dana likes decaf"))
    with pytest.raises(UnsupportedError):
        source.plan("fold", memory, {}, CONTEXT)
    source.write_record(memory.id, source.read_record(memory.id), None)
    with pytest.raises(NotFoundError):
        source.plan(EDIT, memory, {"content": "x"}, CONTEXT)


def test_scratchpad_rows_are_records_too(source: SqliteSource) -> None:
    source.add_session("s1")
    record = source.scratch_record("s1", "retries")
    assert source.is_scratch_record(record) and not source.is_scratch_record("m-1")
    assert source.read_record(record) is None
    new = source.scratch_snapshot(None, "s1", "retries", {"max": 3}, NOW)
    assert source.write_record(record, None, new) == {"session_id": "s1", "key": "retries", "value": '{"max": 3}',
                                                      "updated_at": NOW}
    assert source.scratch_snapshot(new, "s1", "retries", {"max": 3}, "later") is new  # the same value: no change
    with pytest.raises(UnsupportedError):
        source.scratch_snapshot(new, "s1", "retries", object(), NOW)
    assert [(e.key, e.value) for e in source.scratch_entries("s1")] == [("retries", '{"max": 3}')]


def test_a_record_is_read_and_written_back_as_stored(source: SqliteSource) -> None:
    """A relation row, one record at a time: every column as SQLite holds it, a number column
    holding text another program wrote written back as that text (not converted or refused),
    deleted and inserted again, and a row another program gave an extra column keeps it."""
    relation = Relation("r-1", "m-a", "m-b", "ABOUT", "_global", 0.5, None)
    source.add_relation(relation)
    record = "relation:r-1"
    row = source.read_record(record)
    assert row == {"id": "r-1", "source_id": "m-a", "target_id": "m-b", "type": "ABOUT", "channel": "_global",
                   "weight": 0.5, "created_at": None}
    heavy = source.write_record(record, row, {**row, "weight": "heavy"})
    assert heavy == {**row, "weight": "heavy"} == source.read_record(record)
    assert source.relations()[0].weight == 1.0  # read as the default, not refused
    with pytest.raises(ConflictError):
        source.write_record(record, row, None)
    assert source.write_record(record, heavy, None) is None and source.read_record(record) is None
    assert source.write_record(record, None, heavy) == heavy
    con = sqlite3.connect(source.db_path)
    con.execute("ALTER TABLE relations ADD COLUMN note TEXT")
    con.execute("UPDATE relations SET note = 'kept' WHERE id = 'r-1'")
    con.commit()
    con.close()
    noted = source.read_record(record)
    assert noted == {**heavy, "note": "kept"}
    assert source.write_record(record, noted, {**noted, "weight": 2.0}) == {**noted, "weight": 2.0}
    assert source.read_record("relation:r-2") is None


def test_many_records_are_written_set_based_all_or_none(source: SqliteSource) -> None:
    ids = [source.add_memory(f"fact {n}") for n in range(5)]
    memories = [source.get(i) for i in ids]
    assert all(m is not None for m in memories)
    plans = source.plan_many(DELETE, memories, {}, CONTEXT)  # type: ignore[arg-type]
    changes = [c for plan in plans for c in plan.changes]
    assert [c.record for c in changes] == ids
    with sqlite3.connect(source.db_path) as con:  # another writer touches the fourth row
        con.execute("UPDATE memories SET salience = 0.9 WHERE id = ?", (ids[3],))
    with pytest.raises(ConflictError, match=ids[3]):
        source.write_records(changes)
    assert [source.read_record(i)["status"] for i in ids] == ["active"] * 5  # type: ignore[index]

    changes[3] = source.plan(DELETE, source.get(ids[3]), {}, CONTEXT).changes[0]  # type: ignore[arg-type]
    written = source.write_records(changes)
    assert [c.after["status"] for c in written] == ["deleted"] * 5  # type: ignore[index]
    assert [c.after for c in written] == [source.read_record(i) for i in ids]
    undone = source.write_records([Change(c.record, c.after, c.before) for c in reversed(written)])
    assert [c.after for c in reversed(undone)] == [source.read_record(i) for i in ids]
    assert [source.read_record(i)["status"] for i in ids] == ["active"] * 5  # type: ignore[index]


def test_a_bulk_step_that_sets_the_same_values_everywhere_is_one_statement_on_exactly_its_rows(
        source: SqliteSource) -> None:
    """A bulk delete sets every row's status and time alike: one UPDATE over the ids, which
    changes those rows and no other, as the after-images say; a row already deleted only gets
    the new time; the undo puts every row back as it was."""
    ids = [source.add_memory(f"fact {n}") for n in range(150)]
    chosen = ids[10:110]
    with sqlite3.connect(source.db_path) as con:
        con.execute("UPDATE memories SET status = 'deleted' WHERE id = ?", (chosen[5],))
    rows_before = {i: source.read_record(i) for i in ids}
    planned = source.plan_many(DELETE, list(source.get_many(chosen).values()), {}, CONTEXT)
    statements: list[str] = []
    with source.engine.connect() as conn:
        conn.connection.dbapi_connection.set_trace_callback(statements.append)  # type: ignore[union-attr]
    written = source.write_records([c for plan in planned for c in plan.changes])
    updates = [s for s in statements if s.startswith("UPDATE memories")]
    assert len(updates) == 2 and any("json_each" in s for s in updates)  # the 99 alike at once, the odd one apart
    assert {c.record: c.after for c in written} == {i: source.read_record(i) for i in chosen}
    assert all(source.read_record(i) == {**rows_before[i], "status": "deleted", "updated_at": NOW} for i in chosen)
    assert all(source.read_record(i) == rows_before[i] for i in ids if i not in chosen)
    source.write_records([Change(c.record, c.after, c.before) for c in reversed(written)])
    assert {i: source.read_record(i) for i in ids} == rows_before


def test_values_alike_are_alike_in_type_too() -> None:
    rows = [("deleted", NOW, f"m-{n}") for n in range(64)]
    assert _same_values(rows) == ("deleted", NOW)
    assert _same_values(rows[:63]) is None  # too few to be worth a statement of their own
    for value, alike in ((1, 1.0), (1.0, 1), (True, 1)):  # equal in Python, not as SQLite stores them
        mixed = [(value, f"m-{n}") for n in range(63)] + [(alike, "m-63")]
        assert _same_values(mixed) is None


@pytest.mark.parametrize("agent", [
    ["UPDATE memories SET salience = 0.9 WHERE id = :id"],
    # the -wal emptied first: the agent's commit starts it over, at the size it had
    ["PRAGMA wal_checkpoint(TRUNCATE)", "UPDATE memories SET salience = 0.9 WHERE id = :id"],
    ["UPDATE memories SET salience = 0.5 WHERE id = :id"],  # a write of the value it held
])
def test_rows_planned_from_a_bulk_read_are_checked_again_after_any_commit(source: SqliteSource,
                                                                          agent: list[str]) -> None:
    ids = [source.add_memory(f"fact {n}") for n in range(5)]
    with sqlite3.connect(source.db_path) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    planned = source.plan_many(DELETE, list(source.get_many(ids).values()), {}, CONTEXT)
    with contextlib.closing(sqlite3.connect(source.db_path, isolation_level=None)) as con:
        for sql in agent:
            con.execute(sql, {"id": ids[2]}).fetchall()
    changes = [c for plan in planned for c in plan.changes]
    if "0.5" in agent[-1]:  # the row is as planned from: nothing to refuse
        assert [c.after["status"] for c in source.write_records(changes)] == ["deleted"] * 5  # type: ignore[index]
        return
    with pytest.raises(ConflictError, match=ids[2]):
        source.write_records(changes)
    assert [source.read_record(i)["status"] for i in ids] == ["active"] * 5  # type: ignore[index]


def test_rows_planned_from_a_bulk_read_are_written_without_a_second_read(source: SqliteSource) -> None:
    ids = [source.add_memory(f"fact {n}") for n in range(5)]
    planned = source.plan_many(DELETE, list(source.get_many(ids).values()), {}, CONTEXT)
    statements: list[str] = []
    with source.engine.connect() as conn:
        conn.connection.dbapi_connection.set_trace_callback(statements.append)  # type: ignore[union-attr]
    written = source.write_records([c for plan in planned for c in plan.changes])
    during = list(statements)  # (the reads below run on the same pooled connection)
    assert {c.record: c.after for c in written} == {i: source.read_record(i) for i in ids}
    assert not [s for s in during if s.startswith("SELECT * FROM memories")]
    assert [s for s in during if s.startswith("UPDATE memories")]


@pytest.mark.parametrize("agent", [
    [],
    ["UPDATE memories SET salience = 0.9 WHERE id = :id"],
    ["PRAGMA wal_checkpoint(TRUNCATE)", "UPDATE memories SET salience = 0.9 WHERE id = :id"],
])
def test_the_undo_of_the_last_step_reads_its_rows_again_only_after_another_commit(source: SqliteSource,
                                                                                  agent: list[str]) -> None:
    """Right after a step, its rows are what it wrote: its undo writes them back without reading
    them again; an agent's commit in between (even one the -wal starts over for) is caught."""
    ids = [source.add_memory(f"fact {n}") for n in range(5)]
    planned = source.plan_many(DELETE, list(source.get_many(ids).values()), {}, CONTEXT)
    written = source.write_records([c for plan in planned for c in plan.changes])
    with contextlib.closing(sqlite3.connect(source.db_path, isolation_level=None)) as con:
        for sql in agent:
            con.execute(sql, {"id": ids[2]}).fetchall()
    back = [Change(c.record, json.loads(json.dumps(c.after)), c.before) for c in reversed(written)]  # as a journal reads it
    statements: list[str] = []
    with source.engine.connect() as conn:
        conn.connection.dbapi_connection.set_trace_callback(statements.append)  # type: ignore[union-attr]
    if agent:
        with pytest.raises(ConflictError, match=ids[2]):
            source.write_records(back)
        assert [source.read_record(i)["status"] for i in ids] == ["deleted"] * 5  # type: ignore[index]
        return
    source.write_records(back)
    during = list(statements)  # (the reads below run on the same pooled connection)
    assert [source.read_record(i)["status"] for i in ids] == ["active"] * 5  # type: ignore[index]
    assert not [s for s in during if s.startswith("SELECT * FROM memories")]
