"""File > Connect to server…, driven as a person would, against a real PostgreSQL and a real
`chroma run`: the store opens, another process's write shows within 3 seconds, and the password
reaches neither the recent list nor any settings file."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from helpers.chroma_server import ChromaServer, chroma_server  # noqa: F401
from helpers.postgres_server import PostgresServer, postgres_server  # noqa: F401
from mnemoscope.storage import Curator, MemoryQuery, create_workspace, open_store
from mnemoscope.storage.credentials import credential_name
from mnemoscope.storage.transfer import import_store
from mnemoscope.ui.dialogs.connect_dialog import ConnectDialog
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QMessageBox

REFRESH_WITHIN_MS = 3_000


@pytest.fixture
def server_store(postgres_server: PostgresServer, chroma_server: ChromaServer, demo_path: Path) -> tuple[str, str, str]:  # noqa: F811
    """The demo on PostgreSQL + the Chroma server: (URL with password, without, vectors URL)."""
    chroma_server.reset()
    name = "win_" + uuid.uuid4().hex[:10]
    url = postgres_server.create_database(name)
    create_workspace(url, vectors=chroma_server.url).close()
    import_store(demo_path, url, vectors=chroma_server.url)
    return url, postgres_server.url(name, password=False), chroma_server.url


@pytest.fixture
def window(qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close_store()


def connect(qtbot, window: MainWindow, url: str, vectors: str, password: str) -> ConnectDialog:
    assert window.connect_action.text() == "Connect to &server…"
    window.connect_action.trigger()
    dialog = window.findChild(ConnectDialog, "connect_dialog")
    assert dialog is not None and not dialog.connect_button.isEnabled()
    qtbot.keyClicks(dialog.url, url)
    qtbot.keyClicks(dialog.vectors, vectors)
    qtbot.keyClicks(dialog.password, password)
    assert dialog.password.echoMode() == dialog.password.EchoMode.Password
    qtbot.mouseClick(dialog.connect_button, Qt.MouseButton.LeftButton)
    return dialog


def test_connecting_shows_the_server_store_and_keeps_no_password(
    qtbot, window: MainWindow, server_store: tuple[str, str, str], postgres_server: PostgresServer, tmp_path: Path  # noqa: F811
) -> None:
    url, clean, vectors = server_store
    with qtbot.waitSignal(window.store_opened):
        connect(qtbot, window, clean, vectors, postgres_server.password)
    store = window.store
    assert store is not None and store.location == f"{clean} + {vectors}"
    qtbot.waitUntil(lambda: window.count_label.text() == f"{store.count():,} memories")
    assert window.windowTitle() == f"Mnemoscope — {clean} + {vectors}"
    assert window.recent.entries()[0] == f"{clean} + {vectors}"
    window.settings.sync()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert postgres_server.password.encode() not in path.read_bytes(), path

    # Reopened from the recent list: nothing remembered the password, so it is asked for.
    window.close_store()
    asked = []

    def answer_the_question() -> None:
        from mnemoscope.ui.dialogs.credentials_dialog import PasswordDialog

        dialog = window.findChild(PasswordDialog) or next(
            (w for w in qtbot_top_level() if isinstance(w, PasswordDialog)), None)
        if dialog is None:
            return
        asked.append(dialog.request.name)
        dialog.password.setText(postgres_server.password)
        dialog.accept()

    def qtbot_top_level():
        from PySide6.QtWidgets import QApplication

        return QApplication.topLevelWidgets()

    from PySide6.QtCore import QTimer

    timer = QTimer(window)
    timer.timeout.connect(answer_the_question)
    timer.start(50)
    with qtbot.waitSignal(window.store_opened):
        window.opening.open_recent(window.recent.entries()[0])
    timer.stop()
    assert asked == [credential_name(clean)]


def test_another_process_writing_to_the_server_shows_within_three_seconds(
    qtbot, window: MainWindow, server_store: tuple[str, str, str], postgres_server: PostgresServer  # noqa: F811
) -> None:
    url, clean, vectors = server_store
    with qtbot.waitSignal(window.store_opened):
        connect(qtbot, window, clean, vectors, postgres_server.password)
    store = window.store
    assert store is not None
    qtbot.waitUntil(lambda: window.model is not None and window.model.total == store.count())
    before = window.model.total
    with open_store(url, vectors=vectors) as agent:
        new_id = agent.add_memory("The release train leaves on Thursdays", channel="rust-cli")
        written = time.monotonic()
    qtbot.waitUntil(lambda: window.model.total == before + 1, timeout=REFRESH_WITHIN_MS)
    assert time.monotonic() - written < REFRESH_WITHIN_MS / 1000
    with open_store(url, vectors=vectors) as agent:
        Curator(agent, actor="agent").delete([new_id])
    qtbot.waitUntil(lambda: window.model.total == before, timeout=REFRESH_WITHIN_MS)
    assert store.count(MemoryQuery(contains="release train")) == 0


def test_a_wrong_password_gives_one_message_without_it(
    qtbot, window: MainWindow, server_store: tuple[str, str, str], postgres_server: PostgresServer  # noqa: F811
) -> None:
    _url, clean, vectors = server_store
    shown = []
    window.error_shown.connect(shown.append)
    from PySide6.QtCore import QTimer

    def refuse_the_question() -> None:  # the server refused the one typed: cancel the second ask
        from mnemoscope.ui.dialogs.credentials_dialog import PasswordDialog
        from PySide6.QtWidgets import QApplication

        for widget in QApplication.topLevelWidgets():
            if isinstance(widget, PasswordDialog) and widget.isVisible():
                widget.reject()

    timer = QTimer(window)
    timer.timeout.connect(refuse_the_question)
    timer.start(50)
    connect(qtbot, window, clean, vectors, "not-the-password")
    qtbot.waitUntil(lambda: bool(shown))
    timer.stop()
    assert "refused" in shown[0] and "not-the-password" not in shown[0]
    assert window.store is None
    for box in window.findChildren(QMessageBox, "error_box"):
        assert "not-the-password" not in box.text()
