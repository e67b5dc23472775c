"""The main window as the UI tests open it."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings


def open_window(qtbot, path: Path, tmp_path: Path, signals: tuple = ()) -> MainWindow:  # noqa: ANN001
    """A shown main window, settings in tmp_path, that has opened path (and emitted signals)."""
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals([win.store_opened, *(signal(win) for signal in signals)], timeout=20_000):
        win.open_path(path)
    return win


def sidebar_counts(win: MainWindow, group: str) -> dict[str, int]:
    """Entry -> count of one sidebar group ("Channels", "Sub-agents", ...), as the sidebar shows them."""
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == group:
            return {top.child(j).text(0): int(top.child(j).text(1)) for j in range(top.childCount())}
    return {}
