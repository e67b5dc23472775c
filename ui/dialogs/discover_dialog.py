"""File > Discover stores…: every memory store found on this machine, to open with a double click.

The walk (storage.detect.discover) runs on a worker; the dialog lists what it found as it arrives,
says which folder it is looking in, and can look in another folder. Nothing is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemoscope.storage.detect.discover import FoundStore, discover, human_size
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..workers import Worker, start_worker

COLUMNS = ("Tool", "Path", "Memories", "Size", "Last write")


class DiscoverDialog(QDialog):
    """Signals: open_requested(Path) when a store is chosen; searched() when a look ends."""

    open_requested = Signal(Path)
    searched = Signal()

    def __init__(self, parent: QWidget | None = None, roots: list[Path] | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Discover memory stores")
        self.resize(900, 420)
        self.status = QLabel("")
        self.status.setObjectName("discover_status")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("discover_table")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setAccessibleName("Memory stores found")
        self.table.cellDoubleClicked.connect(lambda row, _column: self._open_row(row))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.open_button = buttons.addButton("Open", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button.setObjectName("discover_open")
        self.open_button.setEnabled(False)
        self.folder_button = QPushButton("Look in a folder…")
        self.folder_button.setObjectName("discover_folder")
        buttons.addButton(self.folder_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.open_button.clicked.connect(lambda: self._open_row(self.table.currentRow()))
        self.folder_button.clicked.connect(self._choose_folder)
        buttons.rejected.connect(self.reject)
        self.table.itemSelectionChanged.connect(lambda: self.open_button.setEnabled(bool(self.table.selectedItems())))
        layout = QVBoxLayout(self)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.found: list[FoundStore] = []
        self._worker: Worker | None = None
        self.look(roots)

    def look(self, roots: list[Path] | None = None) -> None:
        """Walk roots (None: the home folder and the tools' usual places) on a worker."""
        if self._worker is not None:
            self._worker.cancel()
        self.found = []
        self.table.setRowCount(0)
        where = ", ".join(str(r) for r in roots) if roots else "your home folder and the tools' usual places"
        self.status.setText(f"Looking in {where}…")

        def walk(worker: Worker) -> list[FoundStore]:
            return discover(roots, progress=lambda folder: worker.signals.yielded.emit(folder),
                            cancelled=lambda: worker.cancelled)

        worker = start_worker(walk, with_worker=True, on_result=lambda found: self._on_found(worker, found),
                              on_progress=lambda folder: self._on_progress(worker, folder),
                              on_error=lambda exc: self._on_failed(worker, exc))
        self._worker = worker

    def _on_progress(self, worker: Worker, folder: Any) -> None:
        if worker is self._worker:
            self.status.setText(f"Looking in {folder}…")

    def _on_found(self, worker: Worker, found: list[FoundStore]) -> None:
        if worker is not self._worker:
            return
        self._worker = None
        self.found = found
        self.table.setRowCount(len(found))
        for row, store in enumerate(found):
            cells = (store.tool, str(store.path), store.memories_shown,
                     human_size(store.size), store.last_write.strftime("%Y-%m-%d %H:%M") if store.last_write else "")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if store.problem or store.unread:
                    item.setToolTip("\n".join([store.problem, *store.unread]).strip())
                if column == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.table.resizeColumnsToContents()
        self.status.setText(f"{len(found)} memory stores found; double-click one to open it."
                            if found else "No memory stores found. Look in another folder?")
        self.searched.emit()

    def _on_failed(self, worker: Worker, exc: BaseException) -> None:
        if worker is self._worker:
            self._worker = None
            self.status.setText(f"Looking failed: {exc}")
            self.searched.emit()

    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Look for memory stores in")
        if folder:
            self.look([Path(folder)])

    def _open_row(self, row: int) -> None:
        if 0 <= row < len(self.found):
            self.open_requested.emit(self.found[row].path)
            self.accept()

    def done(self, result: int) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        super().done(result)

