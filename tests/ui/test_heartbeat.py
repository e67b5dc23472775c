"""The window never freezes on a big store: a heartbeat timer on the UI thread keeps ticking.

A 100k-memory workspace; a QTimer ticks every 10 ms on the UI thread while the window
opens the store, selects rows one after another, searches, edits, promotes, deletes, undoes,
shows the graph and the timeline, closes the store and opens it again at once (the open
waits for the close, on a worker), and closes it. Two measures:

- a profile hook on the UI thread records every call into storage code that touches a file
  or a database (SQLAlchemy, sqlite3, Chroma, the journal, the sources' modules: helpers'
  STORAGE_IO), capabilities, promotion shortfall and the table's first rows included: there
  must be none (no storage I/O on the UI thread, whatever the machine), on the workspace and on
  a lone memory.db alike;
- between two ticks, the time the UI thread itself worked (its CPU time) stays under the
  issue's 50 ms, and the time it was held up under MAX_HELD_MS: the wall-clock gap less the
  time the kernel kept it waiting for a core, and less the longest such wait of another thread
  of this process in the gap (bench/ui_thread_gaps.py's "ours", from /proc's schedstat: on a
  2-core machine another process can take both cores for 100 ms, and a worker that holds the
  GIL when the kernel stops it holds the UI thread up with it; no application's UI thread
  ticks then). Closing counts: the store's files close on a worker. A run that does not hold
  runs again on a fresh copy (at most RUNS runs); one must hold. The first window of a process
  pays one-time costs (glyph caches, first paints: 50-110 ms on this machine), so the first run
  may not. Every run's figures are printed, the wall-clock and held-up gaps too.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bench.ui_thread_gaps import MachineAwareHeartbeat as Heartbeat
from helpers.windows import step_curated
from mnemoscope.storage import Entity, Layer, Relation, create_workspace
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.ui.dialogs.edit_dialog import EditDialog
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

MEMORIES = 100_000
MAX_GAP_MS = 50.0  # issue 8: "no gap over 50 ms" of work on the UI thread
# Held up ("ours"): the UI thread's work plus its waits for the GIL and for SQLite, less what the
# machine took (its cores given to other processes, ours and the workers' alike), under the same 50 ms.
# (A full repaint of the table is 10-25 ms of CPU and, while workers read the store, twice that
# in wall time: the table repaints one row on focus and activation changes (MemoryTable), keeps
# its scroll bar, and gets its count ahead of other aggregates, so that open, edit and promote
# stay under 50 ms.)
MAX_HELD_MS = 50.0
RUNS = 4  # runs at most, each on a fresh copy; one must hold both bounds
CHANNELS = ("_global", "webshop", "rust-cli", "notes")


@pytest.fixture(scope="session")
def _big_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A native workspace with 100k memory.db memories and a small entity graph (no vectors)."""
    path = tmp_path_factory.mktemp("heartbeat") / "big"
    store = create_workspace(path)
    db = store._workspace.db
    start = datetime(2025, 1, 1, tzinfo=timezone.utc)
    layers = list(Layer)
    rows = []
    for i in range(MEMORIES):
        rows.append(SqliteSource.memory_row(
            f"memory {i}: the user mentioned topic {i % 997} while working on {CHANNELS[i % 4]}",
            memory_id=f"m-{i:06d}", channel=CHANNELS[i % 4], layer=layers[i % len(layers)],
            created_at=start + timedelta(minutes=7 * i), salience=(i % 100) / 100,
            access_count=5 + i % 9, conversations=2 + i % 3,  # each meets the promotion thresholds: no question
            tags=(f"t{i % 13}",),
        ))
        if len(rows) == 10_000:
            db.insert_memory_rows(rows)
            rows = []
    for e in range(300):
        store.add_entity(Entity(id=f"e-{e}", name=f"Entity {e}", type="thing", channel=CHANNELS[e % 4]))
    for r in range(600):
        store.add_relation(Relation(id=f"r-{r}", source_id=f"e-{r % 300}", target_id=f"e-{(r * 7 + 1) % 300}",
                                    type="KNOWS" if r % 2 else "USES"))
    store.close()
    return path


