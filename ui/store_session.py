"""The store session: one open MemoryStore, every storage call on a worker.

A Qt adapter over the Qt-free store, after napari's ``_qt`` adapters: the store
tells its listeners what changed (``StoreEvent``, on whatever thread made the
change) and the session re-emits that on the UI thread as ``changed``. Writes
(curation steps, undo, redo, re-embed, polling for other processes' writes)
run one at a time on a pool of one thread, so two steps never overlap and a
poll never sees half a step; reads run on the shared pool. Opening and closing
run in the order asked on a pool of their own: a close waits there for the work
already started on its store (never on the UI thread), and an open asked after a
close starts once that close is done.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import shiboken6
from mnemoscope.storage import AuditEntry, ConflictError, Curator, Memory, MemoryStore, Outcome, StoreEvent, open_store
from mnemoscope.storage.credentials import Answer, Credentials, Request
from PySide6.QtCore import QObject, Qt, QThreadPool, QTimer, Signal
from PySide6.QtWidgets import QWidget

from .workers import Worker, start_worker


def _gone(callback: Callable[..., Any]) -> bool:
    """Whether callback is a method of a widget or object Qt has deleted since (a dialog closed
    before its read came back): its result has nobody to go to."""
    owner = getattr(callback, "__self__", None)
    return isinstance(owner, QObject) and not shiboken6.isValid(owner)

POLL_INTERVAL_MS = 2_000
CLOSE_WAIT_S = 35.0  # the longest a close waits for the work running on its store, then closes anyway
CURATION_STEPS = ("edit", "promote", "delete", "restore", "reinforce", "undo", "redo", "reembed",
                  "set_scratch", "delete_scratch", "redact", "accept_findings", "repair")


class JournalSteps(NamedTuple):
    """The journal's next undo and next redo (None: nothing there)."""

    undo: AuditEntry | None = None
    redo: AuditEntry | None = None


@dataclass(frozen=True)
class Conflict:
    """An edit refused because the memory changed since it was read: both versions and the edit."""

    seen: Memory
    now: Memory
    changes: dict[str, Any]


@dataclass
class _Asked:
    request: Request
    answer: Answer | None = None


def journal_steps(store: MemoryStore) -> JournalSteps:
    return JournalSteps(*store.next_steps())


class _Jobs:
    """The work started on one store and not finished yet: its close waits until there is none.
    Once the store is closing, reads that have not started yet are skipped (their results
    would be dropped); writes already asked for still run."""

    def __init__(self) -> None:
        self._count = 0
        self._idle = threading.Condition()
        self.closing = False

    def run(self, func: Callable[..., Any], skippable: bool) -> Callable[..., Any]:
        """func, counted from now until it (or the generator it returns) is done."""
        with self._idle:
            self._count += 1

        def counted(*args: Any, **kwargs: Any) -> Any:
            drained_later = False
            try:
                if skippable and self.closing:
                    return None
                result = func(*args, **kwargs)
                if inspect.isgenerator(result):
                    drained_later = True
                    return self._draining(result)
                return result
            finally:
                if not drained_later:
                    self._leave()

        return counted

    def _draining(self, generator: Iterator[Any]) -> Any:
        try:
            return (yield from generator)
        finally:
            self._leave()

    def _leave(self) -> None:
        with self._idle:
            self._count -= 1
            if not self._count:
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._count == 0, timeout)


