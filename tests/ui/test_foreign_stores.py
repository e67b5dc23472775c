"""The app on stores other tools wrote: shown whole, curated only as the owner allows."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from helpers.owners import require, run_owner
from mnemoscope.ui.controllers.curation_actions import CHECKING
from mnemoscope.ui.main_window import MainWindow

ITEMS = [
    {"role": "user", "content": "Book a table for two in Lisbon"},
    {"type": "function_call", "call_id": "c1", "name": "find_restaurant", "arguments": "{}"},
    {"role": "assistant", "content": "Booked for 8pm."},
]
BUILD = """
import asyncio
from agents import SQLiteSession
asyncio.run(SQLiteSession("trip-1", db).add_items(items))
print(json.dumps("ok"))
"""
READ = """
import asyncio
from agents import SQLiteSession
print(json.dumps(asyncio.run(SQLiteSession("trip-1", db).get_items())))
"""


@pytest.fixture
def agents_db(tmp_path: Path) -> Path:
    require("agents")
    db = tmp_path / "agent.db"
    run_owner(BUILD, db=str(db), items=ITEMS)
    return db


def _open(qtbot, tmp_path: Path, path: Path) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(path)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == len(ITEMS) and win.model.memory_at(0) is not None)
    return win


def _select(qtbot, win: MainWindow, content: str) -> None:
    row = next(r for r in range(win.model.rowCount()) if win.model.memory_at(r).content == content)
    win.table.selectRow(row)
    qtbot.waitUntil(lambda: [m.content for m in win.table_actions.selected_memories()] == [content])
    qtbot.waitUntil(lambda: win.curation.delete_action.toolTip() != CHECKING)  # what it allows, read on a worker


def test_agents_session_is_shown_and_deleted_and_undone_through_the_window(qtbot, tmp_path, agents_db):
    win = _open(qtbot, tmp_path, agents_db)
    kinds = {win.model.index(r, 3).data() for r in range(win.model.rowCount())}
    assert kinds == {"openai-agents"}
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0)
    sessions = [win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())]
    assert any(item.text(0) == "Sessions" and item.child(0).text(0) == "session trip-1" for item in sessions)

    _select(qtbot, win, "Book a table for two in Lisbon")
    assert win.curation.edit_action.isEnabled() and win.curation.delete_action.isEnabled()
    assert not win.curation.promote_action.isEnabled() and not win.curation.reinforce_action.isEnabled()
    qtbot.waitUntil(lambda: "openai-agents" in win.detail.toPlainText())  # read on a worker

    with qtbot.waitSignal(win.curated):  # the step runs on the session's writer
        win.curation.delete_action.trigger()
    qtbot.waitUntil(lambda: win.model.rowCount() == 2)
    assert run_owner(READ, db=str(agents_db)) == ITEMS[1:]
    qtbot.waitUntil(lambda: win.curation.undo_action.isEnabled() and win.curation.undo_action.text() == "&Undo delete")
    with qtbot.waitSignal(win.curated):
        win.curation.undo_action.trigger()
    qtbot.waitUntil(lambda: win.model.rowCount() == 3)
    assert run_owner(READ, db=str(agents_db)) == ITEMS
    win.close_store()


def _owner_built(module: str, target: str = "store", **paths: str):
    """A builder that has the owning library write its store, as the format's own tests do.
    A target without a suffix is a folder; paths name files in it ("" is the target itself)."""

    def build(tmp_path: Path) -> Path:
        import importlib

        build_code = importlib.import_module(f"formats.test_{module}").BUILD
        where = tmp_path / target
        if not where.suffix:
            where.mkdir()
        run_owner(build_code, **{k: str(where / v) if v else str(where) for k, v in paths.items()})
        return where

    return build


def _builders():
    from formats.test_agenticx import build_agenticx_history, build_agenticx_home
    from formats.test_facts_db import build_facts_workspace
    from formats.test_claude_memory import build_claude_memories
    from formats.test_crewai import build_crewai_storage
    from formats.test_letta import build_letta_home
    from formats.test_openclaw import build_openclaw_state

    # builder, memories shown, formats in the kind column, a read-only memory and why, a session title
    return {
        "agenticx": (build_agenticx_home, 6, {"markdown", "agenticx", "agenticx-index"}, "user: what hotel?",
                     "contentless", "session s1"),
        # (its index's chunks of a deleted file are listed as deleted, out of the default view; its
        # chunks of transcripts are shown, read-only, beside the workspace's 6)
        "openclaw": (build_openclaw_state, 8, {"openclaw"}, "Book me a train", "rebuilds its memory index", "Trains"),
        "crewai": (build_crewai_storage, 4, {"crewai", "chroma"}, None, None, None),
        "letta": (build_letta_home, 3, {"letta"}, "Name: Ana.", "through Letta", "travel-agent conversation"),
        "mem0": (_owner_built("mem0", root="", mem0_dir=".mem0"), 3, {"mem0"}, None, None, None),
        "langgraph": (_owner_built("langgraph", root=""), 3, {"langgraph"}, None, None, None),
        "google_adk": (_owner_built("google_adk", "sessions.db", db=""), 2, {"google-adk"}, None, None, None),
        "claude": (build_claude_memories, 3, {"claude-memory"}, None, None, None),
        # messages.json, compaction and MemoryHook's workspace writes
        "agenticx_history": (build_agenticx_history, 15, {"markdown", "agenticx", "agenticx-index"}, None, None,
                             "session s4"),
        # the five-layer agent: its workspace markdown and structured facts DB as one store
        "facts_db": (lambda tmp: build_facts_workspace(tmp / "workspace"), 9, {"markdown", "facts-db"}, None, None,
                     None),
    }


@pytest.mark.parametrize(
    "name", ["agenticx", "agenticx_history", "facts_db", "openclaw", "crewai", "letta", "mem0", "langgraph",
             "google_adk", "claude"]
)
def test_the_window_opens_each_tool_store(qtbot, tmp_path, name):
    build, count, formats, read_only, reason, session = _builders()[name]
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(build(tmp_path))
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == count
                    and all(win.model.memory_at(r) is not None for r in range(count)))
    assert {win.model.index(r, 3).data() for r in range(count)} == formats
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0)
    if session:
        groups = [win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())]
        titles = [g.child(j).text(0) for g in groups if g.text(0) == "Sessions" for j in range(g.childCount())]
        assert session in titles
    if read_only:
        _select(qtbot, win, next(win.model.memory_at(r).content for r in range(count)
                                 if win.model.memory_at(r).content.startswith(read_only)))
        assert not win.curation.edit_action.isEnabled() and not win.curation.delete_action.isEnabled()
        assert reason in win.curation.delete_action.toolTip()
    win.close_store()


def test_the_window_shows_agentix_sub_agents_and_scopes_as_channels(qtbot, tmp_path, monkeypatch):
    from formats.test_agentix import build_agentix

    project, home = build_agentix(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(project)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == 7)

    def channels() -> dict[str, int]:
        for i in range(win.sidebar.topLevelItemCount()):
            top = win.sidebar.topLevelItem(i)
            if top.text(0) == "Channels":
                return {top.child(j).text(0): int(top.child(j).text(1)) for j in range(top.childCount())}
        return {}

    qtbot.waitUntil(lambda: channels() == {"main": 3, "project/researcher": 2, "local/researcher": 1,
                                           "user/writer": 1})
    _select(qtbot, win, "- short sentences\n")
    assert win.curation.edit_action.isEnabled() and win.curation.delete_action.isEnabled()  # the tool's own files: curated as it writes them
    win.close_store()
