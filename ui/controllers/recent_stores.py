"""File > Open Recent: the stores opened last (paths, servers' URLs without their secrets),
kept in the settings."""

from __future__ import annotations

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QMenu

from .table_actions import settings_list

MAX_RECENT = 8


class RecentStores(QObject):
    """The recent stores and their menu. Signals: open_requested(str) with the entry chosen."""

    open_requested = Signal(str)

    def __init__(self, settings: QSettings, menu: QMenu, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings, self.menu = settings, menu
        self.rebuild_menu()

    def entries(self) -> list[str]:
        """Most recent first: a path, a server's URL, or "STORE_URL + VECTORS_URL"."""
        return settings_list(self.settings.value("recent_stores", []))

    def remember(self, entry: str) -> None:
        """entry: a path, a server's URL (never with its secret), or "STORE_URL + VECTORS_URL"."""
        recent = [entry] + [p for p in self.entries() if p != entry]
        self.settings.setValue("recent_stores", recent[:MAX_RECENT])
        self.rebuild_menu()

    def rebuild_menu(self) -> None:
        self.menu.clear()
        entries = self.entries()
        for i, entry in enumerate(entries):
            action = self.menu.addAction(f"&{i + 1} {entry}")
            action.triggered.connect(lambda _checked=False, e=entry: self.open_requested.emit(e))
        self.menu.setEnabled(bool(entries))
