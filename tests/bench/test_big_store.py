"""Big-store benchmarks: ratios against baselines measured in the same run.

A windowed page of a 100k-memory memory.db must cost about what the bare SQL
query costs, and far less than loading the table into Python would.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, Order, open_store
from mnemoscope.storage.native.db.sqlite_source import SqliteSource

pytestmark = pytest.mark.bench
N = 100_000


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    source = SqliteSource.open(root / "memory.db", create=True)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    channels = ["_global", "alpha", "beta", "gamma"]
    batch = []
    for i in range(N):
        batch.append(
            source.memory_row(
                f"fact number {i} about topic {i % 97}",
                channel=channels[i % 4],
                created_at=t0 + timedelta(minutes=i),
                salience=(i % 100) / 100,
                access_count=i % 13,
            )
        )
        if len(batch) == 10_000:
            source.insert_memory_rows(batch)
            batch = []
    source.close()
    return root


def _median_seconds(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def test_windowed_page_costs_about_the_bare_sql_query(big_store: Path) -> None:
    sql = (
        "SELECT * FROM memories WHERE status = 'active' AND channel = 'beta' "
        "ORDER BY updated_at DESC, id DESC LIMIT 50 OFFSET 20000"
    )
    con = sqlite3.connect(big_store / "memory.db")
    baseline = _median_seconds(lambda: con.execute(sql).fetchall())
    naive = _median_seconds(lambda: sorted(con.execute("SELECT * FROM memories").fetchall(), key=lambda r: r[5]), repeat=2)
    con.close()
    with open_store(big_store) as store:
        query = MemoryQuery(channels=("beta",), order=Order.RECENT)
        page = store.page(query, limit=50, offset=20_000)
        assert len(page) == 50
        measured = _median_seconds(lambda: store.page(query, limit=50, offset=20_000))
        counted = _median_seconds(lambda: store.count(query))
    print(f"\npage of 50 at offset 20000 in {N}: store {measured * 1e3:.2f} ms, bare SQL {baseline * 1e3:.2f} ms "
          f"(x{measured / baseline:.1f}), load-all-in-Python {naive * 1e3:.0f} ms; count {counted * 1e3:.2f} ms")
    assert measured < naive / 5, "a page must not cost like loading the store"
    assert measured / baseline < 25


def test_a_page_holds_only_its_window_in_memory(big_store: Path) -> None:
    with open_store(big_store) as store:
        query = MemoryQuery(order=Order.SALIENCE)
        tracemalloc.start()
        store.page(query, limit=50, offset=50_000)
        _, page_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        store.page(query, limit=5_000, offset=0)
        _, big_peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    print(f"\npeak memory: page of 50 {page_peak / 1024:.0f} KiB, page of 5000 {big_peak / 1024:.0f} KiB")
    assert page_peak * 10 < big_peak
