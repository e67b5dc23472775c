"""The Retention view: what each store's owner will expire, archive or clean up, and when, by its
own rule (MemoryStore.retention), the overdue first. Read off the UI thread: it reads every record
of the owners that expire; it only previews, nothing in the store changes."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from mnemoscope.storage import MemoryStore, Upcoming
from mnemoscope.storage.retention import due_text, duration_text, summary_lines
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from .base_view import View

HEADERS = ("When (UTC)", "Action", "Memory", "Rule", "Preview")
WINDOWS = (timedelta(days=1), timedelta(days=7), timedelta(days=30), timedelta(days=90), timedelta(days=365))
DEFAULT_WINDOW = timedelta(days=30)
UpcomingRole = Qt.ItemDataRole.UserRole + 1


def read_retention(store: MemoryStore, within: timedelta) -> tuple[datetime, list[Upcoming], dict[str, bool]]:
    now = datetime.now(timezone.utc)
    return now, store.retention(within, now), store.retention_kept()


class RetentionView(View):
    """Signals: loaded(int) with the number of records listed, failed(object)."""

    name, title, order, read_when_shown, follows_rows = "retention", "Retention", 75, True, True

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._generation = 0

        self.window_box = QComboBox()
        self.window_box.setObjectName("retention_window")
        self.window_box.setAccessibleName("How far ahead to look")
        for span in WINDOWS:
            self.window_box.addItem(f"within {duration_text(span)}", span)
        self.window_box.setCurrentIndex(WINDOWS.index(DEFAULT_WINDOW))
        self.window_box.currentIndexChanged.connect(lambda _index: self._on_window_changed())

        self.summary = QLabel("No store read yet.")
        self.summary.setObjectName("retention_summary")
        self.summary.setAccessibleName("Retention summary")
        self.summary.setWordWrap(True)

        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("retention_table")
        self.table.setAccessibleName("Records the owners will expire, archive or clean up")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(len(HEADERS) - 1, QHeaderView.ResizeMode.Stretch)

        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.window_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)

    @property
    def within(self) -> timedelta:
        span = self.window_box.currentData()
        return span if isinstance(span, timedelta) else DEFAULT_WINDOW

    def set_within(self, span: timedelta) -> None:
        """Look this far ahead (one of WINDOWS), reading again."""
        self.window_box.setCurrentIndex(WINDOWS.index(span))

    def read_store(self) -> None:
        """Read what the owners will do off the UI thread; a read overtaken by a newer one is dropped."""
        self._generation += 1
        generation, within = self._generation, self.within
        self.summary.setText("Reading…")
        self.read(read_retention, within, on_result=lambda result: self._on_read(generation, within, result))

    def _on_window_changed(self) -> None:
        if self.is_open:
            self.load()

    def forget(self) -> None:
        self._generation += 1
        self.table.setRowCount(0)
        self.summary.setText("No store read yet.")

    def _on_read(self, generation: int, within: timedelta, result: Any) -> None:
        if generation != self._generation:
            return
        now, upcoming, kept = result
        self.table.setRowCount(len(upcoming))
        for row, item in enumerate(upcoming):
            cells = (f"{item.when:%Y-%m-%d %H:%M} ({due_text(item.when, now)})", item.action, item.record_id,
                     item.rule, item.preview)
            for column, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                cell.setData(UpcomingRole, item)
                cell.setToolTip(f"{item.owner}: {item.rule}")
                self.table.setItem(row, column, cell)
        self.table.resizeColumnsToContents()
        self.summary.setText("\n".join(summary_lines(now, upcoming, kept, within)))
        self.loaded.emit(len(upcoming))

    def listed(self) -> list[Upcoming]:
        """Every record listed, in table order."""
        items = (self.table.item(row, 0) for row in range(self.table.rowCount()))
        return [item.data(UpcomingRole) for item in items if item is not None]


VIEW = RetentionView
