"""Scratchpad keys edited and deleted in the window, as a person would: select a key, F2 or
Delete on the tree, the dialog or the confirmation, then Edit > Undo; disabled, with the reason,
where the scratchpad cannot be written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from formats.test_agenticx import build_agenticx_home, load_scratchpad
from helpers.owners import require, run_owner
from helpers.store_state import sql_rows, state_of
from mnemoscope.storage import Status
from mnemoscope.ui.dialogs.scratch_value_dialog import ScratchValueDialog
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.views.scratchpad_view import ScratchpadView
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox


def _open(qtbot, tmp_path: Path, path: Path, *, read_only: bool = False) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals([win.store_opened, win.view("scratchpad").loaded]):
        win.open_path(path, read_only=read_only)
    qtbot.keyClick(win, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert win.views.currentWidget() is win.view("scratchpad")
    return win


@pytest.fixture
def window(qtbot, demo_path: Path, tmp_path: Path):
    win = _open(qtbot, tmp_path, demo_path)
    yield win
    win.close_store()


def shown_value(view: ScratchpadView, session_id: str, key: str) -> str | None:
    """The Value cell of a key's row as the person sees it (None: the key is not listed)."""
    if not view.select_key(session_id, key):
        return None
    return view.tree.currentIndex().siblingAtColumn(1).data()


def pad(root: Path, session_id: str) -> dict[str, str]:
    return dict(sql_rows(root, "SELECT key, value FROM scratchpad WHERE session_id = ?", session_id))


def _edit(qtbot, win: MainWindow) -> ScratchValueDialog:
    qtbot.keyClick(win.view("scratchpad").tree, Qt.Key.Key_F2)
    shown = [d for d in win.findChildren(ScratchValueDialog, "scratch_value_dialog") if d.isVisible()]
    assert len(shown) == 1, "F2 on the key opened no dialog"
    return shown[0]


def _save(qtbot, win: MainWindow, dialog: ScratchValueDialog) -> None:
    with qtbot.waitSignals([win.curated, win.view("scratchpad").loaded]):
        qtbot.mouseClick(dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save),
                         Qt.MouseButton.LeftButton)


def _answer(qtbot, win: MainWindow, button: QMessageBox.StandardButton) -> str:
    shown = [b for b in win.findChildren(QMessageBox, "confirm_delete_scratch_box") if b.isVisible()]
    assert len(shown) == 1, "no confirmation was asked"
    box = shown[0]
    text = box.text()
    qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)
    return text


def _undo(qtbot, win: MainWindow) -> None:
    """Ctrl+Z (Edit > Undo) once the window is active again (a dialog just closed)."""
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)
    with qtbot.waitSignals([win.curated, win.view("scratchpad").loaded]):
        qtbot.keyClick(win.view("scratchpad").tree, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)


def test_editing_a_native_key_keeps_its_json_type_and_undo_puts_it_back(qtbot, window: MainWindow, demo_path: Path) -> None:
    before = state_of(demo_path)
    session = window.store.sessions()[0].id
    view = window.view("scratchpad")
    assert shown_value(view, session, "todo") == '{"open": ["write docs", "fix flaky test"], "done": 3}'
    assert view.edit_key_action.isEnabled() and view.delete_key_action.isEnabled()
    assert "Undo" in view.edit_key_action.toolTip()

    dialog = _edit(qtbot, window)
    assert json.loads(dialog.editor.toPlainText()) == {"open": ["write docs", "fix flaky test"], "done": 3}
    assert "\n  " in dialog.editor.toPlainText()  # indented for editing
    assert dialog.type_label.text() == "Saved as a JSON object."
    dialog.editor.setPlainText('{"open": ["ship it"], "done": 4}')
    _save(qtbot, window, dialog)

    assert json.loads(pad(demo_path, session)["todo"]) == {"open": ["ship it"], "done": 4}
    assert view.selected_key().key == "todo"  # the row read again is still the one selected
    assert shown_value(view, session, "todo") == '{"open": ["ship it"], "done": 4}'
    assert window.curation.undo_action.text() == "&Undo edit"

    view.select_key(session, "__taskspace_hint__")  # a string stays a string
    dialog = _edit(qtbot, window)
    assert dialog.editor.toPlainText() == "~/work/webshop" and dialog.type_label.text() == "Saved as text."
    dialog.editor.setPlainText("~/work/shop-v2")
    _save(qtbot, window, dialog)
    assert pad(demo_path, session)["__taskspace_hint__"] == "~/work/shop-v2"

    _undo(qtbot, window)
    _undo(qtbot, window)
    assert shown_value(view, session, "todo") == '{"open": ["write docs", "fix flaky test"], "done": 3}'
    assert shown_value(view, session, "__taskspace_hint__") == "~/work/webshop"
    assert state_of(demo_path) == before


