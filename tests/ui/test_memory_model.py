"""The windowed memories model over the real demo store."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QModelIndex, Qt

from mnemoscope.storage import Kind, MemoryQuery, Order, open_store
from mnemoscope.ui.memory_model import PLACEHOLDER, MemoryTableModel


@pytest.fixture
def store(demo_path: Path):
    with open_store(demo_path) as opened:
        yield opened


def _loaded(qtbot, model: MemoryTableModel) -> None:
    qtbot.waitUntil(lambda: model.total is not None and model.rowCount() > 0 and model.memory_at(0) is not None)


def test_rows_arrive_in_windows_below_the_total(qtbot, store) -> None:
    model = MemoryTableModel(store, chunk=50)
    with qtbot.waitSignal(model.total_changed) as total:
        model.set_query(MemoryQuery())
    assert total.args == [store.count()]
    assert model.rowCount() == 50 < store.count()
    assert model.canFetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    assert model.rowCount() == 100


def test_placeholders_until_the_chunk_arrives(qtbot, store) -> None:
    model = MemoryTableModel(store, chunk=50)
    with qtbot.waitSignal(model.chunk_loaded):
        model.set_query(MemoryQuery())
    model.fetchMore(QModelIndex())
    assert model.data(model.index(60, 0)) == PLACEHOLDER
    qtbot.waitUntil(lambda: model.memory_at(60) is not None)
    expected = store.page(MemoryQuery(), limit=1, offset=60)[0]
    assert model.data(model.index(60, 0)) == expected.content.splitlines()[0]


def test_model_passes_the_qt_model_tester(qtbot, qtmodeltester, store) -> None:
    model = MemoryTableModel(store, chunk=50)
    model.set_query(MemoryQuery())
    _loaded(qtbot, model)
    qtbot.waitUntil(lambda: model.memory_at(49) is not None)
    qtmodeltester.check(model)


def test_stale_results_are_dropped_when_the_filter_changes(qtbot, store) -> None:
    model = MemoryTableModel(store, chunk=50)
    model.set_query(MemoryQuery())
    model.set_query(MemoryQuery(channels=("webshop",), kinds=(Kind.SQLITE,)))
    with qtbot.waitSignal(model.chunk_loaded):
        pass
    qtbot.waitUntil(lambda: model.total == store.count(model.query))
    rows = [model.memory_at(r) for r in range(model.rowCount())]
    assert rows and all(m.channel == "webshop" and m.source.kind is Kind.SQLITE for m in rows)


def test_header_sort_is_done_by_the_store(qtbot, store) -> None:
    model = MemoryTableModel(store, chunk=50)
    model.set_query(MemoryQuery(kinds=(Kind.SQLITE,)))
    _loaded(qtbot, model)
    model.sort(7, Qt.SortOrder.AscendingOrder)  # Salience
    assert model.query.order is Order.SALIENCE and not model.query.descending
    qtbot.waitUntil(lambda: model.memory_at(model.rowCount() - 1) is not None)
    values = [model.memory_at(r).salience for r in range(model.rowCount())]
    assert values == sorted(values)
    model.sort(0, Qt.SortOrder.AscendingOrder)  # Content: not sortable in the store, ignored
    assert model.query.order is Order.SALIENCE
