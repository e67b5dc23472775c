"""The memories table on a 300k-memory store: first rows and a deep jump, against bare SQL.

Ratios against baselines measured in the same run; the model must only ever
hold the chunks a view showed.
"""

from __future__ import annotations

import inspect
import os
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from helpers.sessions import open_session  # noqa: E402
from mnemoscope.storage import MemoryQuery  # noqa: E402
from mnemoscope.storage.native.db.sqlite_source import SqliteSource  # noqa: E402
from mnemoscope.ui.models.memory_table_model import MemoryTableModel  # noqa: E402

pytestmark = pytest.mark.bench
N = 300_000
CHUNK = inspect.signature(MemoryTableModel).parameters["chunk"].default  # rows the model reads at a time


@pytest.fixture(scope="module")
def huge_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("huge")
    source = SqliteSource.open(root / "memory.db", create=True)
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for start in range(0, N, 20_000):
        source.insert_memory_rows(
            [source.memory_row(f"memory {i} on topic {i % 501}", channel=("a", "b", "c")[i % 3],
                               created_at=t0 + timedelta(seconds=40 * i)) for i in range(start, start + 20_000)]
        )
    source.close()
    return root


def test_first_rows_and_a_deep_jump_cost_about_bare_sql(qtbot, huge_store: Path) -> None:
    con = sqlite3.connect(huge_store / "memory.db")
    t = time.perf_counter()
    con.execute("SELECT count(*) FROM memories WHERE status = 'active'").fetchone()
    con.execute(f"SELECT * FROM memories WHERE status='active' ORDER BY updated_at DESC, id DESC LIMIT {CHUNK}").fetchall()
    baseline_first = time.perf_counter() - t
    t = time.perf_counter()
    con.execute(f"SELECT * FROM memories WHERE status='active' ORDER BY updated_at DESC, id DESC LIMIT {CHUNK} OFFSET 150000").fetchall()
    baseline_deep = time.perf_counter() - t
    con.close()
    with open_session(qtbot, huge_store) as session:
        model = MemoryTableModel(session)
        t = time.perf_counter()
        model.set_query(MemoryQuery())
        qtbot.waitUntil(lambda: model.memory_at(0) is not None, timeout=30_000)
        first = time.perf_counter() - t
        qtbot.waitUntil(lambda: model.total is not None, timeout=30_000)  # the count comes after the first rows
        assert model.rowCount() == model.total == N  # every row counted at once, none read but the first chunk
        assert model.cached_rows() == CHUNK and not model._pending
        t = time.perf_counter()
        model.data(model.index(150_100, 0))  # what a view does when it shows that row
        qtbot.waitUntil(lambda: model.memory_at(150_100) is not None, timeout=30_000)
        deep = time.perf_counter() - t
        cached = model.cached_rows()
    print(f"\n{N} memories: first rows {first * 1e3:.0f} ms (bare SQL {baseline_first * 1e3:.0f} ms), "
          f"row 150100 {deep * 1e3:.0f} ms (bare SQL {baseline_deep * 1e3:.0f} ms), rows held {cached}")
    assert cached == 2 * CHUNK
    assert first < 20 * baseline_first + 0.5
    assert deep < 20 * baseline_deep + 0.5
