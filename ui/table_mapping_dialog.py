"""Map a table of a SQLite file no format recognises to memories: the table, one column per
memory field (proposed by name and type, corrected here), a preview of the first rows as the
mapping reads them. The mapping accepted is remembered for the file (outside it), so that the
file opens as a store from then on."""

from __future__ import annotations

from pathlib import Path

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

from mnemoscope.storage.errors import StoreError
from mnemoscope.storage.table_mapping import (
    FIELD_LABELS,
    FIELDS,
    TableMapping,
    preview,
    propose_mapping,
    remember_mapping,
    remembered_mapping,
    table_columns,
)

NONE = "(none)"
PREVIEW_ROWS = 5


class TableMappingDialog(QDialog):
    """Signals: mapping_accepted(Path) once the mapping is remembered for the file."""

    mapping_accepted = Signal(object)

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self.setWindowTitle(f"Read {self.path.name} as memories")
        self.resize(820, 520)
        self.tables = table_columns(self.path)
        caption = QLabel(
            f"No supported tool's store is in {self.path.name}. Choose the table that holds memories and the "
            "column for each memory field; Mnemoscope remembers the mapping for this file (nothing is written "
            "into it)."
        )
        caption.setWordWrap(True)
        self.table_combo = QComboBox()
        self.table_combo.setObjectName("mapping_table")
        self.table_combo.setAccessibleName("Table")
        self.table_combo.addItems(list(self.tables))
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
        self.status = QLabel()
        self.status.setObjectName("mapping_status")
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.open_button = buttons.addButton("Remember and open", QDialogButtonBox.ButtonRole.AcceptRole)
        self.open_button.setObjectName("mapping_accept")
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
        start = remembered_mapping(self.path)
        if start is None or start.table not in self.tables:
            start = propose_mapping(self.path) if self.tables else None
        if start is not None:
            self.table_combo.setCurrentText(start.table)
            self._show(start)
        self.table_combo.currentTextChanged.connect(self._on_table_changed)

    def mapping(self) -> TableMapping:
        columns = {f: c.currentText() for f, c in self.field_combos.items() if c.currentText() not in ("", NONE)}
        return TableMapping(self.table_combo.currentText(), columns)

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
        if table:
            self._show(propose_mapping(self.path, table))

    def _on_mapping_changed(self) -> None:
        if self._filling:
            return
        mapping = self.mapping()
        fields = [f for f in FIELDS if f in mapping.columns]
        try:
            rows = preview(self.path, mapping, PREVIEW_ROWS)
        except StoreError as exc:
            rows = []
            self.status.setText(str(exc))
        self.preview_table.clear()
        self.preview_table.setColumnCount(len(fields))
        self.preview_table.setHorizontalHeaderLabels([FIELD_LABELS[f] for f in fields])
        self.preview_table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, field in enumerate(fields):
                value = row.get(field)
                self.preview_table.setItem(r, c, QTableWidgetItem("" if value is None else " ".join(str(value).split())))
        self.preview_table.resizeColumnsToContents()
        self.open_button.setEnabled("content" in mapping.columns)
        if "content" not in mapping.columns:
            self.status.setText("Choose the column that holds each memory's text (Content).")
        elif mapping.writable:
            self.status.setText("Memories can be edited and deleted by their id (with undo).")
        else:
            self.status.setText("Read-only: choose an Id column to edit and delete these memories.")

    def accept(self) -> None:
        try:
            remember_mapping(self.path, self.mapping())
        except StoreError as exc:
            self.status.setText(str(exc))
            return
        self.mapping_accepted.emit(self.path)
        super().accept()
