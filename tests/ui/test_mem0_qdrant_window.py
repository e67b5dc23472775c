"""The app on a mem0 store on Qdrant's local mode, written by the real mem0ai library."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from formats.test_mem0_qdrant import BUILD
from helpers.owners import require, run_owner
from mnemoscope.ui.controllers.curation_actions import CHECKING
from mnemoscope.ui.main_window import MainWindow


def test_the_window_opens_and_curates_a_mem0_qdrant_store(qtbot, tmp_path: Path):
    require("mem0")
    root = tmp_path / "mem0-qdrant"
    root.mkdir()
    run_owner(BUILD, root=str(root), mem0_dir=str(root / ".mem0"))
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(root)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == 3
                    and all(win.model.memory_at(r) is not None for r in range(3)))
    assert {win.model.index(r, 3).data() for r in range(3)} == {"mem0"}
    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0)
    groups = [win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())]
    titles = [g.child(j).text(0) for g in groups if g.text(0) == "Sessions" for j in range(g.childCount())]
    assert "mem0 messages of user_id=dana" in titles
    row = next(r for r in range(3) if win.model.memory_at(r).content == "Dana lives in Lisbon")
    win.table.selectRow(row)
    qtbot.waitUntil(lambda: [m.content for m in win.table_actions.selected_memories()] == ["Dana lives in Lisbon"])
    qtbot.waitUntil(lambda: win.curation.delete_action.toolTip() != CHECKING)  # what it allows, read on a worker
    assert win.curation.edit_action.isEnabled() and win.curation.delete_action.isEnabled()
    win.close_store()
