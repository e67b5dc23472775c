"""The app on stores other tools wrote: shown whole, curated only as the owner allows."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from formats.owners import require, run_owner
from ui.main_window import MainWindow

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
    with qtbot.waitSignal(win.store_opened, timeout=20_000):
        win.open_path(path)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == len(ITEMS) and win.model.memory_at(0) is not None)
    return win


def _select(qtbot, win: MainWindow, content: str) -> None:
    row = next(r for r in range(win.model.rowCount()) if win.model.memory_at(r).content == content)
    win.table.selectRow(row)
    qtbot.waitUntil(lambda: [m.content for m in win.selected_memories()] == [content])


def test_agents_session_is_shown_and_deleted_and_undone_through_the_window(qtbot, tmp_path, agents_db):
    win = _open(qtbot, tmp_path, agents_db)
    kinds = {win.model.index(r, 3).data() for r in range(win.model.rowCount())}
    assert kinds == {"openai-agents"}
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0)
    sessions = [win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())]
    assert any(item.text(0) == "Sessions" and item.child(0).text(0) == "session trip-1" for item in sessions)

    _select(qtbot, win, "Book a table for two in Lisbon")
    assert win.edit_action.isEnabled() and win.delete_action.isEnabled()
    assert not win.promote_action.isEnabled() and not win.reinforce_action.isEnabled()
    assert "openai-agents" in win.detail.toPlainText()

    win.delete_action.trigger()
    qtbot.waitUntil(lambda: win.model.rowCount() == 2)
    assert run_owner(READ, db=str(agents_db)) == ITEMS[1:]
    win.undo_action.trigger()
    qtbot.waitUntil(lambda: win.model.rowCount() == 3)
    assert run_owner(READ, db=str(agents_db)) == ITEMS
    win.close_store()
