"""The windowed memories model over the real demo store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers.sessions import open_session
from helpers.table_rows import read_every_row
from mnemoscope.storage import Kind, MemoryQuery, Order
from mnemoscope.storage.curation import Curator
from mnemoscope.ui.models.memory_table_model import PLACEHOLDER, MemoryTableModel
from PySide6.QtCore import QModelIndex, Qt


@pytest.fixture
def session(qtbot, demo_path: Path):
    with open_session(qtbot, demo_path) as opened:
        yield opened


@pytest.fixture
def store(session):
    return session.store


def _loaded(qtbot, model: MemoryTableModel) -> None:
    """The first chunk read and the count in (the first rows come first, the count after)."""
    qtbot.waitUntil(lambda: model.total is not None and model.rowCount() > 0 and model.memory_at(0) is not None)


def test_every_row_is_counted_at_once_and_only_the_first_chunk_is_read(qtbot, session, store) -> None:
    model = MemoryTableModel(session, chunk=50)
    model.set_query(MemoryQuery())
    _loaded(qtbot, model)
    assert model.total == model.rowCount() == store.count() > 100
    assert not model.canFetchMore(QModelIndex())
    assert model.cached_rows() == 50


def test_a_chunk_after_a_read_one_is_the_rows_after_its_last_row(qtbot, session, store) -> None:
    query = MemoryQuery(order=Order.CREATED)
    model = MemoryTableModel(session, chunk=50)
    model.set_query(query)
    _loaded(qtbot, model)
    for row in (50, 100, 150):
        with qtbot.waitSignal(model.chunk_loaded):
            model.data(model.index(row, 0))
    shown = [model.memory_at(r).id for r in range(200)]
    assert shown == [m.id for m in store.page(query, 200)]


def test_the_cache_keeps_only_the_chunks_read_last(qtbot, session, store, monkeypatch) -> None:
    monkeypatch.setattr("mnemoscope.ui.models.memory_table_model.MAX_CHUNKS", 3)
    model = MemoryTableModel(session, chunk=20)
    model.set_query(MemoryQuery())
    _loaded(qtbot, model)
    for row in (40, 80, 120):
        with qtbot.waitSignal(model.chunk_loaded):
            model.data(model.index(row, 0))
    assert model.cached_rows() == 60 and model.memory_at(0) is None and model.memory_at(120) is not None
    assert model.data(model.index(0, 0)) == PLACEHOLDER  # read again when shown
    qtbot.waitUntil(lambda: model.memory_at(0) is not None)


def test_placeholders_until_the_chunk_arrives(qtbot, session, store) -> None:
    model = MemoryTableModel(session, chunk=50)
    model.set_query(MemoryQuery())
    _loaded(qtbot, model)
    assert model.data(model.index(60, 0)) == PLACEHOLDER
    qtbot.waitUntil(lambda: model.memory_at(60) is not None)
    expected = store.page(MemoryQuery(), limit=1, offset=60)[0]
    assert model.data(model.index(60, 0)) == expected.content.splitlines()[0]


def test_model_passes_the_qt_model_tester(qtbot, session, qtmodeltester, store) -> None:
    model = MemoryTableModel(session, chunk=50)
    model.set_query(MemoryQuery())
    _loaded(qtbot, model)
    qtbot.waitUntil(lambda: model.memory_at(49) is not None)
    qtmodeltester.check(model)


def test_stale_results_are_dropped_when_the_filter_changes(qtbot, session, store) -> None:
    model = MemoryTableModel(session, chunk=50)
    model.set_query(MemoryQuery())
    model.set_query(MemoryQuery(channels=("webshop",), kinds=(Kind.SQLITE,)))
    with qtbot.waitSignal(model.chunk_loaded):
        pass
    qtbot.waitUntil(lambda: model.total == store.count(model.query))
    rows = read_every_row(qtbot, model)
    assert rows and all(m.channel == "webshop" and m.source.kind is Kind.SQLITE for m in rows)


def test_header_sort_is_done_by_the_store(qtbot, session, store) -> None:
    model = MemoryTableModel(session, chunk=50)
    model.set_query(MemoryQuery(kinds=(Kind.SQLITE,)))
    _loaded(qtbot, model)
    # Salience: effective (decayed), as the salience view; its header says so (the detail shows the stored one).
    assert model.headerData(7, Qt.Orientation.Horizontal) == "Salience now"
    assert "stored value" in model.headerData(7, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    model.sort(7, Qt.SortOrder.AscendingOrder)
    assert model.query.order is Order.EFFECTIVE_SALIENCE and not model.query.descending
    values = [model.effective_salience(m) for m in read_every_row(qtbot, model)]
    assert values == sorted(values)
    model.sort(0, Qt.SortOrder.AscendingOrder)  # Content: not sortable in the store, ignored
    assert model.query.order is Order.EFFECTIVE_SALIENCE


def test_the_first_rows_are_shown_before_the_count_is_in(qtbot, session, store) -> None:
    model = MemoryTableModel(session, chunk=50)
    with qtbot.waitSignal(model.chunk_loaded):
        model.set_query(MemoryQuery())
    if model.total is None:  # the count's worker may have answered first on a quiet machine
        assert model.rowCount() == 50 and model.memory_at(49) is not None
    _loaded(qtbot, model)
    assert model.rowCount() == store.count()


def test_an_edit_elsewhere_repaints_only_its_row(qtbot, session, store) -> None:
    """A refresh after an edit swaps the rows in place: one row changes, nothing moves."""
    query = MemoryQuery(order=Order.CREATED, kinds=(Kind.SQLITE,))
    model = MemoryTableModel(session, chunk=50)
    model.set_query(query)
    _loaded(qtbot, model)
    qtbot.waitUntil(lambda: model.memory_at(10) is not None)
    before = [model.data(model.index(r, 0)) for r in range(model.rowCount()) if model.memory_at(r) is not None]
    qtbot.waitUntil(lambda: all(model.flag_known(model.memory_at(r)) for r in range(len(before))))  # scanned on a worker
    target = model.memory_at(3)
    Curator(store).edit(target.id, expected_revision=target.revision, content="rewritten by another window")
    changed: list[tuple[int, int]] = []
    moved: list[bool] = []
    model.dataChanged.connect(lambda first, last, _roles=(): changed.append((first.row(), last.row())))
    model.layoutChanged.connect(lambda *_: moved.append(True))
    with qtbot.waitSignal(model.refreshed):
        model.refresh()
    assert set(changed) == {(3, 3)} and moved == []  # (its Findings cell again once its new revision is scanned)
    after = [model.data(model.index(r, 0)) for r in range(len(before))]
    assert after[3] == "rewritten by another window"
    assert after[:3] + after[4:] == before[:3] + before[4:]


def test_an_agent_write_on_the_demo_store_is_read_back_and_the_model_stays_sound(
    qtbot, session, store, demo_path: Path, qtmodeltester
) -> None:
    """Every kind of row the demo shows (memory.db, vectors, markdown) through a refresh for
    another process's write: the edited row changes, a deleted one goes, and the rest stay."""
    model = MemoryTableModel(session, chunk=50)
    model.set_query(MemoryQuery())
    rows = read_every_row(qtbot, model)
    assert {m.source.kind for m in rows} >= {Kind.SQLITE, Kind.MARKDOWN}
    edited, deleted = [m for m in rows if m.source.kind is Kind.SQLITE][2:4]
    con = sqlite3.connect(demo_path / "memory.db")
    with con:
        con.execute("UPDATE memories SET content = 'the agent rewrote this' WHERE id = ?", (edited.id,))
        con.execute("DELETE FROM memories WHERE id = ?", (deleted.id,))
    con.close()
    session.changed.connect(model.refresh)
    with qtbot.waitSignal(model.refreshed):
        assert store.poll()
    assert model.total == model.rowCount() == len(rows) - 1
    after = read_every_row(qtbot, model)
    assert [m.id for m in after] == [m.id for m in store.page(MemoryQuery(), len(rows))]
    assert deleted.id not in {m.id for m in after}
    assert model.data(model.index(model.row_of(edited.id), 0)) == "the agent rewrote this"
    qtmodeltester.check(model)


def test_a_step_naming_its_ids_repaints_only_their_rows(qtbot, session, store, qtmodeltester) -> None:
    query = MemoryQuery(order=Order.CREATED)
    model = MemoryTableModel(session, chunk=50)
    model.set_query(query)
    _loaded(qtbot, model)
    qtbot.waitUntil(lambda: model.memory_at(49) is not None)
    row = next(r for r in range(50) if model.memory_at(r).source.kind is Kind.SQLITE)  # its id stays its id
    target = model.memory_at(row)
    with qtbot.waitSignal(session.changed) as told:
        Curator(store).edit(target.id, expected_revision=target.revision, content="edited by a step")
    event = told.args[0]
    assert target.id in event.ids and not event.everything
    changed: list[int] = []
    model.dataChanged.connect(lambda first, last, _roles=(): changed.extend(range(first.row(), last.row() + 1)))
    with qtbot.waitSignal(model.refreshed):
        model.refresh(event)
    assert changed == [row] and model.data(model.index(row, 0)) == "edited by a step"
    qtmodeltester.check(model)
