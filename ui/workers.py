"""Background work off the UI thread: generator-based QRunnable workers.

A worker runs a function on the global thread pool. If the function is a
generator, each ``yield`` is a progress tick (its value is emitted) and a
cancel point; its ``return`` value is the result.

Workers run at the UI thread's CPU priority. At a lower one, another process can
preempt a worker while it holds the GIL, and the UI thread then waits for that
worker to get a core back: with both cores of this machine kept busy by another
process, the heartbeat test's gaps were 50-140 ms with workers at nice 10 (and
at 5), 25-55 ms at the same priority.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

# Workers running now: keeps each Python wrapper alive until its finished() arrives.
_running: set[Worker] = set()


def running_workers() -> int:
    return len(_running)


# Run-queue priorities on a pool (QThreadPool starts the highest waiting first): what a person
# just asked for (the selected memory), then the counts the window shows at once (the table's,
# which sizes it, and the sidebar's), then every other aggregate (timeline, salience, graph).
ASKED, AT_ONCE, AGGREGATE = 2, 1, 0
# A tab's first content (a bounded read): it never waits in the queue behind the aggregates
# already running on the shared pool, but starts at once on a pool of its own (shown_pool()).
# For reads of a few tens of milliseconds.
SHOWN = 3
SHOWN_THREADS = 2

_background: QThreadPool | None = None
_shown: QThreadPool | None = None


def shown_pool() -> QThreadPool:
    """The pool SHOWN reads run on instead of the shared one."""
    global _shown
    if _shown is None:
        _shown = QThreadPool()
        _shown.setMaxThreadCount(SHOWN_THREADS)
    return _shown


def background_pool() -> QThreadPool:
    """The pool of whole-store jobs that run long (the findings scan): one thread of its own, so
    that such a job never holds a thread of the shared pool the window's reads run on."""
    global _background
    if _background is None:
        _background = QThreadPool()
        _background.setMaxThreadCount(1)
    return _background


class WorkerSignals(QObject):
    """Signals: started(), yielded(object), returned(object), errored(object), finished()."""

    started = Signal()
    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)
    finished = Signal()


class Worker(QRunnable):
    def __init__(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.signals = WorkerSignals()
        self._func, self._args, self._kwargs = func, args, kwargs
        self._cancelled = False

    def cancel(self) -> None:
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def run(self) -> None:
        signals = self.signals
        try:
            signals.started.emit()
            try:
                result = self._func(*self._args, **self._kwargs)
                if inspect.isgenerator(result):
                    result = self._drain(result)
                if not self._cancelled:
                    signals.returned.emit(result)
            except RuntimeError as exc:
                if _deleted(exc):
                    raise
                exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
                signals.errored.emit(exc)
            except Exception as exc:  # delivered to the UI thread as a value
                exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
                signals.errored.emit(exc)
            finally:
                signals.finished.emit()
        except RuntimeError as exc:
            if not _deleted(exc):
                raise
            # The application is being torn down and took the signals with it: nobody is left to tell.

    def _drain(self, generator: Any) -> Any:
        while True:
            if self._cancelled:
                generator.close()
                return None
            try:
                value = next(generator)
            except StopIteration as stop:
                return stop.value
            self.signals.yielded.emit(value)


def _deleted(exc: RuntimeError) -> bool:
    return "has been deleted" in str(exc) or "already deleted" in str(exc)


def finish_all(msecs: int = 10_000) -> bool:
    """At exit: cancel every worker still running and wait for the pool's threads (a thread left
    running into the interpreter's shutdown crashes it). False if msecs passed first."""
    for worker in list(_running):
        worker.cancel()
    done = QThreadPool.globalInstance().waitForDone(msecs)
    return all([pool is None or pool.waitForDone(msecs) for pool in (_background, _shown)]) and done


def start_worker(
    func: Callable[..., Any],
    *args: Any,
    on_result: Callable[[Any], None] | None = None,
    on_error: Callable[[BaseException], None] | None = None,
    on_progress: Callable[[Any], None] | None = None,
    on_finished: Callable[[], object] | None = None,
    pool: QThreadPool | None = None,
    with_worker: bool = False,
    priority: int = AGGREGATE,
    **kwargs: Any,
) -> Worker:
    """Run func(*args, **kwargs) on the pool; callbacks run on the UI thread.

    with_worker: func is called as func(worker, *args, **kwargs), so it can report
    progress and see a cancel from its first line (the pool may start it before
    start_worker returns). priority: a worker waiting for a thread starts before those of
    lower priority (QThreadPool's run queue); SHOWN, asked of the shared pool, starts at once
    on shown_pool() instead."""
    worker = Worker(func, *args, **kwargs)
    if with_worker:
        worker._args = (worker, *args)
    _running.add(worker)
    worker.signals.finished.connect(lambda: _running.discard(worker))
    if on_result is not None:
        worker.signals.returned.connect(on_result)
    if on_error is not None:
        worker.signals.errored.connect(on_error)
    if on_progress is not None:
        worker.signals.yielded.connect(on_progress)
    if on_finished is not None:
        worker.signals.finished.connect(on_finished)
    pool = pool or QThreadPool.globalInstance()
    if priority >= SHOWN and pool is QThreadPool.globalInstance():
        pool = shown_pool()
    pool.start(worker, priority)
    return worker
