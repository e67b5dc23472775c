"""The app on the seed systems' own stores (issue 11): each opens with the right count, its facet
is in the sidebar and filters the table when clicked, and one curation step through the window
reaches the owner's files and is undone from the window."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers.owners import require, run_owner
from helpers.windows import open_window, sidebar_counts, step_curated
from mnemoscope.ui.controllers.curation_actions import CHECKING
from mnemoscope.ui.dialogs.edit_dialog import EditDialog
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import Qt


def _rows_loaded(win: MainWindow, count: int) -> bool:
    return (win.model is not None and win.model.rowCount() == count
            and all(win.model.memory_at(r) is not None for r in range(count)))


def _contents(win: MainWindow) -> set[str]:
    return {win.model.memory_at(r).content for r in range(win.model.rowCount())}


def _click_sidebar(qtbot, win: MainWindow, title: str, value: str, count: int) -> None:
    """Click an entry of the sidebar as a person would; the table then lists count rows."""
    group = next(win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())
                 if win.sidebar.topLevelItem(i).text(0) == title)
    item = next(group.child(j) for j in range(group.childCount()) if group.child(j).text(0) == value)
    win.sidebar.scrollToItem(item)
    qtbot.mouseClick(win.sidebar.viewport(), Qt.MouseButton.LeftButton,
                     pos=win.sidebar.visualItemRect(item).center())
    qtbot.waitUntil(lambda: _rows_loaded(win, count))


def _select(qtbot, win: MainWindow, content: str) -> None:
    """Select the row of content; what it allows is read on a worker: the actions follow once it is in."""
    row = next(r for r in range(win.model.rowCount()) if win.model.memory_at(r).content == content)
    win.table_actions.select_row(row)
    qtbot.waitUntil(lambda: [m.content for m in win.table_actions.selected_memories()] == [content]
                    and win.curation.delete_action.toolTip() != CHECKING)
    assert win.curation.delete_action.isEnabled(), win.curation.delete_action.toolTip()  # else a trigger does nothing


def _edit_through_dialog(qtbot, win: MainWindow, new_content: str) -> None:
    assert win.curation.edit_action.isEnabled(), win.curation.edit_action.toolTip()
    win.curation.edit_action.trigger()
    dialog = win.findChild(EditDialog, "edit_dialog")
    assert dialog is not None and dialog.content.isEnabled()
    dialog.content.setPlainText(new_content)
    with step_curated(qtbot, win):
        dialog.accept()


def _undo(qtbot, win: MainWindow, label: str) -> None:
    qtbot.waitUntil(lambda: win.curation.undo_action.isEnabled() and win.curation.undo_action.text() == f"&Undo {label}")
    with step_curated(qtbot, win):
        win.curation.undo_action.trigger()


def test_mem0_on_qdrant_local_mode_channel_facet_edit_and_undo_read_back_by_mem0(qtbot, tmp_path: Path) -> None:
    require("mem0")
    from formats.test_mem0_qdrant import BUILD, owner_view

    root = tmp_path / "mem0-qdrant"
    root.mkdir()
    ids = run_owner(BUILD, root=str(root), mem0_dir=str(root / ".mem0"))
    win = open_window(qtbot, root, tmp_path)
    qtbot.waitUntil(lambda: _rows_loaded(win, 3))
    qtbot.waitUntil(lambda: sidebar_counts(win, "Channels") == {"user:dana": 2, "agent:helper/run:r1": 1})
    _click_sidebar(qtbot, win, "Channels", "user:dana", 2)
    assert _contents(win) == {"Dana prefers green tea", "Dana lives in Lisbon"}

    _select(qtbot, win, "Dana lives in Lisbon")
    _edit_through_dialog(qtbot, win, "Dana lives in Porto")
    seen = owner_view(root, ids["lisbon"])
    assert seen["one"]["memory"] == "Dana lives in Porto"
    assert [h["event"] for h in seen["history"]] == ["ADD", "UPDATE"]
    _undo(qtbot, win, "edit")
    assert owner_view(root, ids["lisbon"])["one"]["memory"] == "Dana lives in Lisbon"
    win.close_store()


def test_five_layer_workspace_kind_facet_and_fact_edit_and_undo_in_the_facts_db(qtbot, tmp_path: Path) -> None:
    from formats.test_facts_db import build_facts_workspace

    workspace = build_facts_workspace(tmp_path / "workspace")
    win = open_window(qtbot, workspace, tmp_path)
    qtbot.waitUntil(lambda: _rows_loaded(win, 9))
    # the workspace markdown and the facts DB as one store, each counted
    qtbot.waitUntil(lambda: sidebar_counts(win, "Kinds") == {"markdown": 5, "sqlite": 4})
    _click_sidebar(qtbot, win, "Kinds", "sqlite", 4)
    assert {win.model.memory_at(r).source.format for r in range(4)} == {"facts-db"}

    _select(qtbot, win, "My cat's name is Whiskerino")
    qtbot.waitUntil(lambda: "preference" in win.detail.toPlainText() and "facts-db" in win.detail.toPlainText())
    _edit_through_dialog(qtbot, win, "My cat's name is Whiskerina")
    db = workspace / "facts.db"

    def value() -> str:
        con = sqlite3.connect(db)
        try:
            return con.execute("SELECT value FROM facts WHERE id = 'fact_cat'").fetchone()[0]
        finally:
            con.close()

    assert value() == "My cat's name is Whiskerina"
    _undo(qtbot, win, "edit")

    def restored() -> None:  # failed once in a loaded run (not reproduced in five more): waited for, value shown
        assert value() == "My cat's name is Whiskerino"

    qtbot.waitUntil(restored)
    win.close_store()


def test_agentix_scope_and_sub_agent_facets_and_a_delete_undone_through_the_window(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from formats.test_agentix import build_agentix

    project, home = build_agentix(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    win = open_window(qtbot, project, tmp_path)
    qtbot.waitUntil(lambda: _rows_loaded(win, 7))
    qtbot.waitUntil(lambda: sidebar_counts(win, "Channels") == {
        "main": 3, "project/researcher": 2, "local/researcher": 1, "user/writer": 1})
    _click_sidebar(qtbot, win, "Channels", "project/researcher", 2)
    assert _contents(win) == {"- CP timetables are reliable\n", "night_train: true\n"}
    # A sub-agent across its scopes: the researcher's project and local memories together.
    assert sidebar_counts(win, "Sub-agents") == {"researcher": 3, "writer": 1}
    _click_sidebar(qtbot, win, "Sub-agents", "researcher", 3)
    assert _contents(win) == {"- CP timetables are reliable\n", "night_train: true\n", "rail API sandbox only\n"}
    assert win.filter_search.filters.describe() == "Channel: local/researcher + project/researcher"  # its chip

    _click_sidebar(qtbot, win, "Channels", "user/writer", 1)
    style = home / ".agentix" / "agent-memory" / "writer" / "style.md"
    _select(qtbot, win, "- short sentences\n")
    with step_curated(qtbot, win):
        win.curation.delete_action.trigger()
    assert not style.exists()  # the Memories tool's delete: the file goes
    _undo(qtbot, win, "delete")
    assert style.read_text(encoding="utf-8") == "- short sentences\n"
    win.close_store()


def test_agenticx_home_with_messages_json_channels_sessions_and_a_bullet_edit_undone(qtbot, tmp_path: Path) -> None:
    from formats.test_agenticx import build_agenticx_history

    home = build_agenticx_history(tmp_path)
    win = open_window(qtbot, home, tmp_path)
    qtbot.waitUntil(lambda: _rows_loaded(win, 15))
    qtbot.waitUntil(lambda: sidebar_counts(win, "Channels") == {"travel": 1, "s1": 2, "s2": 1, "_global": 11})
    assert "session s4" in sidebar_counts(win, "Sessions")  # a session read from its messages.json
    _click_sidebar(qtbot, win, "Channels", "s1", 2)
    assert _contents(win) == {"Booked the Porto hotel", "Planned the Porto trip"}

    _click_sidebar(qtbot, win, "Channels", "_global", 11)
    _select(qtbot, win, "The user prefers window seats.")
    memory_md = home / "workspace" / "MEMORY.md"
    before = memory_md.read_bytes()
    _edit_through_dialog(qtbot, win, "The user prefers aisle seats.")
    text = memory_md.read_text(encoding="utf-8")
    assert "\nThe user prefers aisle seats.\n" in text and "window seats" not in text
    _undo(qtbot, win, "edit")
    assert memory_md.read_bytes() == before
    win.close_store()
