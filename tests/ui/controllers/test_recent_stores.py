"""File > Open Recent: the newest first, once each, at most eight, kept in the settings; a chosen
entry is asked to be opened."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.ui.controllers.recent_stores import MAX_RECENT, RecentStores
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMenu


def test_recent_entries_and_their_menu(qtbot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    menu = QMenu()
    recent = RecentStores(settings, menu)
    assert recent.entries() == [] and not menu.isEnabled()
    recent.remember("/stores/a")
    assert recent.entries() == ["/stores/a"]  # an INI file keeps a one-item list as a string
    for i in range(10):
        recent.remember(f"/stores/{i}")
    recent.remember("/stores/3")
    entries = recent.entries()
    assert entries[0] == "/stores/3" and len(entries) == MAX_RECENT and entries.count("/stores/3") == 1
    again = RecentStores(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), QMenu())
    assert again.entries() == entries
    assert [a.text() for a in menu.actions()] == [f"&{i + 1} {e}" for i, e in enumerate(entries)] and menu.isEnabled()
    with qtbot.waitSignal(recent.open_requested) as asked:
        menu.actions()[1].trigger()
    assert asked.args == [entries[1]]
