"""The store session, the only holder of the store: a read runs func(store, ...) on a worker, its
failure goes to the reader's on_error (else to error), and a result for a store since closed is
dropped. A close lets go of the store at once and closes its files on a worker once the work
started on it is done; an open asked meanwhile waits for it."""

from __future__ import annotations

import threading
from pathlib import Path

from helpers.sessions import open_session
from helpers.windows import HANG_MS
from mnemoscope.storage import MemoryQuery, MemoryStore, NotFoundError
from mnemoscope.ui.store_session import StoreSession
from PySide6.QtCore import QThreadPool


def test_reads_their_errors_and_a_closed_store(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        counted: list[int] = []
        session.read(MemoryStore.count, MemoryQuery(), on_result=counted.append)
        qtbot.waitUntil(lambda: counted == [store.count(MemoryQuery())])
        own: list[BaseException] = []
        with qtbot.assertNotEmitted(session.error, wait=200):
            session.read(MemoryStore.get, "no-such-memory", on_result=lambda _m: None, on_error=own.append)
            qtbot.waitUntil(lambda: bool(own))
        assert isinstance(own[0], NotFoundError)
        with qtbot.waitSignal(session.error) as failed:
            session.read(MemoryStore.get, "no-such-memory", on_result=lambda _m: None)
        assert isinstance(failed.args[0], NotFoundError)
        pool = QThreadPool()
        on_pool: list[int] = []
        session.read(MemoryStore.count, MemoryQuery(), on_result=on_pool.append, pool=pool)
        qtbot.waitUntil(lambda: bool(on_pool))
        late: list[int] = []
        session.read(MemoryStore.count, MemoryQuery(), on_result=late.append)
        session.close()  # its result is dropped: the store it was for is closed
        qtbot.wait(100)
        assert late == [] and session.store is None
        assert session.read(MemoryStore.count, MemoryQuery(), on_result=late.append) is None
        pool.waitForDone(5_000)


def test_no_store_no_read(qtbot) -> None:
    session = StoreSession()
    assert session.read(MemoryStore.count, on_result=lambda _n: None) is None


def test_close_lets_go_at_once_and_closes_after_the_running_read_and_an_open_waits_for_it(
    qtbot, demo_path: Path
) -> None:
    with open_session(qtbot, demo_path) as session:
        first = session.store
        assert first is not None
        release, started, finished = threading.Event(), threading.Event(), threading.Event()

        def slow_count(store: MemoryStore) -> int:
            started.set()
            release.wait(HANG_MS / 1000)
            finished.set()
            return store.count(MemoryQuery())

        counted: list[int] = []
        session.read(slow_count, on_result=counted.append)
        assert started.wait(10)
        seen: list[str] = []
        session.released.connect(lambda: seen.append("released"))
        session.opened.connect(lambda _store: seen.append("opened"))
        with qtbot.waitSignal(session.closed):
            session.close()
        assert not finished.is_set()  # it let go at once: it did not wait for the read (held until release)
        assert session.store is None and session.closing
        session.open(demo_path)  # the same files again, at once
        qtbot.wait(300)
        assert seen == [] and session.store is None  # the read still runs: no close yet, and no open before it
        release.set()
        qtbot.waitUntil(lambda: seen == ["released", "opened"])
        assert counted == []  # the read's result was for the store closed meanwhile
        second = session.store
        assert second is not None and second is not first and not session.closing
        assert second.count(MemoryQuery()) > 0
    qtbot.waitUntil(lambda: not session.closing)
    assert session.wait_done(5_000) and session.lifecycle_pool.activeThreadCount() == 0  # nothing left running


def test_a_read_asked_before_a_close_but_not_started_is_skipped(qtbot, demo_path: Path) -> None:
    pool = QThreadPool()
    pool.setMaxThreadCount(1)
    with open_session(qtbot, demo_path) as session:
        release = threading.Event()
        ran: list[str] = []
        session.read(lambda _store: release.wait(20), on_result=lambda _r: None, pool=pool)
        session.read(lambda _store: ran.append("queued"), on_result=lambda _r: None, pool=pool)
        with qtbot.waitSignal(session.released):
            session.close()
            release.set()
    pool.waitForDone(5_000)
    assert ran == []  # queued behind the first, it would have read a store that was closing


def test_a_result_for_a_widget_deleted_meanwhile_goes_nowhere(qtbot, demo_path: Path) -> None:
    import shiboken6
    from PySide6.QtWidgets import QLabel

    class Panel(QLabel):  # a dialog's table, say: closed and deleted before its read came back
        def show_count(self, n: int) -> None:
            self.setText(str(n))

    with open_session(qtbot, demo_path) as session:
        released = threading.Event()

        def slow_count(store: MemoryStore) -> int:
            released.wait(10)
            return store.count()

        panel, kept = Panel(), Panel()
        session.read(slow_count, on_result=panel.show_count)
        session.read(slow_count, on_result=kept.show_count)
        shiboken6.delete(panel)
        released.set()
        qtbot.waitUntil(lambda: kept.text() != "")  # no "already deleted" error on the way
        assert not shiboken6.isValid(panel) and int(kept.text()) > 0