class StoreSession(QObject):
    """Signals: opened(object MemoryStore), closed() (the session let go of its store: nothing
    reads it any more), released() (that store's files are closed, on a worker, after the work
    running on it), changed(object StoreEvent), curated(object Outcome),
    journal_moved(object JournalSteps), conflicted(object Conflict), error(object exception)."""

    opened = Signal(object)
    closed = Signal()
    released = Signal()
    changed = Signal(object)
    curated = Signal(object)
    journal_moved = Signal(object)
    conflicted = Signal(object)
    error = Signal(object)
    # Store listeners run on the thread that made the change; this hops to ours.
    _event_arrived = Signal(object)
    # A worker opening a server asks for its password here, and waits for the answer.
    _password_asked = Signal(object)

    def __init__(self, parent: QObject | None = None, poll_interval_ms: int = POLL_INTERVAL_MS) -> None:
        super().__init__(parent)
        self._store: MemoryStore | None = None
        self._jobs = _Jobs()
        self._unsubscribe: Callable[[], None] | None = None
        self._steps = JournalSteps()
        self._polling = False
        self.write_pool = QThreadPool(self)
        self.write_pool.setMaxThreadCount(1)  # one write at a time, in the order asked
        self.read_pool = QThreadPool.globalInstance()
        # Opens and closes, one at a time in the order asked: an open waits for a close before it.
        self.lifecycle_pool = QThreadPool(self)
        self.lifecycle_pool.setMaxThreadCount(1)
        self._closing = 0
        self._event_arrived.connect(self._on_store_event, Qt.ConnectionType.QueuedConnection)
        self._password_asked.connect(self._on_password_asked, Qt.ConnectionType.BlockingQueuedConnection)
        self.poll_timer = QTimer(self)
        self.poll_timer.setInterval(poll_interval_ms)
        self.poll_timer.timeout.connect(self._on_poll_timer_timeout)

    # -- state --------------------------------------------------------------------------

    @property
    def store(self) -> MemoryStore | None:
        return self._store

    @property
    def steps(self) -> JournalSteps:
        """The journal's next undo and redo as last read (updated before journal_moved)."""
        return self._steps

    # -- opening and closing ----------------------------------------------------------

    def open(
        self, path: Path | str, *, read_only: bool = False, vectors: str | None = None,
        credentials: Credentials | None = None,
    ) -> Worker:
        """Open a store (a path, or a server's URL) off the UI thread; the open store stays open if
        this one fails. read_only: nothing will be written to it; every write is refused up front.
        credentials: a server's secrets; by default the keyring's, else the person is asked."""
        credentials = credentials or self.new_credentials()

        def opening() -> tuple[MemoryStore, JournalSteps]:
            store = open_store(path, read_only=read_only, vectors=vectors, credentials=credentials)
            try:
                store.poll()  # remember the change token: later polls see only others' writes
                _ = store.settings  # read once, here: the window reads them as an attribute
                return store, journal_steps(store)
            except Exception:
                store.close()
                raise

        return start_worker(opening, on_result=self._on_opening_returned, on_error=self.error.emit,
                            pool=self.lifecycle_pool)

    def new_credentials(self) -> Credentials:
        """Secrets for one open: the keyring's, else asked for in a dialog."""
        return Credentials(self._ask_on_ui_thread)

    def _ask_on_ui_thread(self, request: Request) -> Answer | None:
        """Credentials' question, asked from a worker: the dialog runs on the UI thread."""
        asked = _Asked(request)
        self._password_asked.emit(asked)
        return asked.answer

    def _on_password_asked(self, asked: _Asked) -> None:
        from .dialogs.credentials_dialog import ask_password

        parent = self.parent()
        asked.answer = ask_password(asked.request, parent if isinstance(parent, QWidget) else None)

    def _on_opening_returned(self, result: tuple[MemoryStore, JournalSteps]) -> None:
        store, steps = result
        self.close()
        self._store = store
        self._jobs = _Jobs()
        self._unsubscribe = store.subscribe(self._event_arrived.emit)
        self._steps = steps
        self.poll_timer.start()
        self.opened.emit(store)
        self.journal_moved.emit(steps)

    def close(self) -> None:
        """Let go of the store at once (closed: nothing reads it any more) and close its files on
        a worker once the work already started on it is done (released); the UI thread never
        waits for that. An open asked for meanwhile starts after it."""
        store, jobs = self._store, self._jobs
        if store is None:
            return
        self.poll_timer.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._store = None
        self._steps = JournalSteps()
        jobs.closing = True
        self._closing += 1

        def closing() -> None:
            jobs.wait_idle(CLOSE_WAIT_S)  # as long as it takes, up to then: closed under it after
            store.close()

        start_worker(closing, on_error=self.error.emit, on_finished=self._on_closing_finished,
                     pool=self.lifecycle_pool)
        self.closed.emit()

    def _on_closing_finished(self) -> None:
        self._closing -= 1
        self.released.emit()

    @property
    def closing(self) -> bool:
        """Whether a store let go of is still closing its files on a worker."""
        return self._closing > 0

    def wait_done(self, msecs: int = -1) -> bool:
        """Block until the opens and closes under way are done (at exit, the window gone: the
        process leaves no store half closed). False if msecs passed first."""
        return self.lifecycle_pool.waitForDone(msecs)

    # -- reading ------------------------------------------------------------------------

    def read(self, func: Callable[..., Any], *args: Any, on_result: Callable[[Any], None],
             on_error: Callable[[BaseException], None] | None = None, pool: QThreadPool | None = None,
             **kwargs: Any) -> Worker | None:
        """func(store, *args, **kwargs) on the shared pool (or pool); a result for a store since closed
        is dropped. A failure goes to on_error, else to the error signal. kwargs may also carry
        start_worker's own (priority, with_worker: func(worker, store, ...), on_progress)."""
        store = self._store
        if store is None:
            return None

        def delivered(result: Any) -> None:
            if store is self._store and not _gone(on_result):
                on_result(result)

        def failed(exc: BaseException) -> None:
            if store is self._store and not (on_error is not None and _gone(on_error)):
                (on_error or self.error.emit)(exc)

        return start_worker(self._jobs.run(func, skippable=True), store, *args, on_result=delivered,
                            on_error=failed, pool=pool or self.read_pool, **kwargs)

    # -- writing ------------------------------------------------------------------------

    def curate(self, operation: str, *args: Any, on_progress: Callable[[Any], None] | None = None,
               on_finished: Callable[[], object] | None = None, **kwargs: Any) -> Worker | None:
        """One curation step (Curator.<operation>(*args, **kwargs)) on the write pool.

        curated follows journal_moved, so Undo/Redo already name the next step when
        curated arrives; the step's StoreEvent arrives as changed before both."""
        if operation not in CURATION_STEPS:
            raise ValueError(f"not a curation step: {operation}")
        store = self._store
        if store is None:
            return None

        def step(worker: Worker) -> tuple[Outcome, JournalSteps]:
            curator = Curator(store)
            if operation == "reembed":
                outcome = curator.reembed(
                    progress=lambda done, total: worker.signals.yielded.emit((done, total)),
                    cancelled=lambda: worker.cancelled,
                )
            else:
                outcome = getattr(curator, operation)(*args, **kwargs)
            return outcome, journal_steps(store)

        return self._write(store, step, self._on_step_returned, on_progress=on_progress, on_finished=on_finished)

    def edit(self, memory: Memory, changes: dict[str, Any], expected_revision: str | None = None) -> Worker | None:
        """Edit one memory as read; if it changed since, emit conflicted with both versions."""
        store = self._store
        if store is None or not changes:
            return None
        revision = memory.revision if expected_revision is None else expected_revision

        def step(_worker: Worker) -> tuple[Outcome, JournalSteps] | Conflict:
            try:
                outcome = Curator(store).edit(memory.id, expected_revision=revision, **changes)
            except ConflictError:
                return Conflict(memory, store.get(memory.id), dict(changes))
            return outcome, journal_steps(store)

        def returned(result: Any) -> None:
            if isinstance(result, Conflict):
                self.conflicted.emit(result)
            else:
                self._on_step_returned(result)

        return self._write(store, step, returned)

    def refresh(self) -> Worker | None:
        """Look at the store's files again (copies edited by hand) and tell every view."""
        store = self._store
        if store is None:
            return None

        def step(_worker: Worker) -> JournalSteps:
            store.refresh_copies()
            store.notify(StoreEvent(journal=True, everything=True))
            return journal_steps(store)

        return self._write(store, step, self._on_steps_read)

    def _write(self, store: MemoryStore, step: Callable[[Worker], Any], on_result: Callable[[Any], None],
               on_progress: Callable[[Any], None] | None = None,
               on_finished: Callable[[], object] | None = None) -> Worker:
        def delivered(result: Any) -> None:
            if store is self._store:
                on_result(result)

        def failed(exc: BaseException) -> None:
            if store is self._store:
                self.error.emit(exc)

        return start_worker(self._jobs.run(step, skippable=False), on_result=delivered, on_error=failed,
                            on_progress=on_progress, on_finished=on_finished, pool=self.write_pool, with_worker=True)

    def _on_step_returned(self, result: tuple[Outcome, JournalSteps]) -> None:
        outcome, steps = result
        self._on_steps_read(steps)
        self.curated.emit(outcome)

    def _on_steps_read(self, steps: JournalSteps) -> None:
        self._steps = steps
        self.journal_moved.emit(steps)

    # -- change events ------------------------------------------------------------------

    def _on_store_event(self, event: StoreEvent) -> None:
        if self._store is None:
            return
        self.changed.emit(event)
        if event.journal and event.everything:
            # Another process moved the journal: read its next steps again, after any write queued.
            store = self._store
            self._write(store, lambda _worker: journal_steps(store), self._on_steps_read)

    def _on_poll_timer_timeout(self) -> None:
        """Ask on the write pool whether another process wrote; the store tells us through its event."""
        store = self._store
        if store is None or self._polling:
            return
        self._polling = True

        def done(_result: Any) -> None:
            self._polling = False

        # A poll that fails (a file locked a moment) is tried again at the next tick.
        start_worker(self._jobs.run(store.poll, skippable=True), on_result=done, on_error=done, pool=self.write_pool)