@pytest.fixture
def big_store(_big_template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "big"
    shutil.copytree(_big_template, target)
    return target


def _settled(qtbot, win: MainWindow, extra: Callable[[], bool] = lambda: True) -> None:
    """Wait until the table shows real rows and no worker is still busy."""
    from mnemoscope.ui.workers import running_workers

    qtbot.waitUntil(lambda: win.model is not None and win.model.memory_at(0) is not None and extra()
                    and running_workers() == 0)


def _active(qtbot, win: MainWindow) -> None:
    """Back on the window's table (after a dialog, after typing a search), so its shortcuts reach it."""
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    win.table.setFocus()


def test_no_storage_io_on_the_ui_thread_on_a_100k_store(qtbot, big_store: Path, tmp_path: Path, capsys) -> None:
    beat = _drive_every_action(qtbot, big_store, tmp_path, hook=True)
    assert beat.storage_calls == {}, f"storage I/O ran on the UI thread: {beat.storage_calls}"
    assert {"open", "select rows", "promote", "close and reopen", "close"} <= beat.gaps.keys()


def test_a_lone_100k_memory_db_is_read_on_workers_only(qtbot, _big_template: Path, tmp_path: Path) -> None:
    """memory.db alone (the store a person opens beside DB Browser for SQLite): nothing of it is
    read on the UI thread either, its first rows included, while opening, selecting, promoting,
    closing and opening again."""
    lone = tmp_path / "lone"
    lone.mkdir()
    shutil.copy2(_big_template / "memory.db", lone / "memory.db")
    win = _window(qtbot, tmp_path)
    beat = Heartbeat(hook=True)
    with beat.measure("open"):
        win.open_path(lone / "memory.db")
        _settled(qtbot, win, lambda: win.sidebar.topLevelItemCount() > 0)
    assert win.model.total == MEMORIES and win.model.memory_at(0) is not None
    _select_rows(qtbot, win, beat)
    _promote(qtbot, win, beat)
    _close_and_reopen(qtbot, win, beat, lone / "memory.db")
    _close(qtbot, win, beat)
    beat.close()
    assert beat.storage_calls == {}, f"storage I/O ran on the UI thread: {beat.storage_calls}"
    win.close()


def test_no_gap_over_50_ms_on_a_100k_store(qtbot, _big_template: Path, big_store: Path, tmp_path: Path, capsys) -> None:
    runs = [_drive_every_action(qtbot, big_store, tmp_path, hook=False)]  # a profile hook would slow the UI thread
    while not _holds(runs[-1]) and len(runs) < RUNS:
        # Again on a fresh copy: one spike on a shared 2-core machine is not a freeze; a freeze
        # (storage work, a long paint) shows in every run.
        again = tmp_path / f"again-{len(runs)}"
        shutil.copytree(_big_template, again / "big")
        runs.append(_drive_every_action(qtbot, again / "big", again, hook=False))
    with capsys.disabled():
        for run in runs:
            print("\nlargest heartbeat gap per action, wall clock (ms):", run.gaps)
            print("less the time the kernel kept the UI thread waiting for a core (ms):", run.held_up)
            print("less also the longest such wait of another thread (ms):", run.ours)
            print("largest UI-thread work between two ticks (ms):", run.busy)
    assert any(_holds(run) for run in runs), (
        f"in each of {len(runs)} runs the UI thread worked over {MAX_GAP_MS} ms or was held up over "
        f"{MAX_HELD_MS} ms without a tick: {[(run.busy, run.ours) for run in runs]}"
    )


def _holds(run: Heartbeat) -> bool:
    return max(run.busy.values()) <= MAX_GAP_MS and max(run.ours.values()) <= MAX_HELD_MS


def _window(qtbot, tmp_path: Path) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    return win


def _checked(qtbot, win: MainWindow, row: int) -> None:
    """The row's memory in the detail panel and what it allows read: its actions enabled."""
    memory = win.model.memory_at(row)
    assert memory is not None
    qtbot.waitUntil(lambda: memory.id in win.detail.toPlainText())
    qtbot.waitUntil(win.curation.delete_action.isEnabled)
    assert [m.id for m in win.table_actions.selected_memories()] == [memory.id]


def _select_rows(qtbot, win: MainWindow, beat: Heartbeat) -> None:
    """Down the table a row at a time, as a person reading the memories: each selection reads
    its memory and what it allows on workers; the answers for rows left behind are dropped."""
    with beat.measure("select rows"):
        _active(qtbot, win)
        win.table_actions.select_row(3)
        _checked(qtbot, win, 3)
        for _ in range(8):
            qtbot.keyClick(win.table, Qt.Key.Key_Down)
            qtbot.wait(15)
        _checked(qtbot, win, 11)
        _settled(qtbot, win)
    assert win.curation.promote_action.isEnabled() and win.curation.reinforce_action.isEnabled()


def _promote(qtbot, win: MainWindow, beat: Heartbeat) -> None:
    with beat.measure("promote"):
        _active(qtbot, win)
        win.table_actions.select_row(1)
        qtbot.waitUntil(win.curation.promote_action.isEnabled)
        with step_curated(qtbot, win):
            qtbot.keyClick(win.table, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
        _settled(qtbot, win)
    assert win.curation.undo_action.text() == "&Undo promote"


def _close_and_reopen(qtbot, win: MainWindow, beat: Heartbeat, path: Path) -> None:
    """Closed and opened again at once (after _promote): the open waits for the close, both off
    the UI thread."""
    with beat.measure("close and reopen"):
        with qtbot.waitSignals([win.session.released, win.store_opened], order="strict"):
            win.close_store()
            assert win.store is None and win.model is None  # the window let go of it at once
            win.open_path(path)
        _settled(qtbot, win, lambda: win.sidebar.topLevelItemCount() > 0)
    assert win.model.total == MEMORIES + 1  # and the promoted copy; no filter left from before


def _close(qtbot, win: MainWindow, beat: Heartbeat) -> None:
    with beat.measure("close"):
        with qtbot.waitSignal(win.session.released):
            win.close_store()
            assert win.store is None and win.model is None and win.session.closing  # its files close on a worker
        _settled_closed(qtbot, win)
    assert not win.session.closing


def _settled_closed(qtbot, win: MainWindow) -> None:
    from mnemoscope.ui.workers import running_workers

    qtbot.waitUntil(lambda: running_workers() == 0 and not win.session.closing)


def _drive_every_action(qtbot, big_store: Path, tmp_path: Path, hook: bool) -> Heartbeat:
    win = _window(qtbot, tmp_path)
    beat = Heartbeat(hook)
    loaded: set[str] = set()
    win.view("timeline").loaded.connect(lambda: loaded.add("timeline"))
    win.view("salience").loaded.connect(lambda: loaded.add("salience"))
    win.view("graph").loaded.connect(lambda: loaded.add("graph"))

    with beat.measure("open"):
        win.open_path(big_store)
        _settled(qtbot, win, lambda: {"timeline", "salience", "graph"} <= loaded and win.sidebar.topLevelItemCount() > 0)
    assert win.model.total == win.model.rowCount() == MEMORIES and win.model.cached_rows() < MEMORIES
    _select_rows(qtbot, win, beat)

    with beat.measure("keyword search"):
        win.memories.search_mode.setCurrentText("keyword")
        qtbot.keyClicks(win.memories.search_box, "topic 42 while")
        qtbot.keyClick(win.memories.search_box, Qt.Key.Key_Return)
        _settled(qtbot, win, lambda: win.model.total is not None and win.model.total < MEMORIES)
    loaded_rows = [m for m in map(win.model.memory_at, range(win.model.rowCount())) if m is not None]
    # Ranked as the CLI ranks them (BM25 over an OR of the words): the best hit holds them all.
    assert loaded_rows and "topic 42 while" in loaded_rows[0].content

    with beat.measure("hybrid search"):
        win.memories.search_mode.setCurrentText("hybrid")
        qtbot.keyClick(win.memories.search_box, Qt.Key.Key_Return)
        _settled(qtbot, win, lambda: "hits of a hybrid search" in win.count_label.text())

    with beat.measure("edit"):
        win.table_actions.select_row(0)
        target = win.table_actions.selected_memories()[0]
        qtbot.waitUntil(lambda: target.id in win.detail.toPlainText())
        qtbot.waitUntil(win.curation.edit_action.isEnabled)  # what the memory allows, read on a worker
        qtbot.keyClick(win.table, Qt.Key.Key_F2)
        dialog = win.findChild(EditDialog, "edit_dialog")
        dialog.content.setPlainText("edited while the heartbeat ticks")
        with step_curated(qtbot, win):
            dialog.accept()
        _settled(qtbot, win)
    assert win.curation.undo_action.text() == "&Undo edit"

    assert win.errors.last_error == ""
    _promote(qtbot, win, beat)

    with beat.measure("delete"):
        _active(qtbot, win)
        win.table_actions.select_row(2)
        qtbot.waitUntil(win.curation.delete_action.isEnabled)
        assert len(win.table_actions.selected_memories()) == 1
        with step_curated(qtbot, win):
            qtbot.keyClick(win.table, Qt.Key.Key_Delete)
        _settled(qtbot, win)
    assert win.curation.undo_action.text() == "&Undo delete"

    with beat.measure("undo"):
        _active(qtbot, win)
        with step_curated(qtbot, win):
            qtbot.keyClick(win.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        _settled(qtbot, win)
    assert win.curation.redo_action.text() == "&Redo delete"

    with beat.measure("graph"):
        qtbot.keyClick(win, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
        graph = win.view("graph")
        with qtbot.waitSignal(graph.loaded):
            graph.depth_box.setValue(3)
        with qtbot.waitSignal(graph.entity_selected):
            graph.select_entity(next(iter(graph.nodes)))
        _settled(qtbot, win)
    assert graph.nodes

    with beat.measure("timeline"):
        # A bin lists its day's memories: the search ends first (no memory of the busiest day is about topic 42).
        win.memories.search_box.clear()
        _settled(qtbot, win, lambda: not win.filter_search.filters.searching)
        qtbot.keyClick(win, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)  # shown: it reads the changed store
        win.view("timeline").bin_box.setCurrentText("day")
        chart = win.view("timeline").chart
        _settled(qtbot, win, lambda: chart.data.get("bin") == "day")
        busiest = max(chart.data["bins"], key=lambda b: b["memories"])
        with qtbot.waitSignal(win.model.total_changed):
            qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=chart.bar_center(busiest["bin"]).toPoint())
        _settled(qtbot, win)
    assert sum(b["memories"] for b in chart.data["bins"]) >= MEMORIES

    assert win.errors.last_error == ""
    _close_and_reopen(qtbot, win, beat, big_store)
    _close(qtbot, win, beat)
    assert win.errors.last_error == ""
    win.close()  # a run once more has the process's only window, as a user has
    beat.close()
    return beat
