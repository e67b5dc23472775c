"""After a change the table reads back only the rows it changed (calibre's refresh_ids): a
curation step names its ids; an agent's write from another connection names nothing, and the
table asks the store which of its cached rows' revisions moved. The rows read are counted where
the store returns them (MemoryStore.page), on a real 100k-memory memory.db."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench import native_store
from bench.harness import cached_store
from helpers.sessions import open_session
from mnemoscope.storage import Curator, MemoryQuery, MemoryStore, Order
from mnemoscope.ui.models.memory_table_model import MemoryTableModel
from mnemoscope.ui.store_session import StoreSession

N = 100_000
SHOWN = (0, 300, 5_000, 40_000, 77_700)  # rows a person scrolled to: one chunk cached at each


@pytest.fixture
def big_store(tmp_path: Path) -> Path:
    """A copy of the 100k native store (built once per machine, as the benchmarks use it)."""
    built = cached_store("native", N, native_store.VERSION, native_store.build)
    target = tmp_path / "big"
    shutil.copytree(built, target, ignore=shutil.ignore_patterns(".complete"))
    return target


@pytest.fixture
def rows_read(monkeypatch) -> list[int]:
    """How many memories each MemoryStore.page call returned, from now on."""
    counted: list[int] = []
    page = MemoryStore.page

    def counting(self: MemoryStore, *args: Any, **kwargs: Any) -> Any:
        found = page(self, *args, **kwargs)
        counted.append(len(found))
        return found

    monkeypatch.setattr(MemoryStore, "page", counting)
    return counted


@pytest.fixture
def session(qtbot, big_store: Path) -> Iterator[StoreSession]:
    with open_session(qtbot, big_store) as opened:
        yield opened


def _scrolled(qtbot, session: StoreSession, query: MemoryQuery) -> MemoryTableModel:
    """The table over query, its store's changes followed as the window follows them, scrolled
    through SHOWN so that a chunk is cached at each."""
    model = MemoryTableModel(session)
    session.changed.connect(model.refresh)
    model.set_query(query)
    qtbot.waitUntil(lambda: model.total is not None and model.memory_at(0) is not None)
    for row in SHOWN[1:]:
        with qtbot.waitSignal(model.chunk_loaded):
            model.data(model.index(row, 0))
    assert model.cached_rows() == len(SHOWN) * model.chunk
    return model


def _agent(path: Path, sql: str, *params: Any) -> None:
    """An agent writing memory.db with its own connection, as agents do."""
    con = sqlite3.connect(path / "memory.db")
    with con:
        con.execute(sql, params)
    con.close()


def _cached_rows_agree_with_the_store(model: MemoryTableModel, store: MemoryStore) -> None:
    assert model.total == model.rowCount() == store.count(model.query)
    for start in SHOWN:
        start -= start % model.chunk
        if start >= model.rowCount():
            continue
        expected = store.page(model.query, model.chunk, start)
        shown = [model.memory_at(row) for row in range(start, start + len(expected))]
        if all(m is not None for m in shown):
            assert [(m.id, m.content, m.salience) for m in shown] == [(m.id, m.content, m.salience) for m in expected]


def _watch(model: MemoryTableModel) -> tuple[list[int], list[str]]:
    repainted: list[int] = []
    moved: list[str] = []
    model.dataChanged.connect(lambda first, last, _roles=(): repainted.extend(range(first.row(), last.row() + 1)))
    model.layoutChanged.connect(lambda *_: moved.append("layout"))
    model.modelReset.connect(lambda: moved.append("reset"))
    return repainted, moved


def test_an_agent_changing_three_cached_rows_of_100k_reads_back_those_three(
    qtbot, session: StoreSession, big_store: Path, rows_read: list[int]
) -> None:
    store = session.store
    model = _scrolled(qtbot, session, MemoryQuery(order=Order.CREATED))
    targets = [SHOWN[1] + 4, SHOWN[3] + 17, SHOWN[4] + 99]
    memories = [model.memory_at(row) for row in targets]
    repainted, moved = _watch(model)
    rows_read.clear()
    for n, memory in enumerate(memories):  # content, salience and updated_at, as an agent's update writes them
        _agent(big_store, "UPDATE memories SET content = ?, salience = ?, updated_at = ? WHERE id = ?",
               f"rewritten by the agent {n}", 0.999, "2026-11-27T13:00:00+00:00", memory.id)
    with qtbot.waitSignal(model.refreshed):
        assert store.poll()  # what the session's poll timer asks; it tells the model "everything"
    assert sum(rows_read) == 3
    assert sorted(set(repainted)) == targets and moved == []
    for n, row in enumerate(targets):
        assert model.data(model.index(row, 0)) == f"rewritten by the agent {n}"
        assert model.memory_at(row).id == memories[n].id and model.memory_at(row).salience == 0.999
    assert model.cached_rows() == len(SHOWN) * model.chunk
    _cached_rows_agree_with_the_store(model, store)


def test_a_curation_step_through_the_window_reads_back_only_its_ids(
    qtbot, session: StoreSession, rows_read: list[int]
) -> None:
    store = session.store
    model = _scrolled(qtbot, session, MemoryQuery(order=Order.CREATED))
    row = SHOWN[2] + 42
    memory = model.memory_at(row)
    repainted, moved = _watch(model)
    rows_read.clear()
    with qtbot.waitSignal(model.refreshed):
        session.edit(memory, {"content": "edited in the window"})
    assert sum(rows_read) == 1
    assert sorted(set(repainted)) == [row] and moved == []
    assert model.data(model.index(row, 0)) == "edited in the window"
    _cached_rows_agree_with_the_store(model, store)


def test_an_agent_deleting_a_cached_row_moves_the_rows_after_it(
    qtbot, session: StoreSession, big_store: Path
) -> None:
    """The count changed, and another process's write does not say where: the cached chunks are
    read again, and the rows after the deleted one move up."""
    store = session.store
    model = _scrolled(qtbot, session, MemoryQuery(order=Order.CREATED))
    gone = model.memory_at(SHOWN[3] + 5)
    following = model.memory_at(SHOWN[3] + 6)
    before = model.rowCount()
    _agent(big_store, "DELETE FROM memories WHERE id = ?", gone.id)
    with qtbot.waitSignal(model.refreshed):
        assert store.poll()
    assert model.rowCount() == before - 1
    assert model.row_of(gone.id) is None and model.memory_at(SHOWN[3] + 5).id == following.id
    _cached_rows_agree_with_the_store(model, store)


def test_a_step_deleting_a_cached_row_reads_again_only_the_chunks_from_its_row_on(
    qtbot, session: StoreSession, rows_read: list[int]
) -> None:
    store = session.store
    model = _scrolled(qtbot, session, MemoryQuery(order=Order.CREATED))
    row = SHOWN[3] + 5
    gone, following = model.memory_at(row), model.memory_at(row + 1)
    before = model.rowCount()
    rows_read.clear()
    with qtbot.waitSignal(model.refreshed):
        session.curate("delete", gone.id)
    assert sum(rows_read) == 2 * model.chunk  # the chunk it was in and the one cached after it
    assert model.rowCount() == before - 1 and model.memory_at(row).id == following.id
    _cached_rows_agree_with_the_store(model, store)


def test_a_step_that_moves_a_row_in_the_order_moves_it_in_the_table(qtbot, session: StoreSession) -> None:
    """In the store's default order (last updated first) an edit takes its memory to the top."""
    store = session.store
    model = _scrolled(qtbot, session, MemoryQuery())
    memory = model.memory_at(SHOWN[3] + 8)
    with qtbot.waitSignal(model.refreshed):
        session.edit(memory, {"content": "edited, so updated last"})
    assert model.memory_at(0).id == memory.id and model.data(model.index(0, 0)) == "edited, so updated last"
    _cached_rows_agree_with_the_store(model, store)


def test_a_change_arriving_while_the_last_is_read_back_reads_back_both(
    qtbot, session: StoreSession, rows_read: list[int]
) -> None:
    """A change that arrives while the one before it is read back is read back once that read is in,
    not by starting it again: changes an agent makes faster than a read takes queue up, and the
    table catches up with each read instead of dropping it for the next."""
    store = session.store
    model = _scrolled(qtbot, session, MemoryQuery(order=Order.CREATED))
    first, second = model.memory_at(SHOWN[1] + 1), model.memory_at(SHOWN[4] + 2)
    curator = Curator(store)
    rows_read.clear()
    refreshed: list[int] = []
    model.refreshed.connect(lambda: refreshed.append(1))
    curator.edit(first.id, expected_revision=first.revision, content="first step")  # both steps' events
    curator.edit(second.id, expected_revision=second.revision, content="second step")  # arrive at once
    qtbot.waitUntil(lambda: len(refreshed) == 2)
    assert rows_read == [1, 1]  # the first step's row, then the second's: neither read twice
    assert model.data(model.index(SHOWN[1] + 1, 0)) == "first step"
    assert model.data(model.index(SHOWN[4] + 2, 0)) == "second step"
