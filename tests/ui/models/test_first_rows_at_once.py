"""A memory.db's first rows are in the table as soon as the query is set (read on the UI thread
within a few milliseconds, as QSqlTableModel reads them); a read that would take longer goes to a
worker, and the count always follows the first rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench.native_store import build
from helpers.sessions import open_session
from mnemoscope.storage import MemoryQuery
from mnemoscope.ui.models import memory_table_model as memory_model
from mnemoscope.ui.models.memory_table_model import MemoryTableModel


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("native")
    build(path, 20_000)
    return path


def test_the_first_rows_are_there_when_the_query_is_set(qtbot, qtmodeltester, store_path: Path) -> None:
    with open_session(qtbot, store_path, read_only=True) as session:
        store = session.store
        model = MemoryTableModel(session)
        model.set_query(MemoryQuery(channels=("alpha",)))
        assert model.total is None  # the count comes after, off the UI thread
        assert [model.memory_at(row).id for row in range(100)] == [m.id for m in store.page(
            MemoryQuery(channels=("alpha",)), 100)]
        qtbot.waitUntil(lambda: model.total is not None)
        assert model.rowCount() == store.count(MemoryQuery(channels=("alpha",)))
        qtmodeltester.check(model)


def test_a_first_page_slower_than_the_budget_is_read_by_a_worker(qtbot, store_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(memory_model, "FIRST_ROWS_AT_ONCE_S", 0.0)
    with open_session(qtbot, store_path, read_only=True) as session:
        store = session.store
        model = MemoryTableModel(session)
        query = MemoryQuery(contains="topic 99")  # a LIKE over every row
        model.set_query(query)
        assert model.memory_at(0) is None  # not waited for on the UI thread
        qtbot.waitUntil(lambda: model.total is not None and model.memory_at(0) is not None)
        assert model.memory_at(0).id == store.page(query, 1)[0].id
