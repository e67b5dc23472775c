"""The Memories tab's layout: the search bar (with the saved search mode), the chips, the hidden
empty-result label and the table, named for accessibility."""

from __future__ import annotations

from mnemoscope.ui.widgets.memories_pane import MemoriesPane
from PySide6.QtWidgets import QAbstractItemView


def test_the_pane_lays_out_search_chips_and_table(qtbot) -> None:
    pane = MemoriesPane("vector")
    qtbot.addWidget(pane)
    pane.show()
    assert pane.search_mode.currentText() == "vector"
    assert [pane.search_mode.itemText(i) for i in range(pane.search_mode.count())] == ["keyword", "vector", "hybrid"]
    assert pane.search_box.accessibleName() == "Search memories" and pane.table.accessibleName() == "Memories"
    assert not pane.empty_label.isVisible()  # until a query comes back empty
    assert pane.layout().indexOf(pane.filter_chips) == 1 and pane.layout().indexOf(pane.table) == 4
    assert pane.layout().indexOf(pane.search_summary) == 3 and pane.search_summary.isHidden()
    assert pane.table.selectionBehavior() == QAbstractItemView.SelectionBehavior.SelectRows
    assert pane.table.selectionMode() == QAbstractItemView.SelectionMode.ExtendedSelection
    qtbot.keyClicks(pane.search_box, "kubernetes")
    assert pane.search_box.text() == "kubernetes"
