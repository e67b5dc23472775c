"""Active filters show as removable chips and compose: a timeline bin, a channel and a search
are three chips; removing each brings back the rows the others keep, and no filter stays on
without its chip."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from helpers.table_rows import read_every_row
from mnemoscope.storage import Memory, MemoryQuery, Status
from mnemoscope.storage.views.timeline import bin_bounds
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QTreeWidgetItem


@pytest.fixture
def window(demo_window: MainWindow) -> MainWindow:
    return demo_window


def _rows(qtbot, win: MainWindow) -> list[Memory]:
    qtbot.waitUntil(lambda: win.model.total is not None)
    return read_every_row(qtbot, win.model)


def _sidebar_item(win: MainWindow, group: str, label: str) -> QTreeWidgetItem:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == group:
            for j in range(top.childCount()):
                if top.child(j).text(0) == label:
                    return top.child(j)
    raise AssertionError(f"no {group}/{label} in the sidebar")


def _every_memory(win: MainWindow) -> list[Memory]:
    store = win.store
    return store.page(MemoryQuery(statuses=()), limit=store.count(MemoryQuery(statuses=())))


def _click_bin(qtbot, win: MainWindow, label: str) -> tuple[datetime, datetime]:
    """Click the timeline's bar of label, as a person would; the bin's [start, end) it chose."""
    chart = win.view("timeline").chart
    x = next(x for x in range(chart.width()) if chart.bin_at(x) == label)
    with qtbot.waitSignal(win.view("timeline").range_chosen) as chosen:
        qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=QPoint(x, chart.height() // 2))
    return chosen.args[0], chosen.args[1]


def _remove(qtbot, win: MainWindow, key: str) -> None:
    qtbot.mouseClick(win.memories.filter_chips.close_button(key), Qt.MouseButton.LeftButton)


def test_bin_channel_and_search_compose_as_three_chips(qtbot, window: MainWindow) -> None:
    every = _every_memory(window)
    window.show_view("timeline")
    qtbot.waitUntil(lambda: bool(window.view("timeline").chart.data.get("bins")))
    size = window.view("timeline").bin_box.currentText()

    def in_bin(memory: Memory, label: str) -> bool:
        start, end = bin_bounds(label, size)
        return start <= memory.created_at < end

    labels = [b["bin"] for b in window.view("timeline").chart.data["bins"]]
    # The bin with the most webshop memories that say "webshop" (so that each filter matters).
    label = max(labels, key=lambda lb: sum(in_bin(m, lb) and m.channel == "webshop"
                                           and "webshop" in m.content.lower() for m in every))
    start, end = _click_bin(qtbot, window, label)
    assert window.views.currentIndex() == 0  # the memories tab shows the bin's memories
    dated = [m for m in every if start <= m.created_at < end]
    assert window.memories.filter_chips.keys() == ["dates"] and window.memories.filter_chips.isVisible()
    assert f"{start:%Y-%m-%d}" in window.memories.filter_chips.label_of("dates")
    assert {m.id for m in _rows(qtbot, window)} == {m.id for m in dated}

    qtbot.waitUntil(lambda: window.sidebar.topLevelItemCount() > 0)
    item = _sidebar_item(window, "Channels", "webshop")
    with qtbot.waitSignal(window.model.total_changed):
        qtbot.mouseClick(window.sidebar.viewport(), Qt.MouseButton.LeftButton,
                         pos=window.sidebar.visualItemRect(item).center())
    assert window.memories.filter_chips.keys() == ["channel", "dates"]
    dated_webshop = {m.id for m in dated if m.channel == "webshop"}
    assert {m.id for m in _rows(qtbot, window)} == dated_webshop

    window.memories.search_mode.setCurrentText("keyword")
    qtbot.keyClicks(window.memories.search_box, "webshop")
    with qtbot.waitSignal(window.searched):
        qtbot.keyClick(window.memories.search_box, Qt.Key.Key_Return)
    assert window.memories.filter_chips.keys() == ["channel", "dates", "search"]
    found = {m.id for m in _rows(qtbot, window)}
    expected = {i for i in dated_webshop if "webshop" in next(m for m in dated if m.id == i).content.lower()}
    assert found == expected and found  # the search ran inside the bin and the channel

    # Remove the date chip: the search runs over the channel's active memories, any date.
    with qtbot.waitSignal(window.searched):
        _remove(qtbot, window, "dates")
    assert window.memories.filter_chips.keys() == ["channel", "search"]
    rows = _rows(qtbot, window)
    active_webshop = [m for m in every if m.channel == "webshop" and m.status is Status.ACTIVE]
    assert {m.id for m in rows} == {m.id for m in active_webshop if "webshop" in m.content.lower()}
    assert any(not start <= m.created_at < end for m in rows)  # the dates are gone, not hidden

    # Remove the search chip: every active webshop memory, and the box is empty.
    with qtbot.waitSignal(window.model.total_changed):
        _remove(qtbot, window, "search")
    assert window.memories.search_box.text() == "" and window.memories.filter_chips.keys() == ["channel"]
    assert {m.id for m in _rows(qtbot, window)} == {m.id for m in active_webshop}

    with qtbot.waitSignal(window.model.total_changed):
        _remove(qtbot, window, "channel")
    assert window.memories.filter_chips.keys() == [] and not window.memories.filter_chips.isVisible()
    assert len(_rows(qtbot, window)) == window.store.count()


def test_a_search_after_a_bin_shows_the_date_chip_and_clear_all_drops_every_filter(qtbot, window: MainWindow) -> None:
    every = _every_memory(window)
    window.show_view("timeline")
    qtbot.waitUntil(lambda: bool(window.view("timeline").chart.data.get("bins")))
    label = window.view("timeline").chart.data["bins"][0]["bin"]
    start, end = _click_bin(qtbot, window, label)
    _rows(qtbot, window)
    window.memories.search_mode.setCurrentText("keyword")
    window.memories.search_box.setText("Dana")
    with qtbot.waitSignal(window.searched):
        qtbot.keyClick(window.memories.search_box, Qt.Key.Key_Return)
    # The bin's dates still apply to the search, and say so.
    assert window.memories.filter_chips.keys() == ["dates", "search"]
    assert all(start <= m.created_at < end for m in _rows(qtbot, window))
    with qtbot.waitSignal(window.model.total_changed):
        qtbot.mouseClick(window.memories.filter_chips.clear_button, Qt.MouseButton.LeftButton)
    assert window.memories.filter_chips.keys() == [] and window.memories.search_box.text() == ""
    assert window.model.query.since is None and window.model.query.until is None
    assert len(_rows(qtbot, window)) == len([m for m in every if m.status is Status.ACTIVE])


def test_the_map_selection_is_a_chip_of_its_own(qtbot, window: MainWindow) -> None:
    picked = [m.id for m in _rows(qtbot, window)[:3]]
    with qtbot.waitSignal(window.model.total_changed):
        window.filter_search.apply_filter("ids", picked)
    assert window.memories.filter_chips.label_of("ids") == "3 selected on the map"
    assert [m.id for m in _rows(qtbot, window)] == picked
    with qtbot.waitSignal(window.model.total_changed):
        _remove(qtbot, window, "ids")
    assert len(_rows(qtbot, window)) == window.store.count()


def test_a_failed_open_does_not_leave_opening_in_the_status_bar(qtbot, window: MainWindow, tmp_path: Path) -> None:
    before = window.count_label.text()
    with qtbot.waitSignal(window.error_shown):
        window.open_path(tmp_path / "no-such-store")
    assert not window.count_label.text().startswith("Opening")
    assert window.count_label.text() == before
