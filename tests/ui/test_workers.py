"""ui/workers.py: generator workers on a thread pool. Each yield is a progress tick and a cancel
point, the return value is the result, an exception is delivered as a value; every callback runs
on the UI thread. Real QThreadPools, real threads."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from mnemoscope.storage.errors import LockedError
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import (
    AGGREGATE,
    ASKED,
    AT_ONCE,
    SHOWN,
    Worker,
    background_pool,
    finish_all,
    running_workers,
    start_worker,
)
from PySide6.QtCore import QThread, QThreadPool
from PySide6.QtWidgets import QApplication, QMessageBox

WAIT_S = 10  # the longest a worker thread waits for the test


class Recorder:
    """Every signal a worker emits, in order, with the thread each callback ran on."""

    def __init__(self, worker: Worker) -> None:
        self.events: list[tuple[str, object]] = []
        self.threads: set[QThread] = set()
        signals = worker.signals
        signals.started.connect(lambda: self._add("started", None))
        signals.yielded.connect(lambda value: self._add("yielded", value))
        signals.returned.connect(lambda value: self._add("returned", value))
        signals.errored.connect(lambda exc: self._add("errored", exc))
        signals.finished.connect(lambda: self._add("finished", None))

    def _add(self, name: str, value: object) -> None:
        self.events.append((name, value))
        self.threads.add(QThread.currentThread())

    def names(self) -> list[str]:
        return [name for name, _ in self.events]


@pytest.fixture
def one_thread_pool():
    """A pool of one thread: what starts first is the pool's choice, not a race."""
    pool = QThreadPool()
    pool.setMaxThreadCount(1)
    yield pool
    pool.waitForDone(WAIT_S * 1000)


def _run(qtbot, worker: Worker, pool: QThreadPool | None = None) -> Recorder:
    """Start a bare Worker and wait for its finished(), recording everything it emitted."""
    recorder = Recorder(worker)
    with qtbot.waitSignal(worker.signals.finished, timeout=WAIT_S * 1000):
        (pool or QThreadPool.globalInstance()).start(worker)
    qtbot.waitUntil(lambda: "finished" in recorder.names())
    return recorder


def test_a_generator_worker_emits_started_each_yield_its_return_then_finished(qtbot) -> None:
    ran_on: list[threading.Thread] = []

    def count_to(n: int) -> Iterator[int]:
        ran_on.append(threading.current_thread())
        yield from range(1, n + 1)
        return n * 10

    recorder = _run(qtbot, Worker(count_to, 3))
    assert recorder.events == [("started", None), ("yielded", 1), ("yielded", 2), ("yielded", 3),
                               ("returned", 30), ("finished", None)]
    assert ran_on != [threading.main_thread()]  # the work ran off the UI thread...
    assert recorder.threads == {QApplication.instance().thread()}  # ...the signals arrived on it


def test_a_plain_function_returns_its_value_with_no_progress(qtbot) -> None:
    recorder = _run(qtbot, Worker(lambda a, b=0: a + b, 2, b=5))
    assert recorder.names() == ["started", "returned", "finished"]
    assert recorder.events[1] == ("returned", 7)


def test_a_failing_worker_errors_with_its_traceback_and_returns_nothing(qtbot, capfd) -> None:
    def fail_after_one() -> Iterator[int]:
        yield 1
        raise ValueError("the third row is malformed")

    recorder = _run(qtbot, Worker(fail_after_one))
    assert recorder.names() == ["started", "yielded", "errored", "finished"]
    exc = recorder.events[2][1]
    assert isinstance(exc, ValueError) and str(exc) == "the third row is malformed"
    trace = exc.__traceback_text__  # type: ignore[attr-defined]
    assert "fail_after_one" in trace and trace.rstrip().endswith("ValueError: the third row is malformed")
    assert capfd.readouterr().err == ""  # delivered as a value: nothing escaped the thread


def test_a_cancel_stops_the_generator_at_its_next_yield(qtbot) -> None:
    inside, go = threading.Event(), threading.Event()
    seen: list[object] = []

    def long_job(worker: Worker) -> Iterator[int]:
        inside.set()
        assert go.wait(WAIT_S)  # cancelled while running: the next yield is where it stops
        seen.append(worker.cancelled)  # with_worker: the job sees its own cancel
        try:
            yield 1
            seen.append("after the first yield")
            yield 2
            return "done"
        finally:
            seen.append("closed")

    progress: list[object] = []
    results: list[object] = []
    finished: list[bool] = []
    worker = start_worker(long_job, with_worker=True, on_progress=progress.append, on_result=results.append,
                          on_finished=lambda: finished.append(True))
    assert inside.wait(WAIT_S)
    assert worker.cancelled is False
    worker.cancel()
    go.set()
    qtbot.waitUntil(lambda: finished == [True], timeout=WAIT_S * 1000)
    assert seen == [True, "closed"]  # not a line after the yield ran, and its finally did
    assert progress == [1]  # the tick it had reached is still reported
    assert results == []  # a cancelled worker returns nothing
    assert running_workers() == 0


