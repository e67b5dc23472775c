"""The window and the CLI search with one engine: the same query gives the same hits, in the
same order, with the same scores, in every mode; the mode re-runs the search; an empty result
says so.

The active filters and the search: a sidebar filter, a chip removed, a search typed in the box,
each loaded into the real table model through the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.sessions import open_session
from helpers.table_rows import read_every_row
from mnemoscope.app.cli import main
from mnemoscope.storage import MemoryQuery
from mnemoscope.ui.controllers.filter_search import SEARCH_K, FilterSearch
from mnemoscope.ui.controllers.table_actions import TableActions
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS
from mnemoscope.ui.widgets.memories_pane import MemoriesPane
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel, QMainWindow

QUERIES = ("stripe payments", "Dana", "rust-cli release", "Whiskerino cat", "webshop checkout latency")
SCORE = COLUMN_KEYS.index("score")


@pytest.fixture
def window(demo_window: MainWindow) -> MainWindow:
    return demo_window


def _cli_search(capsys, path: Path, text: str, mode: str) -> dict:
    capsys.readouterr()
    assert main(["search", str(path), text, "--mode", mode, "--k", str(SEARCH_K), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _window_search(qtbot, win: MainWindow, text: str, mode: str) -> list[str]:
    win.memories.search_mode.setCurrentText(mode)
    win.memories.search_box.setText(text)
    with qtbot.waitSignal(win.searched, timeout=20_000):
        qtbot.keyClick(win.memories.search_box, Qt.Key.Key_Return)
    return [m.id for m in read_every_row(qtbot, win.model)]


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_window_and_cli_list_the_same_hits_in_the_same_order(qtbot, window: MainWindow, demo_path: Path,
                                                             capsys, mode: str) -> None:
    for text in QUERIES:
        cli = _cli_search(capsys, demo_path, text, mode)
        shown = _window_search(qtbot, window, text, mode)
        assert shown == [h["id"] for h in cli["hits"]], (text, mode)
        assert shown, (text, mode)
        # The Score column shows the CLI's scores, and says what they mean.
        assert not window.table.isColumnHidden(SCORE)
        for row, hit in enumerate(cli["hits"]):
            score = window.model.scores[hit["id"]]
            assert round(score, 6) == hit["score"]
            assert window.model.index(row, SCORE).data() == f"{score:.4f}"
        assert cli["score"] in window.model.index(0, SCORE).data(Qt.ItemDataRole.ToolTipRole)
    if mode == "keyword":  # the new user's case: the one Stripe memory, in the window too
        cli = _cli_search(capsys, demo_path, "stripe payments", mode)
        assert len(cli["hits"]) == 1 and "Stripe" in cli["hits"][0]["content"]


def test_scores_are_not_rank_positions(qtbot, window: MainWindow, demo_path: Path) -> None:
    _window_search(qtbot, window, "stripe payments", "hybrid")
    assert window.model.index(0, SCORE).data() == "1.0000"  # first in both lists, normalised
    _window_search(qtbot, window, "stripe payments", "vector")
    texts = [window.model.index(r, SCORE).data() for r in range(window.model.rowCount())]
    assert f"{1 / 61:.4f}" not in texts[:1] and float(texts[0]) > float(texts[-1])


def test_changing_the_mode_runs_the_search_again(qtbot, window: MainWindow, demo_path: Path, capsys) -> None:
    _window_search(qtbot, window, "stripe payments", "hybrid")
    hybrid = [m.id for m in read_every_row(qtbot, window.model)]
    with qtbot.waitSignal(window.searched, timeout=20_000) as searched:
        window.memories.search_mode.setCurrentText("keyword")
    assert searched.args[0].mode == "keyword"
    keyword = [m.id for m in read_every_row(qtbot, window.model)]
    assert keyword == [h["id"] for h in _cli_search(capsys, demo_path, "stripe payments", "keyword")["hits"]]
    assert keyword != hybrid
    assert window.count_label.text() == f"{len(keyword)} keyword search"


def test_an_empty_result_says_so_and_names_the_filters(qtbot, window: MainWindow) -> None:
    assert not window.memories.empty_label.isVisible()
    window.memories.search_mode.setCurrentText("keyword")
    window.memories.search_box.setText("zebracorn")
    with qtbot.waitSignal(window.searched, timeout=20_000):
        qtbot.keyClick(window.memories.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(window.memories.empty_label.isVisible)
    assert window.model.rowCount() == 0
    text = window.memories.empty_label.text()
    assert "No memories match “zebracorn”" in text and "Keyword search: “zebracorn”" in text
    qtbot.mouseClick(window.memories.filter_chips.close_button("search"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model.total is not None and window.model.total > 0)
    assert not window.memories.empty_label.isVisible() and window.table.isColumnHidden(SCORE)


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
