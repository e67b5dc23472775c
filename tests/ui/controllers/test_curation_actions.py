"""Several memories of every kind selected in the table are curated as one undoable step.

Curation from the actions: a selected memory deleted and the step undone through the session, the
actions enabled and named for the journal and the selection (what it allows read on a worker, an
answer for a selection left behind dropped), several memories confirmed first."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.sessions import open_session
from helpers.store_state import sql_rows, state_of
from mnemoscope.storage import Kind, MemoryQuery, Status, open_store
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION, record_id_for
from mnemoscope.ui.controllers.curation_actions import CHECKING, CurationActions
from mnemoscope.ui.controllers.table_actions import TableActions
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.widgets.memory_table import MemoryTable
from mnemoscope.ui.workers import running_workers
from PySide6.QtCore import QItemSelectionModel, QSettings, Qt
from PySide6.QtWidgets import QApplication, QMainWindow, QMessageBox


def _mixed_selection(root: Path) -> list[str]:
    """Three bullets of one daily log, two memory.db memories and a vector record of its own."""
    with open_store(root) as store:
        embedder = store.embedder()
        text = "a standalone vector fact about invoices"
        meta = {"channel": "webshop", "layer": "semantic", "status": "active", "created_at": "2026-10-01T00:00:00+00:00"}
        store._workspace.vectors.add_records(NATIVE_COLLECTION, ["solo-1"], [text], [meta], embedder.embed([text]))
        by_file: dict[str, list[str]] = {}
        for memory in store.page(MemoryQuery(kinds=(Kind.MARKDOWN,)), limit=500):
            if memory.source.path.startswith("memory/"):
                by_file.setdefault(memory.source.path, []).append(memory.id)
    daily = next(ids for ids in by_file.values() if len(ids) >= 3)[:3]
    mirrored = sql_rows(root, "SELECT id FROM memories WHERE md_file LIKE 'memory/%' ORDER BY id LIMIT 1")[0][0]
    promotable = sql_rows(root, "SELECT id FROM memories WHERE tags LIKE '%promotion-ready%' ORDER BY id LIMIT 1")[0][0]
    return [*daily, mirrored, promotable, record_id_for(NATIVE_COLLECTION, "solo-1")]


@pytest.fixture
def selection(demo_path: Path) -> list[str]:
    return _mixed_selection(demo_path)


@pytest.fixture
def window(qtbot, demo_path: Path, selection: list[str], tmp_path: Path):
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(demo_path)
    qtbot.waitUntil(lambda: win.model.total is not None and win.model.total > 0)
    yield win
    win.close_store()


def _show_every_row(qtbot, win: MainWindow) -> None:
    """Scroll through the whole table, as a person looking for the rows would."""
    model = win.model
    for row in range(model.rowCount()):
        model.index(row, 0).data()  # asks for the chunk that row is in
    qtbot.waitUntil(lambda: all(model.memory_at(r) is not None for r in range(model.rowCount())))


def _ctrl_click_select(win: MainWindow, ids: list[str]) -> None:
    win.table.clearSelection()
    for memory_id in ids:
        row = win.model.row_of(memory_id)
        assert row is not None, memory_id
        win.table.selectionModel().select(
            win.model.index(row, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        )


def test_deleting_a_mixed_selection_is_one_step_and_ctrl_z_brings_all_back(
    qtbot, window: MainWindow, demo_path: Path, selection: list[str]
) -> None:
    before = state_of(demo_path)
    entries = window.store._journal.count()
    total = window.model.total
    _show_every_row(qtbot, window)
    _ctrl_click_select(window, selection)
    assert sorted(m.id for m in window.table_actions.selected_memories()) == sorted(selection)
    assert {m.source.kind for m in window.table_actions.selected_memories()} == {Kind.MARKDOWN, Kind.SQLITE, Kind.CHROMA}

    window.table.setFocus()
    qtbot.waitUntil(window.curation.delete_action.isEnabled)  # once the selection is checked, on a worker
    qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    box = window.findChild(QMessageBox, "confirm_delete_box")
    assert box is not None and "Delete 6 memories?" in box.text()
    with qtbot.waitSignal(window.curated) as deleted:
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Yes), Qt.MouseButton.LeftButton)
    assert deleted.args[0].operation == "delete" and sorted(deleted.args[0].ids) == sorted(selection)
    store = window.store
    assert store._journal.count() == entries + 1  # one journal entry for all six
    assert window.curation.undo_action.text() == "&Undo delete"
    for memory_id in selection[:3]:
        assert store.find(memory_id) is None  # markdown keeps no deleted bullets
    for memory_id in selection[3:]:
        assert store.get(memory_id).status is Status.DELETED
    # The rows leave the table in place; nothing stays selected under another id.
    qtbot.waitUntil(lambda: window.model.total == total - len(selection))
    shown = {window.model.memory_at(r).id for r in range(window.model.rowCount()) if window.model.memory_at(r)}
    assert not shown & set(selection)
    assert window.table_actions.selected_memories() == []

    window.activateWindow()  # back from the confirmation box
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    with qtbot.waitSignal(window.curated) as undone:
        qtbot.keyClick(window.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert undone.args[0].operation == "undo"
    assert state_of(demo_path) == before  # every copy back, byte for byte
    assert window.curation.redo_action.text() == "&Redo delete"
    qtbot.waitUntil(lambda: window.model.total == total)
    assert all(store.get(memory_id).status is Status.ACTIVE for memory_id in selection)


def test_promoting_a_mixed_selection_is_one_step(qtbot, window: MainWindow, demo_path: Path, selection: list[str]) -> None:
    before = state_of(demo_path)
    entries = window.store._journal.count()
    _show_every_row(qtbot, window)
    _ctrl_click_select(window, selection)
    qtbot.waitUntil(lambda: window.curation.promote_action.isEnabled())
    # Two of the six miss the store's thresholds (one counts too few accesses, one a vector record
    # whose writer counts none): the window names them and asks.
    window.curation.promote_action.trigger()
    box = window.findChild(QMessageBox, "confirm_promote_box")
    assert box is not None and "2 of the 6 selected memories" in box.text()
    assert f"{selection[3]}: access_count" in box.text() and f"{selection[5]}: confidence not kept by this store, access_count not kept by this store" in box.text()
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.No), Qt.MouseButton.LeftButton)
    assert window.store._journal.count() == entries and state_of(demo_path) == before  # No writes nothing
    window.curation.promote_action.trigger()
    box = window.findChild(QMessageBox, "confirm_promote_box")
    with qtbot.waitSignal(window.curated) as promoted:
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Yes), Qt.MouseButton.LeftButton)
    outcome = promoted.args[0]
    assert outcome.operation == "promote" and len(outcome.ids) == len(selection)
    assert window.store._journal.count() == entries + 1
    each = window.store._journal.history(limit=1)[0].details["each"]
    assert sorted(d["forced"] for d in each) == [False] * 4 + [True] * 2
    assert sum(1 for i in outcome.ids if i.startswith("md:MEMORY.md:")) == 3
    assert window.curation.undo_action.text() == "&Undo promote"
    with qtbot.waitSignal(window.curated):
        window.curation.undo_action.trigger()
    assert state_of(demo_path) == before


def test_restoring_a_mixed_selection_is_one_step(qtbot, window: MainWindow, demo_path: Path, selection: list[str]) -> None:
    with open_store(demo_path) as store:  # deleted earlier, by another process
        from mnemoscope.storage import Curator

        Curator(store).delete(selection[3:])
    qtbot.waitUntil(lambda: window.curation.undo_action.text() == "&Undo delete")  # seen by polling
    status = window.sidebar  # show deleted memories in the table, as a person picks Status > deleted
    window.filter_search.apply_filter("status", "deleted")
    qtbot.waitUntil(lambda: window.model.total == 3)
    _show_every_row(qtbot, window)
    _ctrl_click_select(window, selection[3:])
    qtbot.waitUntil(lambda: window.curation.restore_action.isEnabled())
    entries = window.store._journal.count()
    with qtbot.waitSignal(window.curated) as restored:
        window.curation.restore_action.trigger()
    assert restored.args[0].operation == "restore" and sorted(restored.args[0].ids) == sorted(selection[3:])
    assert window.store._journal.count() == entries + 1
    assert all(window.store.get(i).status is Status.ACTIVE for i in selection[3:])
    assert status is window.sidebar


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
        qtbot.waitUntil(lambda: model.memory_at(2) is not None)
        curation.update_actions()
        assert not curation.undo_action.isEnabled() and not curation.delete_action.isEnabled()
        table_actions.select_row(0)
        with qtbot.waitSignal(curation.selection_checked):
            curation.update_actions()  # what the selection allows is read on a worker meanwhile
        assert curation.delete_action.isEnabled() and curation.edit_action.isEnabled()
        memory_id, before = model.memory_at(0).id, store.count()
        with qtbot.waitSignal(session.curated) as deleted:
            curation.delete_action.trigger()
        assert deleted.args[0].operation == "delete" and deleted.args[0].ids == [memory_id]
        assert store.count() == before - 1
        curation.update_actions()
        assert curation.undo_action.isEnabled() and curation.undo_action.text() == "&Undo delete"
        with qtbot.waitSignal(session.curated) as undone:
            curation.undo_action.trigger()
        assert undone.args[0].operation == "undo" and store.count() == before
        model.set_query(model.query)
        qtbot.waitUntil(lambda: model.memory_at(2) is not None)
        table_actions.select_row(1)
        table.selectionModel().select(model.index(2, 0), QItemSelectionModel.SelectionFlag.Select
                                      | QItemSelectionModel.SelectionFlag.Rows)
        ids = [m.id for m in table_actions.selected_memories()]
        assert len(ids) == 2
        curation.delete_selected()
        box = window.findChild(QMessageBox, "confirm_delete_box")
        assert box is not None and "Delete 2 memories?" in box.text()
        with qtbot.waitSignal(session.curated) as bulk:
            box.button(QMessageBox.StandardButton.Yes).click()
        assert sorted(bulk.args[0].ids) == sorted(ids) and store.count() == before - 2
        table_actions.detach()


def test_what_the_selection_allows_is_read_on_a_worker_and_an_answer_for_a_row_left_is_dropped(
    qtbot, window: MainWindow
) -> None:
    _show_every_row(qtbot, window)
    rows = [window.model.memory_at(r) for r in range(window.model.rowCount())]
    counted = next(r for r, m in enumerate(rows) if m.source.kind is Kind.SQLITE)  # counts accesses: reinforced
    bullet = next(r for r, m in enumerate(rows) if m.source.kind is Kind.MARKDOWN)  # counts none: not reinforced
    curation, checked = window.curation, []
    curation.selection_checked.connect(checked.append)

    window.table_actions.select_row(counted)
    # Not read yet: the selection's actions wait, and say so.
    assert not any(action.isEnabled() for action in curation.selection_actions)
    assert {action.toolTip() for action in curation.selection_actions} == {CHECKING}
    window.table_actions.select_row(bullet)  # moved on before the first answer came
    qtbot.waitUntil(lambda: bool(checked))
    qtbot.waitUntil(lambda: running_workers() == 0)  # the first row's answer came too
    assert [facts.key[0][0] for facts in checked] == [rows[bullet].id]
    assert curation.edit_action.isEnabled() and curation.delete_action.isEnabled()
    assert curation.promote_action.isEnabled() and not curation.reinforce_action.isEnabled()
    assert curation.delete_action.toolTip() == "Delete"

    window.table_actions.select_row(counted)
    qtbot.waitUntil(curation.reinforce_action.isEnabled)
    assert [facts.key[0][0] for facts in checked] == [rows[bullet].id, rows[counted].id]


def test_promoting_before_the_selection_is_checked_reads_it_on_a_worker_first(
    qtbot, window: MainWindow, selection: list[str]
) -> None:
    _show_every_row(qtbot, window)
    below, ready = selection[5], selection[4]  # a vector record of its own (no accesses), a promotion-ready row
    _ctrl_click_select(window, [below, ready])
    window.curation.promote_selected()  # as a script or a shortcut may, before the actions are checked
    assert window.findChild(QMessageBox, "confirm_promote_box") is None  # nothing was read on this thread
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "confirm_promote_box") is not None)
    box = window.findChild(QMessageBox, "confirm_promote_box")
    assert "1 of the 2 selected memories" in box.text() and f"{below}: confidence not kept by this store, access_count not kept" in box.text()
    qtbot.mouseClick(box.button(QMessageBox.StandardButton.No), Qt.MouseButton.LeftButton)