def test_a_worker_cancelled_before_it_starts_runs_nothing_of_its_body(qtbot, one_thread_pool) -> None:
    hold = threading.Event()
    start_worker(lambda: hold.wait(WAIT_S), pool=one_thread_pool)  # the pool's one thread is busy
    ran: list[str] = []

    def job() -> Iterator[int]:
        ran.append("body")
        yield 1

    finished: list[bool] = []
    worker = start_worker(job, pool=one_thread_pool, on_finished=lambda: finished.append(True))
    worker.cancel()
    hold.set()
    qtbot.waitUntil(lambda: finished == [True], timeout=WAIT_S * 1000)
    assert ran == []


def test_start_worker_counts_running_workers_until_each_finishes(qtbot, one_thread_pool) -> None:
    assert running_workers() == 0
    hold = threading.Event()
    finished: list[int] = []
    for i in range(3):
        start_worker(lambda: hold.wait(WAIT_S), pool=one_thread_pool, on_finished=lambda i=i: finished.append(i))
    assert running_workers() == 3  # one running, two queued: each kept alive until its finished()
    hold.set()
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=WAIT_S * 1000)
    assert sorted(finished) == [0, 1, 2]


def test_what_a_person_asked_for_starts_before_counts_and_aggregates(qtbot, one_thread_pool) -> None:
    hold = threading.Event()
    start_worker(lambda: hold.wait(WAIT_S), pool=one_thread_pool)
    started: list[str] = []
    for name, priority in (("aggregate", AGGREGATE), ("at once", AT_ONCE), ("asked", ASKED)):
        start_worker(started.append, name, pool=one_thread_pool, priority=priority)  # queued behind the first
    hold.set()
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=WAIT_S * 1000)
    assert started == ["asked", "at once", "aggregate"]


def test_a_tabs_first_content_starts_while_the_shared_pool_is_busy(qtbot) -> None:
    pool = QThreadPool.globalInstance()
    hold = threading.Event()
    for _ in range(pool.maxThreadCount() + 1):  # every thread of the shared pool held, one more queued
        start_worker(lambda: hold.wait(WAIT_S))
    started = threading.Event()
    start_worker(started.set, priority=SHOWN)
    try:
        assert started.wait(WAIT_S / 2)  # not queued behind the held ones
    finally:
        hold.set()
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=WAIT_S * 1000)


def test_a_long_job_on_the_background_pool_is_waited_for_at_exit(qtbot) -> None:
    ticks: list[int] = []

    def endless() -> Iterator[int]:
        while True:
            ticks.append(1)
            threading.Event().wait(0.01)
            yield len(ticks)

    worker = start_worker(endless, pool=background_pool())
    qtbot.waitUntil(lambda: len(ticks) > 2)
    assert finish_all(5_000) and worker.cancelled and background_pool().activeThreadCount() == 0


def test_at_exit_every_running_worker_is_cancelled_and_its_thread_waited_for(qtbot) -> None:
    ticks: list[int] = []

    def endless() -> Iterator[int]:  # a long read: stops only when cancelled, at a yield
        while True:
            ticks.append(1)
            threading.Event().wait(0.01)
            yield len(ticks)

    worker = start_worker(endless)
    qtbot.waitUntil(lambda: len(ticks) > 2)
    assert finish_all(5_000)  # the pool's threads are done: none runs into the interpreter's shutdown
    assert worker.cancelled and QThreadPool.globalInstance().activeThreadCount() == 0


def test_callbacks_get_the_result_the_error_and_the_progress(qtbot) -> None:
    got: dict[str, list[object]] = {"result": [], "error": [], "progress": []}

    def pages() -> Iterator[str]:
        yield "page 1"
        yield "page 2"
        return 2

    start_worker(pages, on_result=got["result"].append, on_error=got["error"].append,
                 on_progress=got["progress"].append)
    start_worker(int, "not a number", on_result=got["result"].append, on_error=got["error"].append)
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=WAIT_S * 1000)
    assert got["result"] == [2] and got["progress"] == ["page 1", "page 2"]
    [error] = got["error"]
    assert isinstance(error, ValueError) and "not a number" in str(error)


# -- through the window: a failing worker reaches the person by the one error channel ----------


def _failing_read(qtbot, win: MainWindow, exc: Exception) -> str:
    def read(store: object) -> None:
        raise exc

    with qtbot.waitSignal(win.error_shown, timeout=WAIT_S * 1000) as shown:
        win.session.read(read, on_result=lambda _result: pytest.fail("a failed read has no result"))
    return str(shown.args[0])


def _error_box(win: MainWindow) -> QMessageBox:
    [box] = [box for box in win.findChildren(QMessageBox, "error_box") if box.isVisible()]
    return box


def test_a_failing_read_is_reported_as_an_internal_error_with_its_trace(qtbot, demo_window: MainWindow, capfd) -> None:
    capfd.readouterr()
    text = _failing_read(qtbot, demo_window, KeyError("memory_id"))
    assert text == "Internal error (KeyError: 'memory_id'). Please report it."
    assert demo_window.statusBar().currentMessage() == text
    assert _error_box(demo_window).text() == text
    err = capfd.readouterr().err
    assert "in read" in err and "KeyError: 'memory_id'" in err  # the crash report, for the bug it is


def test_a_store_error_in_a_worker_is_shown_in_its_own_words(qtbot, demo_window: MainWindow, capfd) -> None:
    capfd.readouterr()
    text = _failing_read(qtbot, demo_window, LockedError("memory.db is locked by another program."))
    assert text == "memory.db is locked by another program."  # the environment's fault: no "Internal error"
    assert _error_box(demo_window).text() == text
    assert "Traceback" not in capfd.readouterr().err

