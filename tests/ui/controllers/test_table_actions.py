"""The table's model, selection, row menu, columns and export, driven on a real store through the
session: the model is made when asked, a selected row is the memory read, the column choice and
the wrapping are remembered, an export writes the selection."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.ui.controllers.table_actions import TableActions
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS
from mnemoscope.ui.widgets.memory_table import MemoryTable
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMainWindow


def test_model_selection_menus_columns_and_export(qtbot, demo_path: Path, tmp_path: Path) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    table = MemoryTable()
    window.setCentralWidget(table)
    window.show()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    with open_session(qtbot, demo_path) as session:
        actions = TableActions(session, table, settings, window.statusBar(), {}, window)
        with qtbot.waitSignal(actions.model_attached) as attached:
            model = actions.attach()
        assert attached.args == [model] and table.model() is model and actions.model is model
        model.set_query(model.query)
        qtbot.waitUntil(lambda: model.total is not None and model.memory_at(1) is not None, timeout=10_000)
        with qtbot.waitSignal(actions.selection_changed):
            actions.select_row(1)
        assert [m.id for m in actions.selected_memories()] == [model.memory_at(1).id]
        menu = actions.table_menu()
        names = [a.objectName() for a in menu.actions() if a.objectName()]
        assert names[:2] == ["copy_ids_action", "open_source_action"]
        assert not next(a for a in menu.actions() if a.objectName() == "show_in_graph_action").isEnabled()  # no graph view
        column = COLUMN_KEYS[1]
        actions.set_column_shown(column, False)
        assert table.isColumnHidden(1) and actions.hidden_columns() == [column]
        chooser = {a.objectName(): a for a in actions.column_menu().actions()}
        assert not chooser[f"column_{column}_action"].isChecked() and not chooser["column_content_action"].isEnabled()
        actions.wrap_action.setChecked(True)
        assert table.wordWrap() and model.wrap and settings.value("memories/wrap", type=bool)
        with qtbot.waitSignal(actions.exported, timeout=10_000) as exported:
            actions.export_to(tmp_path / "out.jsonl", "jsonl")
        assert exported.args[0]["exported"] == 1
        lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["id"] for line in lines] == [model.memory_at(1).id]
        actions.detach()
        assert actions.model is None and table.model() is None and actions.selected_memories() == []
