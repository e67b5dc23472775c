"""Bootstrap: the QApplication, the window on a store, and the offscreen screenshot mode."""

from __future__ import annotations

import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mnemoscope.storage.credentials import Credentials
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from .dialogs.preferences_dialog import apply_saved_theme
from .main_window import MEMORIES, MainWindow
from .theme import apply_theme
from .workers import finish_all, running_workers

IDLE_WAIT_S = 10.0  # the longest a screenshot waits for the window to settle


def run_app(
    path: Path | str,
    settings_file: Path | None = None,
    screenshot: Path | None = None,
    view: str = "memories",
    read_only: bool = False,
    vectors: str | None = None,
    credentials: Credentials | None = None,
    theme: str | None = None,
) -> int:
    """Open the window on a store (a path or a server's URL); with screenshot, render it offscreen
    to a PNG and exit. credentials: secrets the launcher already has (asked on its terminal).
    theme: "system", "light" or "dark" for this run (None: the one saved in Preferences)."""
    running = QApplication.instance()
    app = running if isinstance(running, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("Mnemoscope")
    app.setOrganizationName("Mnemoscope")
    app.setApplicationVersion(version("mnemoscope"))
    app.setDesktopFileName("io.github.mnemoscope.Mnemoscope")  # desktops find the icon through the .desktop file
    bundled_icon = Path(sys.executable).parent / "share/icons/hicolor/256x256/apps/io.github.mnemoscope.Mnemoscope.png"
    app.setWindowIcon(QIcon.fromTheme("io.github.mnemoscope.Mnemoscope", QIcon(str(bundled_icon))))
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat) if settings_file else QSettings()
    if theme is None:
        apply_saved_theme(settings)
    elif theme != "system":
        apply_theme(app, theme)
    window = MainWindow(settings)
    if screenshot is not None:
        window.resize(1280, 800)
    window.show()
    if screenshot is not None:
        _take_screenshot_when_ready(app, window, screenshot, view)
    window.open_path(path, read_only=read_only, vectors=vectors, credentials=credentials)
    code = app.exec()
    # The window closed its store on a worker (or quit left it open): the process ends once its
    # files are closed, no thread left running.
    window.close_store()
    window.session.wait_done()
    finish_all()
    return code


def _take_screenshot_when_ready(app: Any, window: MainWindow, screenshot: Path, view: str) -> None:
    waiting = {"rows", view}

    def ready(what: str) -> None:
        if what == "rows" and "rows" in waiting:
            window.table_actions.select_row(0)  # a selected memory fills the detail panel and the curve
        waiting.discard(what)
        if not waiting:
            waiting.add("done")
            grab_when_idle(time.monotonic() + IDLE_WAIT_S)

    def grab_when_idle(deadline: float) -> None:
        """The sidebar, the detail panel and the counts arrive after the rows: grab once no
        worker is left (or at the deadline), after one more round of paints."""
        if running_workers() and time.monotonic() < deadline:
            QTimer.singleShot(50, lambda: grab_when_idle(deadline))
            return
        QTimer.singleShot(100, lambda: (window.grab().save(str(screenshot)), window.close(), app.quit()))

    def on_opened(_store: Any) -> None:
        assert window.model is not None
        window.show_view(view)
        window.model.chunk_loaded.connect(lambda _start: ready("rows"))
        if view != MEMORIES:
            window.view(view).loaded.connect(lambda _count: ready(view))
        waiting.discard(MEMORIES)

    window.store_opened.connect(on_opened)
    window.error_shown.connect(lambda _text: (window.close(), app.exit(2)))
