"""The store session, the only holder of the store: a read runs func(store, ...) on a worker, its
failure goes to the reader's on_error (else to error), and a result for a store since closed is
dropped."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import MemoryQuery, MemoryStore, NotFoundError
from mnemoscope.ui.store_session import StoreSession
from PySide6.QtCore import QThreadPool


def test_reads_their_errors_and_a_closed_store(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        counted: list[int] = []
        session.read(MemoryStore.count, MemoryQuery(), on_result=counted.append)
        qtbot.waitUntil(lambda: counted == [store.count(MemoryQuery())], timeout=10_000)
        own: list[BaseException] = []
        with qtbot.assertNotEmitted(session.error, wait=200):
            session.read(MemoryStore.get, "no-such-memory", on_result=lambda _m: None, on_error=own.append)
            qtbot.waitUntil(lambda: bool(own), timeout=10_000)
        assert isinstance(own[0], NotFoundError)
        with qtbot.waitSignal(session.error, timeout=10_000) as failed:
            session.read(MemoryStore.get, "no-such-memory", on_result=lambda _m: None)
        assert isinstance(failed.args[0], NotFoundError)
        pool = QThreadPool()
        on_pool: list[int] = []
        session.read(MemoryStore.count, MemoryQuery(), on_result=on_pool.append, pool=pool)
        qtbot.waitUntil(lambda: bool(on_pool), timeout=10_000)
        late: list[int] = []
        session.read(MemoryStore.count, MemoryQuery(), on_result=late.append)
        session.close()  # waits for the read, then drops its result: the store it was for is closed
        qtbot.wait(100)
        assert late == [] and session.store is None
        assert session.read(MemoryStore.count, MemoryQuery(), on_result=late.append) is None
        pool.waitForDone(5_000)


def test_no_store_no_read(qtbot) -> None:
    session = StoreSession()
    assert session.read(MemoryStore.count, on_result=lambda _n: None) is None
