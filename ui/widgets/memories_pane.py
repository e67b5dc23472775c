"""The Memories tab: the search bar (text and mode), the active filters' chips, the empty-result
note and the memories table, laid out. What they do is the filter_search and table_actions
controllers' job."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QComboBox, QHBoxLayout, QLabel, QLineEdit, QVBoxLayout, QWidget

from ..dialogs.preferences_dialog import SEARCH_MODES
from .filter_chips import FilterChips
from .memory_table import MemoryTable


class MemoriesPane(QWidget):
    """The search bar, the filter chips, the empty-result label and the table (no signals of its own:
    its widgets' are connected by the controllers)."""

    def __init__(self, search_mode: str = "keyword", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search_box = QLineEdit(placeholderText="Search memories (Ctrl+F)…")
        self.search_box.setObjectName("search_box")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.setAccessibleName("Search memories")
        self.search_mode = QComboBox()
        self.search_mode.setObjectName("search_mode")
        self.search_mode.addItems(SEARCH_MODES)
        self.search_mode.setCurrentText(search_mode)
        self.search_mode.setAccessibleName("Search mode")
        self.filter_chips = FilterChips()
        self.empty_label = QLabel()
        self.empty_label.setObjectName("empty_result_label")
        self.empty_label.setAccessibleName("No results")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.hide()
        # What a search found: how many matches, the weak ones under them, what ranked them.
        self.search_summary = QLabel()
        self.search_summary.setObjectName("search_summary")
        self.search_summary.setAccessibleName("Search summary")
        self.search_summary.setWordWrap(True)
        self.search_summary.hide()
        self.table = table = MemoryTable()
        table.setObjectName("memories_table")
        table.setAccessibleName("Memories")
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        table.setSortingEnabled(False)
        table.setAlternatingRowColors(True)
        table.setWordWrap(False)  # one line per memory, elided: the detail panel shows it whole
        # A scroll bar appearing with the first rows would narrow the viewport, resize the columns
        # and repaint the table again; a store of memories scrolls anyway.
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        table.verticalHeader().setVisible(False)
        table.verticalHeader().setDefaultSectionSize(22)
        table.horizontalHeader().setSectionsClickable(True)
        table.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        bar = QHBoxLayout()
        bar.addWidget(self.search_box, 1)
        bar.addWidget(self.search_mode)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.filter_chips)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.search_summary)
        layout.addWidget(table, 1)
