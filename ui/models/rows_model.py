"""A flat table of rows under fixed column headers: what the views' small lists (findings, a
recall) share of Qt's table model; each says how its rows read (data) and which rows it shows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

Index = QModelIndex | QPersistentModelIndex


class RowsModel(QAbstractTableModel):
    """Rows (shown_rows()) under headers; subclasses answer data()."""

    headers: tuple[str, ...] = ()

    def shown_rows(self) -> Sequence[Any]:
        raise NotImplementedError

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.shown_rows())

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.headers[section]
        return None
