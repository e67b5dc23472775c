"""The first page read on the caller's thread within a time budget (MemoryStore.page_at_once):
the window reads its first rows so, as QSqlTableModel does, and hands any read that would make
it wait (a slow filter, a locked file) to a worker instead."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path

import pytest
from bench.native_store import build
from mnemoscope.storage import MemoryQuery, Order, open_store
from mnemoscope.storage.demo import write_demo
from mnemoscope.storage.errors import LockedError


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("native")
    build(path, 30_000)
    return path


def test_a_page_read_in_time_is_the_page(store_path: Path) -> None:
    with open_store(store_path, read_only=True) as store:
        for query in (MemoryQuery(), MemoryQuery(order=Order.SALIENCE), MemoryQuery(channels=("beta",))):
            at_once = store.page_at_once(query, 100, 5.0)
            assert at_once is not None
            assert [m.id for m in at_once] == [m.id for m in store.page(query, 100)]


def test_a_read_past_the_budget_is_stopped_and_the_store_reads_on(store_path: Path) -> None:
    slow = MemoryQuery(contains="no memory holds this")  # a LIKE over every row
    with open_store(store_path, read_only=True) as store:
        began = time.monotonic()
        assert store.page_at_once(slow, 100, 0.001) is None
        assert time.monotonic() - began < 0.5
        assert store.page(slow, 100) == []  # the connection it stopped still reads, whole
        assert len(store.page_at_once(MemoryQuery(), 100, 5.0) or []) == 100


def test_a_locked_file_is_not_waited_for(store_path: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "locked"
    copy.mkdir()
    shutil.copy(store_path / "memory.db", copy / "memory.db")
    with open_store(copy, read_only=True) as store, closing(sqlite3.connect(copy / "memory.db")) as other:
        other.execute("PRAGMA locking_mode = EXCLUSIVE")
        other.execute("BEGIN EXCLUSIVE")  # another program holds the whole file
        began = time.monotonic()
        assert store.page_at_once(MemoryQuery(), 100, 0.05) is None
        assert time.monotonic() - began < 0.5
        with pytest.raises(LockedError):  # what a worker's read would meet, after the busy timeout
            store.page(MemoryQuery(), 100)
        other.rollback()
    with open_store(copy, read_only=True) as store:
        assert len(store.page_at_once(MemoryQuery(), 100, 5.0) or []) == 100


def test_a_workspace_with_markdown_and_vectors_is_read_by_a_worker(tmp_path: Path) -> None:
    write_demo(tmp_path / "ws", now=datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)).close()
    with open_store(tmp_path / "ws", read_only=True) as store:
        assert store.page_at_once(MemoryQuery(), 100, 5.0) is None
