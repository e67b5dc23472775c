"""Tools > Promotion candidates…: the project facts that meet the store's promotion thresholds
(seed 002: confidence, accesses, conversations), to promote to _global in one step."""

from __future__ import annotations

from typing import Any

import shiboken6
from mnemoscope.storage import Memory, MemoryStore, shown
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession

COLUMNS = ("Memory", "Channel", "Confidence", "Accesses", "Conversations", "Content")


class CandidatesDialog(QDialog):
    """Signals: loaded() when the list is read; promote_requested(list) with the ids chosen."""

    loaded = Signal()
    promote_requested = Signal(list)
    load_failed = Signal(object)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        """Over the store open in session (read through it)."""
        super().__init__(parent)
        store = session.store
        if store is None:
            raise ValueError("no store is open in this session")
        self.setWindowTitle("Promotion candidates")
        self.resize(900, 420)
        t = store.settings.promotion
        self.caption = QLabel(
            f"Project facts that meet every promotion threshold (confidence >= {t.confidence:g}, "
            f"accesses >= {t.access_count}, conversations >= {t.conversations}) and have no promoted copy yet."
        )
        self.caption.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("candidates_table")
        self.table.setAccessibleName("Promotion candidates")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.promote_button = buttons.addButton("Promote selected to _global", QDialogButtonBox.ButtonRole.AcceptRole)
        self.promote_button.setObjectName("promote_candidates")
        self.promote_button.setEnabled(False)
        self.promote_button.clicked.connect(self._promote)
        buttons.rejected.connect(self.reject)
        self.table.itemSelectionChanged.connect(
            lambda: self.promote_button.setEnabled(bool(self.table.selectedItems()) and not store.read_only))
        layout = QVBoxLayout(self)
        layout.addWidget(self.caption)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.candidates: list[Memory] = []
        session.read(MemoryStore.promotion_candidates, on_result=self._on_loaded, on_error=self.load_failed.emit)

    def _on_loaded(self, candidates: list[Memory]) -> None:
        if not shiboken6.isValid(self.table):  # closed before the candidates came back
            return
        self.candidates = candidates
        self.table.setRowCount(len(candidates))
        for row, m in enumerate(candidates):
            cells: tuple[Any, ...] = (m.id, m.channel, shown(m.confidence, ".2f"), shown(m.access_count), shown(m.conversations),
                                      " ".join(m.content.split()))
            for column, value in enumerate(cells):
                item = QTableWidgetItem(str(value))
                if 2 <= column <= 4:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        if not candidates:
            self.caption.setText(self.caption.text() + "\n\nNone right now.")
        self.loaded.emit()

    def _promote(self) -> None:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        ids = [self.candidates[r].id for r in rows]
        if ids:
            self.promote_requested.emit(ids)
            self.accept()