def test_saving_an_unchanged_value_writes_no_step(qtbot, window: MainWindow) -> None:
    session = window.store.sessions()[0].id
    window.view("scratchpad").select_key(session, "todo")
    dialog = _edit(qtbot, window)
    dialog.editor.setPlainText('{"done": 3, "open": ["write docs", "fix flaky test"]}')  # same JSON, reordered
    assert not dialog.changed()
    qtbot.mouseClick(dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save),
                     Qt.MouseButton.LeftButton)
    window.session.write_pool.waitForDone(5_000)
    assert window.store._journal.history() == [] and not window.curation.undo_action.isEnabled()


def test_deleting_a_native_key_asks_first_and_leaves_the_selected_memory_alone(qtbot, window: MainWindow,
                                                                               demo_path: Path) -> None:
    before = state_of(demo_path)
    qtbot.waitUntil(lambda: window.model.rowCount() > 0 and window.model.memory_at(0) is not None)
    window.table_actions.select_row(0)  # a memory is selected in the (hidden) table: Delete on the tree is not for it
    memory = window.table_actions.selected_memories()[0]
    session = window.store.sessions()[0].id
    view = window.view("scratchpad")
    view.select_key(session, "__taskspace_hint__")
    view.tree.setFocus()

    qtbot.keyClick(view.tree, Qt.Key.Key_Delete)
    assert "Delete __taskspace_hint__ from the scratchpad of session" in _answer(qtbot, window, QMessageBox.StandardButton.No)
    window.session.write_pool.waitForDone(5_000)
    assert "__taskspace_hint__" in pad(demo_path, session)

    qtbot.keyClick(view.tree, Qt.Key.Key_Delete)
    with qtbot.waitSignals([window.curated, view.loaded]):
        _answer(qtbot, window, QMessageBox.StandardButton.Yes)
    assert "__taskspace_hint__" not in pad(demo_path, session)
    assert shown_value(view, session, "__taskspace_hint__") is None
    assert window.store.get(memory.id).status is Status.ACTIVE
    assert window.curation.undo_action.text() == "&Undo delete"

    _undo(qtbot, window)
    assert shown_value(view, session, "__taskspace_hint__") == "~/work/webshop"
    assert state_of(demo_path) == before


def test_an_edit_over_the_agents_write_is_refused_and_shown(qtbot, window: MainWindow, demo_path: Path) -> None:
    session = window.store.sessions()[0].id
    window.view("scratchpad").select_key(session, "session_facts")
    dialog = _edit(qtbot, window)
    with sqlite3.connect(demo_path / "memory.db") as con:  # the agent writes the key meanwhile
        con.execute("UPDATE scratchpad SET value = '- the agent wrote this' WHERE session_id = ? AND key = ?",
                    (session, "session_facts"))
    dialog.editor.setPlainText("- mine")
    with qtbot.waitSignal(window.error_shown) as shown:
        qtbot.mouseClick(dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save),
                         Qt.MouseButton.LeftButton)
    assert "session_facts of session" in shown.args[0] and "changed since it was read" in shown.args[0]
    assert pad(demo_path, session)["session_facts"] == "- the agent wrote this"
    for box in window.findChildren(QMessageBox, "error_box"):
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)


