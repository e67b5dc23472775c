"""add_memories: a bulk add in transactions of a batch, with progress and one change event."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.store import StoreEvent


def _workspace(root: Path) -> Path:
    SqliteSource.open(root / "memory.db", create=True).close()
    return root


def test_rows_go_in_by_batches_with_progress(tmp_path: Path) -> None:
    rows = [SqliteSource.memory_row(f"note {i}", channel="alpha") for i in range(2_500)]
    events: list[StoreEvent] = []
    with open_store(_workspace(tmp_path)) as store:
        store.subscribe(events.append)
        reported: list[tuple[int, int]] = []
        assert store.add_memories(rows, progress=lambda *p: reported.append(p), batch=1_000) == 2_500
        assert reported == [(1_000, 2_500), (2_000, 2_500), (2_500, 2_500)]
        assert store.count(MemoryQuery(channels=("alpha",))) == 2_500
        assert [len(e.ids) for e in events] == [2_500]
        # An iterator of unknown length reports no total.
        more = (SqliteSource.memory_row(f"more {i}") for i in range(1_500))
        reported.clear()
        assert store.add_memories(more, progress=lambda *p: reported.append(p), batch=1_000) == 1_500
        assert reported == [(1_000, 0), (1_500, 0)]
        assert store.add_memories([]) == 0
        assert len(events) == 2


def test_a_reader_sees_whole_batches(tmp_path: Path) -> None:
    """Another connection counting while the add runs sees a multiple of the batch, never a
    batch half written."""
    _workspace(tmp_path)
    seen: list[int] = []
    done = threading.Event()

    def watch() -> None:
        con = sqlite3.connect(tmp_path / "memory.db", timeout=10)
        while not done.is_set():
            seen.append(con.execute("SELECT count(*) FROM memories").fetchone()[0])
        con.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with open_store(tmp_path) as store:
            store.add_memories((SqliteSource.memory_row(f"row {i}") for i in range(6_000)), batch=1_500)
    finally:
        done.set()
        watcher.join()
    assert seen and all(n % 1_500 == 0 for n in seen)
    assert max(seen) <= 6_000
