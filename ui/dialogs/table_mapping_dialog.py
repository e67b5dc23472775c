"""Map a table of a SQLite file no format recognises to memories: the table, one column per
memory field (proposed by name and type, corrected here), a preview of the first rows as the
mapping reads them. The mapping accepted is remembered for the file (outside it), so that the
file opens as a store from then on.

Every read of the file (its tables, a proposal, a preview, the checks before the mapping is
remembered) runs on a worker: each may wait out the busy timeout on a file another program
holds locked. A result that arrives after a newer request (another table, another column) is
dropped; a failure is shown in the dialog's status line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import shiboken6
from mnemoscope.storage.detect.table_mapping import (
    FIELD_LABELS,
    FIELDS,
    TableMapping,
    checked,
    preview,
    propose_mapping,
    remembered_mapping,
    table_columns,
)
from mnemoscope.storage.errors import StoreError
from mnemoscope.storage.opening import remember_mapping
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..workers import ASKED, start_worker

NONE = "(none)"
PREVIEW_ROWS = 5


def _first_look(path: Path) -> tuple[dict[str, list[tuple[str, str]]], TableMapping | None]:
    """The file's tables and the mapping to start from (the remembered one, else the proposal)."""
    tables = table_columns(path)
    start = remembered_mapping(path)
    if start is None or start.table not in tables:
        start = propose_mapping(path) if tables else None
    return tables, start


def _looked_through(path: Path, mapping: TableMapping) -> tuple[TableMapping, list[dict[str, Any]]]:
    """The mapping as the file allows it (whether its id names one row) and the rows it reads."""
    rows = preview(path, mapping, PREVIEW_ROWS)
    return (checked(path, mapping) if "content" in mapping.columns else mapping), rows


