"""salience_now_order.py on real memory.db files: a page of the table sorted by "Salience now",
found from a few candidates off two indexes, is exactly the page the whole-store ORDER BY gives,
in both directions, under the table's filters, for any decay model; and the candidates do prove
it on a store of ordinary shape (the whole store is not ordered after all)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, Status, open_store
from mnemoscope.storage.native.db import salience_now_order
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.query import Order
from mnemoscope.storage.salience import SalienceModel

AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def _fill(root: Path, n: int, seed: int, shape: str) -> None:
    rng = random.Random(seed)
    source = SqliteSource.open(root / "memory.db", create=True)

    def row(i: int) -> dict:
        if shape == "crossed":  # the strongest stored salience the longest idle: the key's two terms pull apart
            u = rng.random()
            idle, salience, count = u * 300 + rng.uniform(0, 20), round(0.02 + u * 0.98, 4), rng.choice((0, 2, 9))
        elif shape == "ties":  # few distinct values: many equal keys, ordered by id
            idle, salience, count = rng.choice((0.0, 10.0, 40.0)), rng.choice((0.0, 0.5, 1.0)), rng.choice((0, 3))
        else:
            idle = rng.expovariate(1 / 5) if rng.random() < 0.9 else rng.uniform(30, 700)
            salience, count = round(rng.random(), 3), rng.choice((0, 0, 1, 3, 40, 5000))
        return source.memory_row(
            f"fact {i}", memory_id=f"m-{rng.randrange(10**9):09d}-{i}", channel=rng.choice(("_global", "shop", "ops")),
            last_accessed=AT - timedelta(days=idle), salience=salience, access_count=count,
            status=Status.DELETED if rng.random() < 0.05 else Status.ACTIVE,
        )

    source.insert_memory_rows([row(i) for i in range(n)])
    source.close()


@pytest.fixture
def rounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Small rounds, so that a few hundred memories take several; and whether each call proved its page."""
    monkeypatch.setattr(salience_now_order, "FIRST_ROUND", 8)
    monkeypatch.setattr(salience_now_order, "LAST_ROUND", 800)
    proved: list[bool] = []
    first_rows = salience_now_order.first_rows

    def recorded(*args: object, **kwargs: object) -> object:
        found = first_rows(*args, **kwargs)  # type: ignore[arg-type]
        proved.append(found is not None)
        return found

    monkeypatch.setattr(salience_now_order, "first_rows", recorded)
    yield proved


def _ids_both_ways(root: Path, query: MemoryQuery, limit: int, offset: int) -> tuple[list[str], list[str]]:
    """The page's ids from candidates, and from the whole store ordered (the same source, told
    its columns may hold NULLs)."""
    with open_store(root, read_only=True) as store:
        db = store._workspace.db
        fast = [m.id for m in db.page(query, limit, offset)]
        db._salience_now_columns_not_null = False
        whole = [m.id for m in db.page(query, limit, offset)]
    return fast, whole


@pytest.mark.parametrize("shape", ["ordinary", "ties"])
@pytest.mark.parametrize("descending", [True, False], ids=["strongest first", "weakest first"])
def test_a_page_from_candidates_is_the_whole_stores(tmp_path: Path, rounds: list[bool], shape: str,
                                                    descending: bool) -> None:
    _fill(tmp_path, 600, seed=7, shape=shape)
    models = [SalienceModel(), SalienceModel(decay_rate=1.0, access_boost=0.0), SalienceModel(decay_rate=0.5, access_boost=2.0)]
    for model in models:
        for channels in ((), ("shop",)):
            query = MemoryQuery(order=Order.EFFECTIVE_SALIENCE, descending=descending, channels=channels,
                                decay=model)
            for limit, offset in ((10, 0), (25, 7), (100, 0)):
                fast, whole = _ids_both_ways(tmp_path, query, limit, offset)
                assert fast == whole, (model, channels, limit, offset)
                assert len(fast) == limit
    if shape == "ordinary":
        assert sum(rounds) >= len(rounds) // 2  # the candidates proved most pages: the whole store was not ordered


