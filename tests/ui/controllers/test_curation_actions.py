"""Curation from the actions: a selected memory deleted and the step undone through the session, the
actions enabled and named for the journal and the selection, several memories confirmed first."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.ui.controllers.curation_actions import CurationActions
from mnemoscope.ui.controllers.table_actions import TableActions
from mnemoscope.ui.widgets.memory_table import MemoryTable
from PySide6.QtCore import QItemSelectionModel, QSettings
from PySide6.QtWidgets import QMainWindow, QMessageBox


def test_delete_undo_and_a_confirmed_bulk_delete(qtbot, demo_path: Path, tmp_path: Path) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    table = MemoryTable()
    window.setCentralWidget(table)
    window.show()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        table_actions = TableActions(session, table, settings, window.statusBar(), {}, window)
        curation = CurationActions(session, table_actions, {}, window)
        model = table_actions.attach()
        model.set_query(model.query)
        qtbot.waitUntil(lambda: model.memory_at(2) is not None, timeout=10_000)
        curation.update_actions()
        assert not curation.undo_action.isEnabled() and not curation.delete_action.isEnabled()
        table_actions.select_row(0)
        curation.update_actions()
        assert curation.delete_action.isEnabled() and curation.edit_action.isEnabled()
        memory_id, before = model.memory_at(0).id, store.count()
        with qtbot.waitSignal(session.curated, timeout=10_000) as deleted:
            curation.delete_action.trigger()
        assert deleted.args[0].operation == "delete" and deleted.args[0].ids == [memory_id]
        assert store.count() == before - 1
        curation.update_actions()
        assert curation.undo_action.isEnabled() and curation.undo_action.text() == "&Undo delete"
        with qtbot.waitSignal(session.curated, timeout=10_000) as undone:
            curation.undo_action.trigger()
        assert undone.args[0].operation == "undo" and store.count() == before
        model.set_query(model.query)
        qtbot.waitUntil(lambda: model.memory_at(2) is not None, timeout=10_000)
        table_actions.select_row(1)
        table.selectionModel().select(model.index(2, 0), QItemSelectionModel.SelectionFlag.Select
                                      | QItemSelectionModel.SelectionFlag.Rows)
        ids = [m.id for m in table_actions.selected_memories()]
        assert len(ids) == 2
        curation.delete_selected()
        box = window.findChild(QMessageBox, "confirm_delete_box")
        assert box is not None and "Delete 2 memories?" in box.text()
        with qtbot.waitSignal(session.curated, timeout=10_000) as bulk:
            box.button(QMessageBox.StandardButton.Yes).click()
        assert sorted(bulk.args[0].ids) == sorted(ids) and store.count() == before - 2
        table_actions.detach()
