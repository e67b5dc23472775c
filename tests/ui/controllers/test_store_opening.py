"""Opening from the window: the count label says what is opening and goes back when it fails; a
folder of stores offers them; an import into a workspace runs behind a progress dialog."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage import open_store
from mnemoscope.ui.controllers.error_reports import ErrorReports
from mnemoscope.ui.controllers.store_opening import StoreOpening
from mnemoscope.ui.dialogs.discover_dialog import DiscoverDialog
from mnemoscope.ui.store_session import StoreSession
from PySide6.QtWidgets import QLabel, QMainWindow


def _opening(qtbot) -> tuple[QMainWindow, StoreSession, QLabel, StoreOpening]:
    window = QMainWindow()
    qtbot.addWidget(window)
    session = StoreSession(window)
    errors = ErrorReports(window.statusBar(), window)
    session.error.connect(errors.show_error)
    label = QLabel("No store open")
    opening = StoreOpening(session, errors, label, window.statusBar(), window)
    session.opened.connect(lambda _store: opening.opened())
    return window, session, label, opening


def test_opening_a_store_then_a_folder_that_is_none(qtbot, demo_path: Path, tmp_path: Path) -> None:
    window, session, label, opening = _opening(qtbot)
    with qtbot.waitSignal(session.opened):
        opening.open_path(demo_path)
        assert label.text() == f"Opening {demo_path}…"
    label.setText("246 memories")
    (tmp_path / "home" / "nothing").mkdir(parents=True)
    with qtbot.waitSignal(opening.errors.error_shown):
        opening.open_path(tmp_path / "home")
    assert label.text() == "246 memories"  # as it was before the open that failed
    assert session.store is not None and Path(str(session.store.location)).name == demo_path.name
    shown = [d for d in window.findChildren(DiscoverDialog) if d.isVisible()]
    assert not shown or "no memory store itself" in shown[0].status.text()
    session.close()


def test_an_import_runs_behind_a_progress_dialog(qtbot, demo_path: Path, tmp_path: Path) -> None:
    _window, _session, _label, opening = _opening(qtbot)
    with qtbot.waitSignal(opening.import_finished) as finished:
        opening.import_into(demo_path, tmp_path / "workspace")
    summary = finished.args[0]
    assert opening.import_dialog is not None and not opening.import_dialog.isVisible()
    with open_store(tmp_path / "workspace", read_only=True) as imported:
        assert imported.count() == summary.imported > 0