class TableMappingDialog(QDialog):
    """Signals: mapping_accepted(Path) once the mapping is remembered for the file; updated()
    each time what a worker read (or its failure) is shown."""

    mapping_accepted = Signal(object)
    updated = Signal()

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self.setWindowTitle(f"Read {self.path.name} as memories")
        self.resize(820, 520)
        self.tables: dict[str, list[tuple[str, str]]] = {}
        caption = QLabel(
            f"No supported tool's store is in {self.path.name}. Choose the table that holds memories and the "
            "column for each memory field; Mnemoscope remembers the mapping for this file (nothing is written "
            "into it)."
        )
        caption.setWordWrap(True)
        self.table_combo = QComboBox()
        self.table_combo.setObjectName("mapping_table")
        self.table_combo.setAccessibleName("Table")
        form = QFormLayout()
        form.addRow("Table", self.table_combo)
        self.field_combos: dict[str, QComboBox] = {}
        for field in FIELDS:
            combo = QComboBox()
            combo.setObjectName(f"mapping_{field}")
            combo.setAccessibleName(FIELD_LABELS[field])
            combo.currentIndexChanged.connect(self._on_mapping_changed)
            self.field_combos[field] = combo
            form.addRow(FIELD_LABELS[field], combo)
        self.preview_table = QTableWidget(0, 0)
        self.preview_table.setObjectName("mapping_preview")
        self.preview_table.setAccessibleName("Preview")
        self.preview_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.preview_table.verticalHeader().setVisible(False)
        self.preview_table.horizontalHeader().setStretchLastSection(True)
        self.status = QLabel(f"Reading the tables of {self.path.name}…")
        self.status.setObjectName("mapping_status")
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.open_button = buttons.addButton("Remember and open", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button.setObjectName("mapping_accept")
        self.open_button.setEnabled(False)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(caption)
        layout.addLayout(form)
        layout.addWidget(QLabel("Preview"))
        layout.addWidget(self.preview_table, 1)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

        self._filling = False
        # Bumped by every read asked for (and when the dialog closes): a result of an older one is dropped.
        self._generation = 0
        self._accepting = 0  # the number of the remember in flight (0: none), counted apart from reads
        self._accepts = 0
        self.table_combo.currentTextChanged.connect(self._on_table_changed)
        self._read(_first_look, self.path, then=self._on_first_look)

    def mapping(self) -> TableMapping:
        columns = {f: c.currentText() for f, c in self.field_combos.items() if c.currentText() not in ("", NONE)}
        return TableMapping(self.table_combo.currentText(), columns)

    # -- reads on a worker -------------------------------------------------------------------

    def _read(self, func: Callable[..., Any], *args: Any, then: Callable[[Any], None]) -> None:
        """Run func(*args) on a worker; then(result) on the UI thread unless a newer read began."""
        self._generation += 1
        generation = self._generation
        start_worker(func, *args, priority=ASKED,
                     on_result=lambda result: self._arrived(generation, then, result),
                     on_error=lambda exc: self._failed(generation, exc))

    def _arrived(self, generation: int, then: Callable[[Any], None], result: Any) -> None:
        if generation != self._generation or not shiboken6.isValid(self.preview_table):  # closed meanwhile
            return
        then(result)
        self.updated.emit()

    def _failed(self, generation: int, exc: BaseException) -> None:
        if generation == self._generation:
            self._show_error(exc)

    def _show_error(self, exc: BaseException) -> None:
        self.status.setText(str(exc) if isinstance(exc, StoreError) else
                            f"{self.path.name} could not be read ({type(exc).__name__}: {exc}).")
        self.updated.emit()

    # -- what was read -----------------------------------------------------------------------

    def _on_first_look(self, found: tuple[dict[str, list[tuple[str, str]]], TableMapping | None]) -> None:
        self.tables, start = found
        self._filling = True
        self.table_combo.clear()
        self.table_combo.addItems(list(self.tables))
        self._filling = False
        if start is None:
            self.status.setText(f"{self.path.name} holds no table to read memories from.")
            return
        self._filling = True
        self.table_combo.setCurrentText(start.table)
        self._filling = False
        self._show(start)

    def _show(self, mapping: TableMapping) -> None:
        """Fill the combos with the table's columns, set to mapping."""
        self._filling = True
        names = [name for name, _type in self.tables.get(mapping.table, [])]
        for field, combo in self.field_combos.items():
            combo.clear()
            combo.addItems([NONE, *names])
            combo.setCurrentText(mapping.columns.get(field, NONE))
        self._filling = False
        self._on_mapping_changed()

    def _on_table_changed(self, table: str) -> None:
        if table and not self._filling:
            self.status.setText(f"Reading the columns of {table}…")
            self._read(propose_mapping, self.path, table, then=self._show)

    def _on_mapping_changed(self) -> None:
        if self._filling:
            return
        mapping = self.mapping()
        self.open_button.setEnabled("content" in mapping.columns and not self._accepting)
        if "content" not in mapping.columns:
            self.status.setText("Choose the column that holds each memory's text (Content).")
        else:
            self.status.setText("Reading the first rows…")
        self._read(_looked_through, self.path, mapping, then=self._on_looked_through)

    def _on_looked_through(self, found: tuple[TableMapping, list[dict[str, Any]]]) -> None:
        mapping, rows = found
        fields = [f for f in FIELDS if f in mapping.columns]
        self.preview_table.clear()
        self.preview_table.setColumnCount(len(fields))
        self.preview_table.setHorizontalHeaderLabels([FIELD_LABELS[f] for f in fields])
        self.preview_table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, field in enumerate(fields):
                value = row.get(field)
                self.preview_table.setItem(r, c, QTableWidgetItem("" if value is None else " ".join(str(value).split())))
        self.preview_table.resizeColumnsToContents()
        if "content" not in mapping.columns:
            self.status.setText("Choose the column that holds each memory's text (Content).")
        elif mapping.writable:
            self.status.setText("Memories can be edited and deleted by their id (with undo).")
        elif "id" in mapping.columns:
            self.status.setText(f"Read-only: {mapping.read_only_reason}.")
        else:
            self.status.setText("Read-only: choose an Id column to edit and delete these memories.")

    # -- remembering ---------------------------------------------------------------------------

    def accept(self) -> None:
        """Remember the mapping (on a worker: it checks the file and which formats read it)."""
        if self._accepting:
            return
        self.open_button.setEnabled(False)
        self.status.setText(f"Checking {self.path.name}…")
        self._accepts += 1
        self._accepting = number = self._accepts
        start_worker(remember_mapping, self.path, self.mapping(), priority=ASKED,
                     on_result=lambda _kept: self._on_remembered(number),
                     on_error=lambda exc: self._on_not_remembered(number, exc))

    def _on_remembered(self, number: int) -> None:
        if number != self._accepting:
            return
        self._accepting = 0
        self.mapping_accepted.emit(self.path)
        super().accept()

    def _on_not_remembered(self, number: int, exc: BaseException) -> None:
        if number != self._accepting:
            return
        self._accepting = 0
        self.open_button.setEnabled("content" in self.mapping().columns)
        self._show_error(exc)

    def done(self, result: int) -> None:
        self._generation += 1  # whatever a worker still reads or remembers is of no use now
        self._accepting = 0
        super().done(result)
