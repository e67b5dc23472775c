"""The active filters and the search: a sidebar filter, a chip removed, a search typed in the box,
each loaded into the real table model through the session."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import MemoryQuery
from mnemoscope.ui.controllers.filter_search import FilterSearch
from mnemoscope.ui.controllers.table_actions import TableActions
from mnemoscope.ui.widgets.memories_pane import MemoriesPane
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QMainWindow


def test_filters_chips_and_a_search(qtbot, demo_path: Path, tmp_path: Path) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    pane = MemoriesPane("keyword")
    window.setCentralWidget(pane)
    window.show()
    count = QLabel()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        table_actions = TableActions(session, pane.table, settings, window.statusBar(), {}, window)
        filters = FilterSearch(session, pane, table_actions, {}, count, window.statusBar(), window)
        model = table_actions.attach()
        filters.reset()
        qtbot.waitUntil(lambda: model.total == store.count(MemoryQuery()), timeout=10_000)
        filters.apply_filter("channel", "webshop")
        assert model.query.channels == ("webshop",) and pane.filter_chips.keys() == ["channel"]
        qtbot.waitUntil(lambda: model.total == store.count(MemoryQuery(channels=("webshop",))), timeout=10_000)
        with qtbot.waitSignal(filters.searched, timeout=20_000) as searched:
            qtbot.keyClicks(pane.search_box, "kubernetes")
            qtbot.keyClick(pane.search_box, Qt.Key.Key_Return)
        result = searched.args[0]
        assert result.mode == "keyword" and model.label == "keyword search"
        assert all(hit.memory.channel == "webshop" for hit in result.hits)
        assert not pane.table.isColumnHidden(0) and filters.filters.searching
        pane.search_box.clear()  # an emptied box ends the search, the channel stays
        assert not filters.filters.searching and model.query.channels == ("webshop",)
        filters.remove_filter("channel")
        assert model.query.channels == () and pane.filter_chips.keys() == []
        filters.show_empty(True)
        assert pane.empty_label.isVisibleTo(pane) and "the store holds no active memories" in pane.empty_label.text()
        table_actions.detach()
