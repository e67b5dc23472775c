"""The views' small lists: rows under fixed headers, as a QTableView shows them."""

from __future__ import annotations

from typing import Any

from mnemoscope.ui.models.rows_model import Index, RowsModel
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtWidgets import QTableView


class Words(RowsModel):
    headers = ("Word", "Length")

    def __init__(self, words: list[str]) -> None:
        super().__init__()
        self.words = words

    def shown_rows(self) -> list[str]:
        return self.words

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        word = self.words[index.row()]
        return (word, str(len(word)))[index.column()] if role == Qt.ItemDataRole.DisplayRole else None


def test_a_table_view_shows_the_rows_under_the_headers(qtbot) -> None:
    model = Words(["tea", "deploys"])
    view = QTableView()
    qtbot.addWidget(view)
    view.setModel(model)
    assert (model.rowCount(), model.columnCount()) == (2, 2)
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(2)] == ["Word", "Length"]
    assert model.headerData(0, Qt.Orientation.Vertical) is None
    assert model.index(1, 1).data() == "7"
    assert model.rowCount(model.index(0, 0)) == 0 and model.columnCount(model.index(0, 0)) == 0  # a flat table
    assert model.rowCount(QModelIndex()) == 2
