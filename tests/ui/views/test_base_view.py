"""The one View shape: a view reads through the session (never holding the store), loads, clears,
and reports a failed read as failed (the session's own error channel stays quiet)."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import MemoryQuery, MemoryStore, NotFoundError
from mnemoscope.ui.store_session import StoreSession
from mnemoscope.ui.views.base_view import View
from PySide6.QtWidgets import QLabel, QVBoxLayout


class CountView(View):
    """A view that shows how many memories the store holds; with wrong_id, a read that fails."""

    name, title, order = "count", "Count", 5

    def __init__(self, session: StoreSession, wrong_id: str | None = None) -> None:
        super().__init__(session)
        self.label = QLabel("")
        QVBoxLayout(self).addWidget(self.label)
        self.wrong_id = wrong_id

    def read_store(self) -> None:
        if self.wrong_id is not None:
            self.read(MemoryStore.get, self.wrong_id, on_result=lambda _memory: None)
            return
        self.read(MemoryStore.count, MemoryQuery(), on_result=self._on_counted)

    def _on_counted(self, total: int) -> None:
        self.label.setText(str(total))
        self.loaded.emit(total)

    def forget(self) -> None:
        self.label.setText("")


def test_a_view_loads_through_the_session_and_clears(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        view = CountView(session)
        qtbot.addWidget(view)
        assert view.objectName() == "count_view" and view.accessibleName() == "Count"
        assert not view.is_open
        with qtbot.waitSignal(view.loaded) as loaded:
            view.load()
        assert session.store is not None
        assert loaded.args == [session.store.count(MemoryQuery())] and view.label.text() == str(loaded.args[0])
        assert view.is_open and not hasattr(view, "store") and not hasattr(view, "_store")
        view.clear()
        assert not view.is_open and view.label.text() == ""


def test_a_failed_read_is_the_views_failed_not_the_sessions_error(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        view = CountView(session, wrong_id="no-such-memory")
        qtbot.addWidget(view)
        errors: list[BaseException] = []
        session.error.connect(errors.append)
        with qtbot.waitSignal(view.failed) as failed:
            view.load()
        assert isinstance(failed.args[0], NotFoundError) and errors == []


def test_with_no_store_open_a_load_reads_nothing(qtbot) -> None:
    session = StoreSession()
    view = CountView(session)
    qtbot.addWidget(view)
    with qtbot.assertNotEmitted(view.loaded, wait=200), qtbot.assertNotEmitted(view.failed, wait=0):
        view.load()
    assert not view.is_open
