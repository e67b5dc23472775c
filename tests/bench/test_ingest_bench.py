"""Bulk ingest: MemoryStore.add_memories against the bulk load a person writes with sqlite3 for the
same end state, each into a new memory.db (the product's schema, its indexes and FTS5 index), in
one run. Both start from the same items (an agent's content, channel, time and salience) and
both timers hold the same work: opening the store, preparing every row (an id, the times as
text, the defaults memory.db keeps), one transaction per 20k rows that inserts them and indexes
them for full-text search in one statement (the FTS trigger dropped and made again inside it, so
that a kill leaves whole batches), and closing. Streamed: neither side holds every row at once.
Sizes: 1M with MNEMOSCOPE_BENCH_SCALE=full, 50k otherwise (three rounds in turns)."""

from __future__ import annotations

import contextlib
import sqlite3
import statistics
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bench.harness import FULL, Row, record, sizes
from mnemoscope.storage import open_store
from mnemoscope.storage.native.db.schema_sql import FTS_INSERT_TRIGGER
from mnemoscope.storage.native.db.sqlite_source import SqliteSource

pytestmark = pytest.mark.bench
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
BATCH = 20_000
Item = tuple[str, str, datetime, float]
COLUMNS = ("id", "layer", "channel", "content", "created_at", "updated_at", "last_accessed", "access_count",
           "salience", "confidence", "conversations", "tags", "metadata", "status", "promoted_from", "derived_from",
           "imported_from", "import_key", "md_file", "vector_state")


def _items(n: int) -> list[Item]:
    """What an agent hands over: content, channel, when, salience."""
    return [(f"fact number {i} about topic {i % 997} from the agent's day", ("_global", "alpha", "beta")[i % 3],
             T0 + timedelta(seconds=30 * i), (i % 100) / 100) for i in range(n)]


def _new_db(folder: Path) -> Path:
    folder.mkdir()
    SqliteSource.open(folder / "memory.db", create=True).close()
    return folder / "memory.db"


def _project(folder: Path, items: list[Item], reported: list[tuple[int, int]]) -> int:
    with open_store(folder) as store:
        rows = (store.memory_row(content, channel=channel, created_at=at, salience=salience)
                for content, channel, at, salience in items)
        return store.add_memories(rows, progress=lambda done, total: reported.append((done, total)))


def _batches(items: list[Item]) -> Iterator[list[tuple]]:
    """The rows as memory_row makes them, as plain tuples in COLUMNS' order, BATCH at a time."""
    for at in range(0, len(items), BATCH):
        rows = []
        for content, channel, created, salience in items[at : at + BATCH]:
            iso = created.isoformat()
            rows.append((f"m-{uuid.uuid4().hex[:12]}", "semantic", channel, content, iso, iso, iso, 0, float(salience),
                         1.0, 0, "[]", "{}", "active", None, "[]", None, None, None, "none"))
        yield rows


def _baseline(db: Path, items: list[Item]) -> int:
    insert = f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA synchronous = NORMAL")  # WAL's usual setting, which the store's connections use too
    added = 0
    with contextlib.closing(con):
        for rows in _batches(items):
            con.execute("BEGIN IMMEDIATE")
            (before,) = con.execute("SELECT coalesce(max(rowid), 0) FROM memories").fetchone()
            con.execute("DROP TRIGGER memories_fts_ai")
            con.executemany(insert, rows)
            con.execute("INSERT INTO memories_fts(rowid, content, tags) SELECT rowid, content, tags FROM memories "
                        "WHERE rowid > ?", (before,))
            con.execute(FTS_INSERT_TRIGGER)
            con.execute("COMMIT")
            added += len(rows)
    return added


def _same_end_state(project_db: Path, baseline_db: Path, size: int) -> None:
    """Both files hold the same memories (ids and times of addition aside), all indexed."""
    columns = ", ".join(c for c in COLUMNS if c != "id")
    for db in (project_db, baseline_db):
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
            assert con.execute("SELECT count(*) FROM memories").fetchone()[0] == size
            assert con.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'topic'").fetchone()[0] == size
            assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'memories_fts_ai'").fetchone()[0] == 1
    with contextlib.closing(sqlite3.connect(f"file:{project_db}?mode=ro", uri=True)) as con:
        con.execute(f"ATTACH 'file:{baseline_db}?mode=ro' AS b")
        sample = f"SELECT {columns} FROM {{}}memories WHERE rowid % 997 = 1 ORDER BY rowid"
        assert con.execute(sample.format("main.")).fetchall() == con.execute(sample.format("b.")).fetchall()


@pytest.mark.parametrize("size", sizes(full=[1_000_000], ci=[50_000]), ids=lambda n: f"{n // 1000}k")
def test_bulk_ingest(tmp_path: Path, size: int) -> None:
    items = _items(size)
    project_times, baseline_times = [], []
    for round_ in range(1 if FULL else 3):  # in turns: each side meets the machine's load alike
        folder, db = tmp_path / f"project{round_}", tmp_path / f"baseline{round_}" / "memory.db"
        _new_db(folder)
        _new_db(db.parent)
        reported: list[tuple[int, int]] = []
        start = time.perf_counter()
        assert _project(folder, items, reported) == size
        project_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        assert _baseline(db, items) == size
        baseline_times.append(time.perf_counter() - start)
        assert [done for done, _total in reported] == [min(size, at + BATCH) for at in range(0, size, BATCH)]
        _same_end_state(folder / "memory.db", db, size)
    project, baseline = statistics.median(project_times), statistics.median(baseline_times)

    # Ratios of times: project/baseline <= 2 is a rate >= 0.5x the baseline's.
    row = record(Row("ingest", f"open + add_memories, {size // 1000}k rows ({size / project:,.0f} rows/s)", size,
                     project, f"sqlite3 bulk load, FTS in bulk ({size / baseline:,.0f} rows/s)", baseline, 2.0))
    assert row.bounded
