"""The Retention tab, in the window as a person opens it: what the store's owner will expire or clean
up, read off the UI thread, the window chosen from its list; a store whose owner expires nothing
says so."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from helpers.owners import require, run_owner
from helpers.windows import open_window
from mnemoscope.storage.retention import CLEAN_UP
from mnemoscope.ui.views.retention_view import RetentionView

from formats.test_langgraph_ttl import BUILD


def _show(qtbot, win) -> RetentionView:  # noqa: ANN001
    view = win.view("retention")
    with qtbot.waitSignal(view.loaded):
        win.show_view("retention")
    return view


@pytest.fixture
def ttl_store(tmp_path: Path) -> Path:
    require("langgraph.store.sqlite")
    root = tmp_path / "agent"
    root.mkdir()
    run_owner(BUILD, path=str(root / "store.sqlite"))
    return root


def test_langgraph_ttls_listed_overdue_first_and_the_window_changes_what_is_listed(qtbot, ttl_store, tmp_path) -> None:
    win = open_window(qtbot, ttl_store, tmp_path)
    try:
        view = _show(qtbot, win)
        assert [u.preview for u in view.listed()] == [
            "An old draft reply", "Dana is on a call until noon", "Dana is travelling to Lisbon"]
        assert {u.action for u in view.listed()} == {CLEAN_UP}
        assert view.table.item(0, 0).text().split(" (")[1].startswith("overdue by")
        assert view.table.item(1, 1).text() == "clean up"
        assert view.table.item(1, 3).text().startswith("LangGraph TTL: 60 minutes after its last write")
        assert view.summary.text() == "3 within 30 days, 1 overdue (their owner acts when it next runs)"
        with qtbot.waitSignal(view.loaded) as further:
            view.set_within(timedelta(days=90))
        assert further.args == [4] and view.listed()[-1].preview == "Dana's lease ends in spring"
        with qtbot.waitSignal(view.loaded) as nearer:
            view.set_within(timedelta(days=1))
        assert nearer.args == [2] and view.summary.text().startswith("2 within 1 day")
    finally:
        win.close_store()
    assert view.table.rowCount() == 0


def test_a_store_whose_owner_expires_nothing_says_so(qtbot, demo_path: Path, tmp_path: Path) -> None:
    win = open_window(qtbot, demo_path, tmp_path)
    try:
        view = _show(qtbot, win)
        assert view.table.rowCount() == 0
        assert view.summary.text() == "Mnemoscope workspace keeps no expiry or retention rule"
    finally:
        win.close_store()
