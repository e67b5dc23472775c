"""Looking at a store in the window writes nothing; File > Open Read-only refuses every change."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from mnemoscope.ui.main_window import MainWindow


def file_hashes(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _browse_every_view(qtbot, win: MainWindow, path: Path, *, read_only: bool) -> None:
    with qtbot.waitSignals([win.store_opened, win.view("scratchpad").loaded, win.view("salience").loaded,
                            win.view("timeline").loaded, win.view("graph").loaded]):
        win.open_path(path, read_only=read_only)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() > 0
                    and win.model.memory_at(0) is not None)
    for row in (0, 1, 2):
        win.table_actions.select_row(row)
    for name in win.view_names:
        win.show_view(name)
        qtbot.wait(50)


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_browsing_every_view_changes_no_byte(qtbot, demo_path: Path, tmp_path: Path, read_only: bool) -> None:
    before = file_hashes(demo_path)
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    _browse_every_view(qtbot, win, demo_path, read_only=read_only)
    with qtbot.waitSignal(win.session.released):  # its files close on a worker
        win.close_store()
    assert file_hashes(demo_path) == before


def test_a_store_opened_read_only_offers_no_change(qtbot, demo_path: Path, tmp_path: Path) -> None:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    assert win.open_read_only_action in win.menuBar().actions()[0].menu().actions()
    _browse_every_view(qtbot, win, demo_path, read_only=True)
    win.show_view("memories")
    win.table_actions.select_row(0)
    assert win.windowTitle().endswith("(read-only)")
    qtbot.waitUntil(lambda: "opened read-only" in win.curation.delete_action.toolTip())  # checked on a worker
    for action in (win.curation.edit_action, win.curation.delete_action, win.curation.promote_action, win.curation.restore_action,
                   win.curation.reinforce_action, win.curation.undo_action, win.curation.redo_action, win.curation.reembed_action):
        assert not action.isEnabled(), action.text()
    assert "opened read-only" in win.curation.delete_action.toolTip()
    # While open, SQLite keeps an empty -wal and -shm beside memory.db for the pooled read
    # connections; closing removes them, leaving every file as it was.
    before = {name: digest for name, digest in file_hashes(demo_path).items() if not name.endswith(("-wal", "-shm"))}
    with qtbot.waitSignal(win.error_shown) as shown:
        win.curation.delete_selected()  # the shortcut path, as if the action were triggered anyway
    assert "opened read-only" in shown.args[0]
    with qtbot.waitSignal(win.session.released):  # its files close on a worker
        win.close_store()
    assert file_hashes(demo_path) == before