def test_agenticx_keys_are_edited_deleted_and_undone_as_agenticx_reads_them(qtbot, tmp_path: Path) -> None:
    home = build_agenticx_home(tmp_path)
    db = home / "memory" / "sessions.sqlite"
    original = load_scratchpad(db, "s1")
    win = _open(qtbot, tmp_path, home)
    view = win.view("scratchpad")
    assert shown_value(view, "s1", "legacy_note") == "plain old string"
    assert view.edit_key_action.isEnabled()

    dialog = _edit(qtbot, win)
    dialog.editor.setPlainText('{"status": "done", "n": 4}')
    assert dialog.type_label.text() == "Saved as a JSON object."
    _save(qtbot, win, dialog)
    assert load_scratchpad(db, "s1")["legacy_note"] == {"status": "done", "n": 4}

    view.select_key("s1", "session_facts")
    view.delete_key_action.trigger()
    with qtbot.waitSignals([win.curated, view.loaded]):
        _answer(qtbot, win, QMessageBox.StandardButton.Yes)
    assert "session_facts" not in load_scratchpad(db, "s1") and shown_value(view, "s1", "session_facts") is None

    _undo(qtbot, win)
    _undo(qtbot, win)
    assert load_scratchpad(db, "s1") == original
    assert shown_value(view, "s1", "legacy_note") == "plain old string"
    win.close_store()


def test_a_read_only_store_offers_no_scratchpad_change_and_says_why(qtbot, demo_path: Path, tmp_path: Path) -> None:
    before = state_of(demo_path)
    win = _open(qtbot, tmp_path, demo_path, read_only=True)
    view = win.view("scratchpad")
    assert not view.edit_key_action.isEnabled()
    assert "Select a scratchpad key" in view.edit_key_action.toolTip()
    view.select_key(win.store.sessions()[0].id, "todo")
    for action in (view.edit_key_action, view.delete_key_action):
        assert not action.isEnabled()
        assert "cannot be changed here" in action.toolTip() and "opened read-only" in action.toolTip()
    qtbot.keyClick(view.tree, Qt.Key.Key_F2)
    qtbot.keyClick(view.tree, Qt.Key.Key_Delete)
    assert win.findChild(ScratchValueDialog) is None and win.findChild(QMessageBox, "confirm_delete_scratch_box") is None
    with qtbot.waitSignal(win.session.released):  # its files close on a worker
        win.close_store()
    assert state_of(demo_path) == before


ADK_SESSION = """
import asyncio
from google.adk.sessions import DatabaseSessionService
async def main():
    svc = DatabaseSessionService("sqlite+aiosqlite:///" + db)
    await svc.create_session(app_name="trip", user_id="dana", session_id="s1", state={"step": 1})
    await svc.close() if hasattr(svc, "close") else None
asyncio.run(main())
print(json.dumps("ok"))
"""


def test_a_scratchpad_mnemoscope_only_reads_is_disabled_with_the_reason(qtbot, tmp_path: Path) -> None:
    require("google.adk.sessions")
    require("aiosqlite")
    db = tmp_path / "sessions.db"
    run_owner(ADK_SESSION, db=str(db))  # Google ADK's session state: listed as scratchpad keys, only read
    before = db.read_bytes()
    win = _open(qtbot, tmp_path, db)
    view = win.view("scratchpad")
    assert view.select_key("s1", "step") and shown_value(view, "s1", "step") == "1"
    for action in (view.edit_key_action, view.delete_key_action):
        assert not action.isEnabled()
        assert "whose scratchpad Mnemoscope only reads" in action.toolTip()
    with qtbot.waitSignal(win.session.released):  # its files close on a worker
        win.close_store()
    assert db.read_bytes() == before
