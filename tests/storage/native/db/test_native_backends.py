"""The native store gives the same results on SQLite and on a real PostgreSQL server: every test
here runs on both (the ``native`` fixture), with the same assertions."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers.native_backends import native, native_demo  # noqa: F401 (fixtures)
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import ConflictError, Curator, Layer, MemoryQuery, Order, Status
from mnemoscope.storage.errors import ReadOnlyError, StoreError
from mnemoscope.storage.native.db.schema import SCHEMA_VERSION
from mnemoscope.storage.query import sort_key
from mnemoscope.storage.source import bin_by

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
CHANNELS = ("_global", "webshop", "infra")
LAYERS = (Layer.SEMANTIC, Layer.EPISODIC, Layer.PROCEDURAL)


def _fill(native: Any, n: int = 240) -> None:
    source = native.source()
    rows = [
        source.memory_row(
            f"memory {i} about {'cats' if i % 3 == 0 else 'dogs'} and topic{i % 7}",
            layer=LAYERS[i % 3],
            channel=CHANNELS[i % 5 % 3],
            created_at=T0 + timedelta(days=i % 50, hours=i),
            updated_at=T0 + timedelta(days=(i * 7) % 61),  # ties: pages must break them by id
            last_accessed=T0 + timedelta(days=i % 40),
            access_count=i % 9,
            salience=round((i * 37 % 100) / 100, 2),
            status=Status.DELETED if i % 11 == 0 else Status.ACTIVE,
        )
        for i in range(n)
    ]
    source.insert_memory_rows(rows)
    source.close()


QUERIES = [
    MemoryQuery(),
    MemoryQuery(order=Order.SALIENCE),
    MemoryQuery(order=Order.CREATED, descending=False, channels=("webshop",)),
    MemoryQuery(order=Order.ACCESSED, layers=(Layer.EPISODIC,), contains="TOPIC3"),
    MemoryQuery(statuses=(), since=T0 + timedelta(days=10), until=T0 + timedelta(days=30)),
    MemoryQuery(order=Order.EFFECTIVE_SALIENCE, channels=("webshop",)),
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_pages_seeks_and_counts_agree_with_the_whole_ordered_list(native: Any, query: MemoryQuery) -> None:
    _fill(native)
    with native.open() as store:
        everything = list(store.page(query, limit=10_000))
        ids = [m.id for m in everything]
        assert store.count(query) == len(ids) > 0
        third = len(ids) // 3
        assert [m.id for m in store.page(query, limit=15, offset=third)] == ids[third : third + 15]
        assert [m.id for m in store.page(query, limit=15, after=everything[third])] == ids[third + 1 : third + 16]
        if query.order is Order.EFFECTIVE_SALIENCE:  # the database's order is the Python key's
            keys = [sort_key(query.order, query.decay)(m) for m in everything]
            assert keys == sorted(keys, reverse=query.descending)
            return
        keys = [(m.updated_at if query.order == Order.RECENT else getattr(m, {
            Order.SALIENCE: "salience", Order.CREATED: "created_at", Order.ACCESSED: "last_accessed"}[query.order]), m.id)
            for m in everything]
        assert keys == sorted(keys, reverse=query.descending)
        by_channel = store._workspace.db.counts_by("channel", query)
        assert sum(by_channel.values()) == len(ids)
        assert by_channel == {c: sum(1 for m in everything if m.channel == c) for c in by_channel}


def test_timeline_bins_are_the_ones_python_strftime_gives(native: Any) -> None:
    source = native.source()
    days = [T0 + timedelta(days=d, hours=d % 24) for d in range(0, 800, 3)]  # every weekday, year ends
    source.insert_memory_rows([source.memory_row(f"m{i}", created_at=day, channel=CHANNELS[i % 3])
                               for i, day in enumerate(days)])
    source.add_session("s1", started_at=T0)
    source.add_turns("s1", [("user", f"turn {i}", day) for i, day in enumerate(days)])
    with native.open() as store:
        memories = list(store.page(MemoryQuery(statuses=()), limit=10_000))
        for bin_format in ("%Y-%m-%d", "%Y-W%W", "%Y-%m"):
            for group_by in ("channel", "kind"):
                assert source.bin_counts(MemoryQuery(statuses=()), bin_format, group_by) == bin_by(memories, bin_format, group_by)
            expected: dict[str, int] = {}
            for day in days:
                expected[day.strftime(bin_format)] = expected.get(day.strftime(bin_format), 0) + 1
            assert source.turn_bin_counts(bin_format, None, None) == expected
    source.close()


def test_keyword_search_finds_words_and_word_starts_and_follows_edits(native: Any) -> None:
    source = native.source()
    unrelated = source.add_memory("The deploy pipeline runs on Fridays", tags=["infra"])
    cat = source.add_memory("Customers love the checkout redesign", tags=["webshop"])
    source.close()
    with native.open() as store:
        db = store._workspace.db
        assert [m.id for m in db.keyword_search("checkout", MemoryQuery(), 10)] == [cat]
        assert [m.id for m in db.keyword_search("custom", MemoryQuery(), 10)] == [cat]  # a word's start
        assert [m.id for m in db.keyword_search("infra", MemoryQuery(), 10)] == [unrelated]  # tags too
        Curator(store).edit(cat, content="Customers dislike the new basket")
        assert db.keyword_search("checkout", MemoryQuery(), 10) == []
        assert [m.id for m in db.keyword_search("basket", MemoryQuery(), 10)] == [cat]
        assert db.keyword_search("basket", MemoryQuery(channels=("elsewhere",)), 10) == []


def _rows(native: Any) -> dict[str, list[tuple[Any, ...]]]:
    """What an agent reading the store sees: every memory, relation and scratchpad row."""
    return {
        "memories": sorted(native.execute("SELECT * FROM memories")),
        "relations": sorted(native.execute("SELECT * FROM relations")),
        "scratchpad": sorted(native.execute("SELECT * FROM scratchpad")),
    }


def _promotable(store: Any) -> str:
    return next(m.id for m in store.page(MemoryQuery(), limit=500) if m.channel != "_global")


OPERATIONS = {
    "edit": lambda c, i: c.edit(i, content="keep the public API frozen until 2.0", tags=["a"], salience=0.2),
    "promote": lambda c, i: c.promote(i, reason="test", force=True),
    "delete": lambda c, i: c.delete(i),
    "reinforce": lambda c, i: c.reinforce(i),
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_operation_is_undone_exactly_and_redone(native_demo: Any, name: str) -> None:
    with native_demo.open() as store:
        memory_id = _promotable(store)
        before = _rows(native_demo)
        curator = Curator(store)
        OPERATIONS[name](curator, memory_id)
        after = _rows(native_demo)
        assert after != before
        curator.undo()
        assert _rows(native_demo) == before
        curator.redo()
        assert _rows(native_demo) == after
        assert [e.operation for e in store._journal.history(limit=2)] == ["redo", "undo"]


def test_a_bulk_delete_changes_exactly_its_memories_and_undo_puts_them_back(native: Any) -> None:
    """Enough memories that the rows set alike go in one statement over their ids."""
    _fill(native)
    with native.open() as store:
        chosen = [m.id for m in store.page(MemoryQuery(channels=("webshop",)), limit=500)]
        before = _rows(native)
        Curator(store).delete(chosen)
        after = _rows(native)
        changed = {row[0] for row in set(after["memories"]) - set(before["memories"])}
        assert len(chosen) >= 64 and changed == set(chosen)
        assert store.count(MemoryQuery(ids=tuple(chosen), statuses=(Status.DELETED,))) == len(chosen)
        Curator(store).undo()
        assert _rows(native) == before


def test_a_purge_is_done_and_refuses_undo(native_demo: Any) -> None:
    """A purge removes the memory for good: undo refuses in one message and writes nothing, and
    the journal keeps the step with its snapshots redacted."""
    from mnemoscope.storage.errors import UnsupportedError

    with native_demo.open() as store:
        memory_id = _promotable(store)
        content = store.get(memory_id).content
        curator = Curator(store)
        curator.delete(memory_id, purge=True)
        after = _rows(native_demo)
        assert memory_id not in json.dumps(after["memories"], default=str)
        with pytest.raises(UnsupportedError, match="cannot be undone"):
            curator.undo()
        assert _rows(native_demo) == after
        [entry] = store.history(limit=1)
        assert entry.operation == "purge" and content not in json.dumps([entry.before, entry.details])


def test_promotion_links_the_copy_and_candidates_meet_every_threshold(native_demo: Any) -> None:
    with native_demo.open() as store:
        candidates = store.promotion_candidates()
        thresholds = store.settings.promotion
        assert all(m.confidence >= thresholds.confidence and m.access_count >= thresholds.access_count
                   and m.channel != "_global" for m in candidates)
        memory_id = _promotable(store)
        outcome = Curator(store).promote(memory_id, reason="shared", force=True)
        promoted = store.get(outcome.new_ids[0]) if getattr(outcome, "new_ids", None) else None
        links = store.relations(types=("PROMOTED_FROM",), touching=memory_id)
        assert len(links) == 1 and links[0].target_id == memory_id
        if promoted is not None:
            assert promoted.channel == "_global" and promoted.provenance.promoted_from == memory_id


def test_undo_works_across_separate_openings(native_demo: Any) -> None:
    with native_demo.open() as store:
        memory_id = _promotable(store)
    before = _rows(native_demo)
    with native_demo.open() as store:
        Curator(store).edit(memory_id, salience=0.11)
    assert _rows(native_demo) != before
    with native_demo.open() as store:
        Curator(store).undo()
    assert _rows(native_demo) == before


def test_a_concurrent_write_is_detected_not_overwritten(native_demo: Any) -> None:
    with native_demo.open() as store:
        memory_id = _promotable(store)
        seen = store.get(memory_id)
        native_demo.execute("UPDATE memories SET content = 'agent wrote this' WHERE id = ?", (memory_id,))
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).edit(memory_id, content="my edit", expected_revision=seen.revision)
        assert store.get(memory_id).content == "agent wrote this"
        assert store._journal.count() == 0


def test_undo_refuses_when_an_agent_changed_the_memory_since(native_demo: Any) -> None:
    with native_demo.open() as store:
        memory_id = _promotable(store)
        Curator(store).edit(memory_id, content="curated text")
        native_demo.execute("UPDATE memories SET salience = 0.01, access_count = access_count + 1 WHERE id = ?",
                            (memory_id,))
        with pytest.raises(ConflictError):
            Curator(store).undo()
        assert store.get(memory_id).content == "curated text"
        assert store._journal.next_to_undo().operation == "edit"


def test_undo_keeps_the_access_count_an_agent_bumped_since(native_demo: Any) -> None:
    with native_demo.open() as store:
        memory_id = _promotable(store)
        before = store.get(memory_id)
        Curator(store).edit(memory_id, content="curated text")
        for _ in range(10):
            native_demo.execute("UPDATE memories SET access_count = access_count + 1 WHERE id = ?", (memory_id,))
        Curator(store).undo()
        now = store.get(memory_id)
        assert (now.content, now.access_count) == (before.content, (before.access_count or 0) + 10)


def test_scratchpad_edits_keep_their_types_and_undo_puts_them_back(native: Any) -> None:
    source = native.source()
    source.add_session("s1", channel="webshop", started_at=T0)
    source.set_scratch("s1", "todo", {"open": ["write docs"], "done": 3}, T0)
    source.set_scratch("s1", "__taskspace_hint__", "~/work/webshop", T0)
    source.close()
    before = _rows(native)
    with native.open() as store:
        curator = Curator(store)
        seen = {e.key: e.value for e in store.scratch_entries("s1")}
        curator.set_scratch("s1", "todo", {"open": [], "done": 4}, expected=seen["todo"])
        curator.set_scratch("s1", "retries", 3)
        curator.delete_scratch("s1", "__taskspace_hint__", expected=seen["__taskspace_hint__"])
        pad = dict(native.execute("SELECT key, value FROM scratchpad WHERE session_id = ?", ("s1",)))
        assert pad == {"todo": '{"open": [], "done": 4}', "retries": "3"}
        assert json.loads(pad["todo"]) == {"open": [], "done": 4}
        native.execute("UPDATE scratchpad SET value = 'agent' WHERE key = ?", ("retries",))
        with pytest.raises(ConflictError):
            curator.set_scratch("s1", "retries", 4, expected="3")
        native.execute("UPDATE scratchpad SET value = '3' WHERE key = ?", ("retries",))
        for _ in range(3):
            curator.undo()
    assert _rows(native) == before


def test_sessions_turns_entities_and_salience_read_the_same(native_demo: Any) -> None:
    with native_demo.open() as store:
        db = store._workspace.db
        sessions = store.sessions()
        assert sessions and sum(s.turn_count for s in sessions) == db.table_counts()["turns"]
        assert [t.index for t in store.turns(sessions[0].id)] == list(range(sessions[0].turn_count))
        assert store.entities() and store.relations()
        at = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
        active = store.count(MemoryQuery())
        assert sum(db.salience_histogram(0.95, 0.1, at, 10)) == active
        lowest = db.lowest_salience(0.95, 0.1, at, 5)
        model = store.settings.salience
        effective = [model.effective(m, at) for m in lowest]
        assert effective == sorted(effective)


def test_a_read_only_open_writes_nothing(native_demo: Any) -> None:
    before = _rows(native_demo)
    with native_demo.open(read_only=True) as store:
        memory_id = _promotable(store)
        with pytest.raises(ReadOnlyError):
            Curator(store).edit(memory_id, content="no")
        with pytest.raises(StoreError):
            store._workspace.db.touch(memory_id)  # even below the store, the database refuses
    assert _rows(native_demo) == before


def test_the_change_token_changes_when_another_process_writes(native_demo: Any) -> None:
    with native_demo.open() as store:
        db = store._workspace.db
        token = db.change_token()
        assert db.change_token() == token  # reading changes nothing
        store.page(MemoryQuery(), limit=50)
        assert db.change_token() == token
        native_demo.execute("UPDATE memories SET salience = 0.3 WHERE id = ?", (_promotable(store),))
        assert db.change_token() != token


def test_a_path_in_the_store_is_where_it_says(native: Any, tmp_path: Path) -> None:
    _fill(native, 20)
    with native.open() as store:
        memory = store.page(MemoryQuery(), limit=1)[0]
        assert store.get(memory.id) == memory
        assert store.info()["schema_version"] == SCHEMA_VERSION
