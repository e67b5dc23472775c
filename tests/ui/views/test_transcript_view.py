"""The Transcript tab: a session's conversation read in the window, a page at a time."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.sessions import open_session
from helpers.windows import open_window
from mnemoscope.storage import open_store
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.views.transcript_view import PAGE, TranscriptView
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidgetItem

LONG = "s-long-conversation"


@pytest.fixture
def window(qtbot, demo_path: Path, tmp_path: Path):
    with open_store(demo_path) as store:  # one session longer than two pages, with a tool turn
        store.add_session(LONG, channel="webshop", title="A long debugging session",
                          started_at=datetime(2026, 1, 5, 9, tzinfo=timezone.utc))
        start = datetime(2026, 1, 5, 9, tzinfo=timezone.utc)
        roles = ("user", "assistant", "tool")
        store.add_turns(LONG, [(roles[i % 3], f"long turn {i}\nsecond line", start + timedelta(minutes=i))
                               for i in range(2 * PAGE + 30)])
    win = open_window(qtbot, demo_path, tmp_path)
    qtbot.waitUntil(lambda: win.view("transcript").session_box.count() > 0)
    yield win
    win.close_store()


def _session_item(win: MainWindow, session_id: str) -> QTreeWidgetItem:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == "Sessions":
            for j in range(top.childCount()):
                if session_id in top.child(j).toolTip(0):
                    top.setExpanded(True)
                    return top.child(j)
    raise AssertionError(f"no session {session_id} in the sidebar")


def test_double_clicking_a_session_shows_its_turns_in_order(qtbot, window: MainWindow) -> None:
    session = window.store.sessions()[2]
    expected = window.store.turns(session.id)
    qtbot.waitUntil(lambda: window.sidebar.topLevelItemCount() > 0)
    item = _session_item(window, session.id)
    window.sidebar.scrollToItem(item)
    qtbot.waitUntil(lambda: window.sidebar.viewport().rect().contains(window.sidebar.visualItemRect(item).center()))
    rect = window.sidebar.visualItemRect(item)
    qtbot.mouseClick(window.sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())  # a double-click's first press
    qtbot.mouseDClick(window.sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.view("transcript").session_id() == session.id
                    and len(window.view("transcript").turns) == len(expected))
    assert window.views.currentWidget() is window.view("transcript")
    assert [(t.index, t.role, t.content) for t in window.view("transcript").turns] == [(t.index, t.role, t.content) for t in expected]
    text = window.view("transcript").browser.toPlainText()
    positions = [text.index(t.content) for t in expected]
    assert positions == sorted(positions)  # shown in the order they were said
    assert "user" in text and "assistant" in text
    assert f"{len(expected)} of {len(expected)} turns" in window.view("transcript").status.text()


def test_scratchpad_read_transcript_button_opens_that_session(qtbot, window: MainWindow) -> None:
    session = window.store.sessions()[0]
    with qtbot.waitSignal(window.view("scratchpad").loaded):
        window.view("scratchpad").show_session(session.id)
    assert window.view("scratchpad").transcript_action.isEnabled()
    window.view("scratchpad").transcript_action.trigger()
    qtbot.waitUntil(lambda: window.view("transcript").session_id() == session.id and bool(window.view("transcript").turns)
                    and window.view("transcript").turns[0].session_id == session.id)
    assert window.views.currentWidget() is window.view("transcript")


def test_a_long_session_pages_as_it_is_scrolled(qtbot, window: MainWindow) -> None:
    view = window.view("transcript")
    window.show_transcript(LONG)
    qtbot.waitUntil(lambda: view.session_id() == LONG and len(view.turns) == PAGE)
    assert "scroll down for more" in view.status.text()
    assert "long turn 0" in view.browser.toPlainText() and f"long turn {PAGE}" not in view.browser.toPlainText()
    bar = view.browser.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0)
    bar.setValue(bar.maximum())  # the reader scrolls to the end
    qtbot.waitUntil(lambda: len(view.turns) == 2 * PAGE)
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: len(view.turns) == 2 * PAGE + 30)
    assert [t.index for t in view.turns] == list(range(2 * PAGE + 30))
    assert f"long turn {2 * PAGE + 29}" in view.browser.toPlainText()
    assert "tool call / output" in view.browser.toPlainText()  # tool turns are marked as such
    assert "scroll down" not in view.status.text()


def test_the_view_alone_reads_sessions_and_pages_through_the_session(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        sessions = store.sessions()
        view = TranscriptView(session)
        qtbot.addWidget(view)
        view.resize(700, 500)
        view.show()
        with qtbot.waitSignal(view.loaded) as first:
            view.load()
        assert view.session_box.count() == len(sessions) and view.session_id() == sessions[0].id
        assert first.args == [len(view.turns)] == [min(sessions[0].turn_count, PAGE)]
        last = sessions[-1]
        with qtbot.waitSignal(view.loaded):
            view.show_session(last.id)
        assert view.session_id() == last.id and all(t.session_id == last.id for t in view.turns)
        with qtbot.waitSignal(view.loaded):
            view.load()  # read again: the session shown stays
        assert view.session_id() == last.id
        view.clear()
        assert view.session_box.count() == 0 and view.turns == [] and not view.is_open


def test_an_agenticx_session_shows_how_far_it_is_from_compaction(qtbot, tmp_path: Path) -> None:
    from formats.test_agenticx_budget import build_budget_home

    win = open_window(qtbot, build_budget_home(tmp_path / "agx"), tmp_path)
    view = win.view("transcript")
    try:
        view.load()
        qtbot.waitUntil(lambda: view.session_box.count() > 0)
        labels = {view.session_box.itemData(i): view.session_box.itemText(i) for i in range(view.session_box.count())}
        assert labels["near"].endswith("compaction: 8 msgs / 1,000 chars left") and labels["over"].endswith("compaction: due")
        assert "compaction" not in labels["s2"]
        view.show_session("near")
        qtbot.waitUntil(lambda: view.session_id() == "near" and len(view.turns) == 12)
        assert not view.compaction.isHidden()
        assert view.compaction.text().startswith("Compaction — 8 message(s) and 1,000 characters left before compaction")
        view.show_session("s2")
        qtbot.waitUntil(lambda: view.session_id() == "s2")
        assert view.compaction.isHidden()  # nothing measured for a session with no messages
        sessions = next(win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())
                        if win.sidebar.topLevelItem(i).text(0) == "Sessions")
        tips = [sessions.child(j).toolTip(0) for j in range(sessions.childCount())]
        assert any(tip.startswith("over ") and "Compaction: compaction due: 21 messages" in tip for tip in tips)
    finally:
        win.close_store()
