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
    with qtbot.waitSignal(win.searched):
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
            assert round(score, 4) == hit["score"]
            assert window.model.index(row, SCORE).data() == f"{score:.2f} {hit['strength']}"
        assert cli["score"] in window.model.index(0, SCORE).data(Qt.ItemDataRole.ToolTipRole)
        # The line above the table says what the CLI's header does.
        summary = window.memories.search_summary.text()
        assert window.memories.search_summary.isVisible()
        assert (f"{cli['matched']} match" in summary) if cli["matched"] else summary.startswith("No memories match")
    if mode == "keyword":  # the new user's case: the one Stripe memory, in the window too
        cli = _cli_search(capsys, demo_path, "stripe payments", mode)
        assert len(cli["hits"]) == 1 and "Stripe" in cli["hits"][0]["content"]


def test_a_search_for_what_the_store_does_not_hold_says_so_above_its_weak_matches(qtbot, window: MainWindow,
                                                                                   demo_path: Path) -> None:
    shown = _window_search(qtbot, window, "weather on mars", "hybrid")
    assert len(shown) <= 3
    assert all(window.model.index(r, SCORE).data().endswith(" weak") for r in range(len(shown)))
    summary = window.memories.search_summary.text()
    assert summary.startswith("No memories match “weather on mars”")
    assert f"{len(shown)} weak match" in summary and "ranked by wordllama-l2_supercat" in summary
    _window_search(qtbot, window, "photos of items", "hybrid")  # no word in common with its answer
    assert "product images" in window.model.memory_at(0).content
    assert window.model.index(0, SCORE).data().endswith(" strong")
    assert window.memories.search_summary.text().startswith("1 match for “photos of items”")


def test_changing_the_mode_runs_the_search_again(qtbot, window: MainWindow, demo_path: Path, capsys) -> None:
    _window_search(qtbot, window, "photos of items", "hybrid")  # by meaning: keyword finds no match
    hybrid = [m.id for m in read_every_row(qtbot, window.model)]
    with qtbot.waitSignal(window.searched) as searched:
        window.memories.search_mode.setCurrentText("keyword")
    assert searched.args[0].mode == "keyword"
    keyword = [m.id for m in read_every_row(qtbot, window.model)]
    assert keyword == [h["id"] for h in _cli_search(capsys, demo_path, "photos of items", "keyword")["hits"]]
    assert keyword != hybrid
    assert window.count_label.text().startswith(f"{len(keyword)} hits of a keyword search")


def test_an_empty_result_says_so_and_names_the_filters(qtbot, window: MainWindow) -> None:
    assert not window.memories.empty_label.isVisible()
    window.memories.search_mode.setCurrentText("keyword")
    window.memories.search_box.setText("zebracorn")
    with qtbot.waitSignal(window.searched):
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
        qtbot.waitUntil(lambda: model.total == store.count(MemoryQuery()))
        filters.apply_filter("channel", "webshop")
        assert model.query.channels == ("webshop",) and pane.filter_chips.keys() == ["channel"]
        qtbot.waitUntil(lambda: model.total == store.count(MemoryQuery(channels=("webshop",))))
        with qtbot.waitSignal(filters.searched) as searched:
            qtbot.keyClicks(pane.search_box, "kubernetes")
            qtbot.keyClick(pane.search_box, Qt.Key.Key_Return)
        result = searched.args[0]
        assert result.mode == "keyword" and model.label.startswith("hits of a keyword search")
        assert all(hit.memory.channel == "webshop" for hit in result.hits)
        assert not pane.table.isColumnHidden(0) and filters.filters.searching
        pane.search_box.clear()  # an emptied box ends the search, the channel stays
        assert not filters.filters.searching and model.query.channels == ("webshop",)
        filters.remove_filter("channel")
        assert model.query.channels == () and pane.filter_chips.keys() == []
        filters.show_empty(True)
        assert pane.empty_label.isVisibleTo(pane) and "the store holds no active memories" in pane.empty_label.text()
        table_actions.detach()