def test_a_page_the_candidates_cannot_prove_is_the_whole_stores_all_the_same(
    tmp_path: Path, rounds: list[bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(tmp_path, 300, seed=3, shape="ties")
    monkeypatch.setattr(salience_now_order, "LAST_ROUND", 8)  # one round of 8: too few to prove a page of 20
    query = MemoryQuery(order=Order.EFFECTIVE_SALIENCE, descending=True)
    fast, whole = _ids_both_ways(tmp_path, query, 20, 0)
    assert fast == whole and len(fast) == 20
    fast, whole = _ids_both_ways(tmp_path, query, 50, salience_now_order.MOST_ROWS)  # past the rows it tries
    assert fast == whole == []
    assert rounds == [False, False]


@pytest.mark.parametrize("seed", range(12))
def test_stores_whose_salience_and_idle_time_pull_apart_give_the_whole_stores_pages(
    tmp_path: Path, rounds: list[bool], monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """The rows of least (or most) key sit between the two lists' heads: only a sound bound lets
    the candidates stop early."""
    monkeypatch.setattr(salience_now_order, "FIRST_ROUND", 2)
    _fill(tmp_path, 250, seed=seed, shape="crossed")
    rng = random.Random(seed)
    model = SalienceModel(decay_rate=rng.choice((0.99, 0.995, 0.999)), access_boost=rng.choice((0.0, 0.1, 1.0)))
    for descending in (True, False):
        query = MemoryQuery(order=Order.EFFECTIVE_SALIENCE, descending=descending, decay=model)
        limit = rng.choice((1, 5, 20))
        fast, whole = _ids_both_ways(tmp_path, query, limit, 0)
        assert fast == whole


@pytest.mark.parametrize(("descending", "count"), [(False, 0), (True, 0), (True, 10_000)],
                         ids=["weakest first", "strongest first", "strongest first, much used"])
def test_a_row_just_inside_the_bound_outside_both_lists_is_found(
    tmp_path: Path, rounds: list[bool], monkeypatch: pytest.MonkeyPatch, descending: bool, count: int
) -> None:
    """Four rows lead the salience list and four the last-access list, their keys 0.2 from the
    bound those lists give; a fifth row in neither list lies 0.1 from it, ahead of them all. A
    bound that claims 0.3 too much, or too little of the largest access count's term (every row
    here has count), would stop at the first round and miss it."""
    monkeypatch.setattr(salience_now_order, "FIRST_ROUND", 4)
    model = SalienceModel(decay_rate=0.99, access_boost=1.0)
    c = -math.log(model.decay_rate)
    sign = -1 if descending else 1  # the bound is below every row weakest first, above strongest first
    base, idle = 0.1 if not descending else 0.9, 100.0  # the lists' k-th salience and idle time
    # key (less the common term) = ln(salience) - idle x c; bound = ln(base) - idle x c
    by_salience = [(base, idle - sign * 0.2 / c)] * 4
    by_access = [(base * math.exp(sign * 0.2), idle)] * 4
    inside = [(base * math.exp(sign * 0.05), idle - sign * 0.05 / c)]
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    rows = [source.memory_row(f"fact {i}", memory_id=f"m-{i:02d}", salience=round(s, 12),
                              last_accessed=AT - timedelta(days=days), access_count=count)
            for i, (s, days) in enumerate(by_salience + by_access + inside)]
    filler = [(base * math.exp(sign * 3), idle - sign * 3 / c)] * 20  # far behind every one of them
    rows += [source.memory_row(f"far {i}", memory_id=f"m-far-{i:02d}", salience=min(max(s, 0.0), 1.0),
                               last_accessed=AT - timedelta(days=days), access_count=count)
             for i, (s, days) in enumerate(filler)]
    source.insert_memory_rows(rows)
    source.close()
    query = MemoryQuery(order=Order.EFFECTIVE_SALIENCE, descending=descending, decay=model)
    fast, whole = _ids_both_ways(tmp_path, query, 1, 0)
    assert fast == whole == ["m-08"]
