"""Bulk ingest: MemoryStore.add_memories against a raw executemany of the same rows into the same
schema (its indexes and FTS triggers included), each into a new memory.db, in one run.
Sizes: 1M with MNEMOSCOPE_BENCH_SCALE=full, 50k otherwise."""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from bench.harness import Row, record, sizes
from mnemoscope.storage import open_store
from mnemoscope.storage.native.db.sqlite_source import SqliteSource

pytestmark = pytest.mark.bench
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
BATCH = 20_000


def _rows(n: int) -> list[dict[str, Any]]:
    return [
        SqliteSource.memory_row(
            f"fact number {i} about topic {i % 997} from the agent's day",
            channel=("_global", "alpha", "beta")[i % 3],
            created_at=T0 + timedelta(seconds=30 * i),
            salience=(i % 100) / 100,
        )
        for i in range(n)
    ]


def _new_db(folder: Path) -> Path:
    folder.mkdir()
    SqliteSource.open(folder / "memory.db", create=True).close()
    return folder / "memory.db"


@pytest.mark.parametrize("size", sizes(full=[1_000_000], ci=[50_000]), ids=lambda n: f"{n // 1000}k")
def test_bulk_ingest(tmp_path: Path, size: int) -> None:
    rows = _rows(size)
    columns = list(rows[0])
    sql = f"INSERT INTO memories ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"

    con = sqlite3.connect(_new_db(tmp_path / "baseline"))
    start = time.perf_counter()
    for at in range(0, size, BATCH):
        with con:
            con.executemany(sql, [tuple(r[c] for c in columns) for r in rows[at : at + BATCH]])
    baseline = time.perf_counter() - start
    con.close()

    _new_db(tmp_path / "project")
    reported: list[tuple[int, int]] = []
    with open_store(tmp_path / "project") as store:
        start = time.perf_counter()
        added = store.add_memories(rows, progress=lambda done, total: reported.append((done, total)))
        project = time.perf_counter() - start
        assert added == size == store.count()
    assert reported[-1] == (size, size) and len(reported) == -(-size // BATCH)

    # Ratios of times: project/baseline <= 2 is a rate >= 0.5x the baseline's.
    row = record(Row("ingest", f"add_memories, {size // 1000}k rows ({size / project:,.0f} rows/s)", size, project,
                     f"executemany ({size / baseline:,.0f} rows/s)", baseline, 2.0))
    assert row.bounded
