"""What undo and redo check before writing a step again, on records read from the demo's own files:
an agent's counters (top level in memory.db, in the metadata of a vector record) are rebased onto,
anything else is a conflict."""

from __future__ import annotations

from pathlib import Path

from helpers.store_state import sql_rows
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION, record_id_for
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.replay import only_counters_moved, past_agent_counters, with_counters_of
from mnemoscope.storage.source import Change


def _records(demo_path: Path) -> tuple[dict, dict]:
    memory_id = sql_rows(demo_path, "SELECT id FROM memories ORDER BY id LIMIT 1")[0][0]
    with open_store(demo_path, read_only=True) as store:
        row = store.writer_for(memory_id).read_record(memory_id)
        vector_id = record_id_for(NATIVE_COLLECTION, memory_id)
        vector = store.writer_for(vector_id).read_record(vector_id)
    assert row is not None and vector is not None and isinstance(vector["metadata"], dict)
    return row, vector


def test_only_the_agents_counters_moving_is_no_conflict(demo_path: Path) -> None:
    row, vector = _records(demo_path)
    bumped = {**row, "access_count": (row["access_count"] or 0) + 3, "last_accessed": "2026-11-29T09:00:00+00:00"}
    assert only_counters_moved(bumped, row)
    assert not only_counters_moved({**bumped, "content": "the agent rewrote it"}, row)
    assert not only_counters_moved(None, row) and not only_counters_moved(row, None)
    nested = {**vector, "metadata": {**vector["metadata"], "access_count": 99}}
    assert only_counters_moved(nested, vector)
    assert not only_counters_moved({**nested, "metadata": {**nested["metadata"], "layer": "core"}}, vector)


def test_a_target_keeps_the_counters_as_they_now_are(demo_path: Path) -> None:
    row, vector = _records(demo_path)
    now = {**row, "access_count": 42, "last_accessed": "2026-11-29T09:00:00+00:00"}
    target = {**row, "content": "as it was before the edit"}
    kept = with_counters_of(target, now)
    assert kept["content"] == "as it was before the edit" and kept["access_count"] == 42
    assert kept["last_accessed"] == "2026-11-29T09:00:00+00:00" and target["access_count"] == row["access_count"]
    assert with_counters_of(None, now) is None
    inner = with_counters_of(vector, {**vector, "metadata": {**vector["metadata"], "access_count": 7}})
    assert inner["metadata"]["access_count"] == 7


def test_changes_are_rebased_only_where_every_record_moved_by_counters_alone(demo_path: Path) -> None:
    memory_id = sql_rows(demo_path, "SELECT id FROM memories ORDER BY id LIMIT 1")[0][0]
    with open_store(demo_path, read_only=True) as store:
        now = store.writer_for(memory_id).read_record(memory_id)
        earlier = {**now, "access_count": (now["access_count"] or 0) - 1 if now["access_count"] else None,
                   "last_accessed": "2020-01-01T00:00:00+00:00"}
        wanted = {**earlier, "content": "before the edit"}
        [rebased] = past_agent_counters([Change(memory_id, earlier, wanted)], store.writer_for)
        assert rebased.before == now and rebased.after == {**wanted, "access_count": now["access_count"],
                                                            "last_accessed": now["last_accessed"]}
        assert past_agent_counters([Change(memory_id, now, wanted)], store.writer_for) is None  # nothing moved
        other = {**earlier, "salience": 0.0123}
        assert past_agent_counters([Change(memory_id, other, wanted)], store.writer_for) is None  # a real conflict


def test_a_record_the_step_would_remove_is_not_rebased_past_the_agents_use_of_it(demo_path: Path) -> None:
    memory_id = sql_rows(demo_path, "SELECT id FROM memories ORDER BY id LIMIT 1")[0][0]
    with open_store(demo_path, read_only=True) as store:
        now = store.writer_for(memory_id).read_record(memory_id)
        earlier = {**now, "access_count": (now["access_count"] or 0) + 1}
        assert past_agent_counters([Change(memory_id, earlier, None)], store.writer_for) is None


def test_a_reinforce_undone_after_the_agent_used_the_memory_takes_back_its_own_bump_only(demo_path: Path) -> None:
    """The person's reinforce counted one access; the agent then counted 5 of its own. Undo takes
    back the person's one and keeps the agent's 5 and its newer last access; redo counts it again."""
    import sqlite3

    from mnemoscope.storage import Curator

    memory_id = sql_rows(demo_path, "SELECT id FROM memories WHERE status = 'active' ORDER BY id LIMIT 1")[0][0]
    with open_store(demo_path) as store:
        start = store.get(memory_id).access_count or 0
        Curator(store).reinforce([memory_id])
        assert store.get(memory_id).access_count == start + 1
    con = sqlite3.connect(demo_path / "memory.db")
    for _ in range(5):
        con.execute("UPDATE memories SET access_count = access_count + 1, last_accessed = "
                    "'2099-01-01T00:00:00+00:00' WHERE id = ?", (memory_id,))
    con.commit()
    con.close()
    with open_store(demo_path) as store:
        Curator(store).undo()
        undone = store.get(memory_id)
        assert undone.access_count == start + 5 and undone.last_accessed.year == 2099
        Curator(store).redo()
        assert store.get(memory_id).access_count == start + 6
