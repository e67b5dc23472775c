"""What a caller asks of a store: a query's filters and orders, run where the data lives, agree
with the Python-side keys that merge pages of several stores."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import open_store
from mnemoscope.storage.model import Kind, Layer, Memory, SourceRef, Status
from mnemoscope.storage.query import MemoryQuery, Order, effective_salience_key, sort_key
from mnemoscope.storage.salience import SalienceModel

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def _memory(memory_id: str, *, salience: float = 0.5, idle_days: float = 0, accesses: int = 0) -> Memory:
    at = NOW - timedelta(days=idle_days)
    return Memory(memory_id, SourceRef(Kind.SQLITE, f"memory.db:memories/{memory_id}"), Layer.SEMANTIC, "_global",
                  "text", at, at, at, access_count=accesses, salience=salience)


def test_a_default_query_asks_for_active_memories_newest_first() -> None:
    query = MemoryQuery()
    assert query.statuses == (Status.ACTIVE,) and query.order is Order.RECENT and query.descending
    assert query.wants_kind(Kind.CHROMA)
    only_markdown = MemoryQuery(kinds=(Kind.MARKDOWN,), ids=("a", "b", "a"))
    assert only_markdown.wants_kind(Kind.MARKDOWN) and not only_markdown.wants_kind(Kind.SQLITE)
    assert only_markdown.id_set == {"a", "b"}


@pytest.mark.parametrize("order", list(Order))
def test_the_store_orders_as_the_python_key_does(demo_path: Path, order: Order) -> None:
    with open_store(demo_path, read_only=True) as store:
        query = MemoryQuery(order=order)
        page = store.page(query, 60)
    key = sort_key(order, query.decay)
    assert len(page) == 60
    assert [key(m) for m in page] == sorted((key(m) for m in page), reverse=True)


def test_filters_run_in_the_store(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        webshop = store.page(MemoryQuery(channels=("webshop",)), 500)
        assert webshop and {m.channel for m in webshop} == {"webshop"}
        assert len(webshop) == store.count(MemoryQuery(channels=("webshop",)))
        found = store.page(MemoryQuery(contains="RELEASE"), 500)
        assert found and all("release" in m.content.lower() for m in found)
        since = NOW - timedelta(days=10)
        recent = store.page(MemoryQuery(since=since), 500)
        assert recent and all(m.created_at >= since for m in recent)
        chosen = [m.id for m in webshop[:3]]
        assert sorted(m.id for m in store.page(MemoryQuery(ids=tuple(chosen)), 50)) == sorted(chosen)


def test_effective_salience_key_orders_as_effective_salience_does_at_any_time() -> None:
    decay = SalienceModel()
    memories = [_memory("fresh-low", salience=0.3), _memory("old-high", salience=0.9, idle_days=40),
                _memory("read-often", salience=0.5, idle_days=5, accesses=30), _memory("zero", salience=0.0)]
    by_key = sorted(memories, key=lambda m: effective_salience_key(m, decay), reverse=True)
    for later in (NOW, NOW + timedelta(days=100)):
        by_value = sorted(memories, key=lambda m: decay.effective(m, later), reverse=True)
        assert [m.id for m in by_key] == [m.id for m in by_value]


def test_a_salience_its_owner_decays_orders_as_it_is_and_one_not_kept_orders_last() -> None:
    from mnemoscope.storage.salience import NOT_KEPT, OWNERS_DECAY, declare_salience

    declare_salience("query-test-owner", OWNERS_DECAY, "its own score")
    declare_salience("query-test-none", NOT_KEPT, "its files")
    decay = SalienceModel()
    at = NOW + timedelta(days=10)
    native = [_memory("native-high", salience=0.9), _memory("native-low", salience=0.3, idle_days=30)]
    owners = Memory("owner", SourceRef(Kind.SQLITE, "x", format="query-test-owner"), Layer.SEMANTIC, "_global", "t",
                    NOW - timedelta(days=400), NOW - timedelta(days=400), NOW - timedelta(days=400), salience=0.5)
    none = Memory("none", SourceRef(Kind.MARKDOWN, "y", format="query-test-none"), Layer.SEMANTIC, "_global", "t",
                  NOW, NOW, NOW, salience=0.99)
    # the owner's 0.5 is its value now, a year idle or not; the one kept by nobody comes last
    assert decay.effective(owners, at) == 0.5 and decay.effective_shown(none, at) is None
    by_value = ["native-high", "owner", "native-low"]
    assert [m.id for m in sorted([*native, owners], key=lambda m: decay.effective(m, at), reverse=True)] == by_value
    key = sort_key(Order.EFFECTIVE_SALIENCE, decay)
    with_now = [m.id for m in sorted([*native, owners, none], key=lambda m: (effective_salience_key(m, decay, at), m.id),
                                     reverse=True)]
    assert with_now == [*by_value, "none"]
    assert sorted([*native, owners, none], key=key, reverse=True)[-1].id == "none"
    assert sorted([owners, none], key=sort_key(Order.SALIENCE), reverse=True)[-1].id == "none"
