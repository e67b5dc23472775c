"""File > Discover stores…: the stores under a folder are listed, and the one chosen opens."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage.demo import write_demo
from mnemoscope.ui.dialogs.discover_dialog import DiscoverDialog
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QMessageBox


def test_discover_lists_the_stores_under_a_folder_and_opens_the_one_chosen(qtbot, tmp_path: Path) -> None:
    from formats.test_agenticx import build_agenticx_home
    from formats.test_crewai import build_crewai_storage

    home = tmp_path / "home"
    home.mkdir()
    write_demo(home / "workspace", now=datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)).close()
    agenticx = build_agenticx_home(home)
    (home / "projects").mkdir()
    crew = build_crewai_storage(home / "projects")
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    assert win.discover_action.text() == "&Discover stores…"

    dialog = win.opening.discover_stores([home])
    with qtbot.waitSignal(dialog.searched):
        pass
    rows = {dialog.table.item(r, 1).text(): dialog.table.item(r, 0).text() for r in range(dialog.table.rowCount())}
    assert set(rows) == {str(home / "workspace"), str(agenticx), str(crew)}
    assert "AgenticX" in rows[str(agenticx)] and "CrewAI" in rows[str(crew)]
    assert rows[str(home / "workspace")].startswith("Mnemoscope workspace")
    assert dialog.status.text() == "3 memory stores found; double-click one to open it."
    assert not dialog.open_button.isEnabled()

    row = next(r for r in range(dialog.table.rowCount()) if dialog.table.item(r, 1).text() == str(crew))
    dialog.table.selectRow(row)
    assert dialog.open_button.isEnabled()
    with qtbot.waitSignal(win.store_opened):
        qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
    assert win.store is not None and win.store.root == crew
    qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None)


def test_opening_a_folder_that_only_holds_stores_offers_them(qtbot, tmp_path: Path) -> None:
    from formats.test_agenticx import build_agenticx_home

    home = tmp_path / "home"
    home.mkdir()
    agenticx = build_agenticx_home(home)
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.error_shown) as shown:
        win.open_path(home)
    assert f"{home} is no memory store itself but holds 1: {agenticx} (AgenticX" in shown.args[0]
    dialog = win.findChild(DiscoverDialog, "discover_dialog")
    assert dialog is not None and "no memory store itself" in dialog.status.text()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 1)
    assert dialog.table.item(0, 1).text() == str(agenticx)
    with qtbot.waitSignal(win.store_opened):
        dialog.table.cellDoubleClicked.emit(0, 0)
    assert win.store.root == agenticx and win.findChild(QMessageBox, "error_box") is None


def test_every_store_discovered_in_a_home_folder_opens_from_the_list(
    qtbot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The home folder of tests/storage/detect/test_discover.py (a store of every supported tool): each row
    of the list, chosen, opens in the window with the count the list gave."""
    from mnemoscope.storage import MemoryQuery
    from mnemoscope.ui.dialogs.table_mapping_dialog import TableMappingDialog
    from detect.test_discover import build_home

    places = build_home(tmp_path / "base")
    home = places.pop("")
    monkeypatch.setenv("HOME", str(home))  # Agentix's user scope is read from the home folder
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope"))  # where a table's mapping is kept
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()

    def listed() -> tuple[DiscoverDialog, dict[str, tuple[int, str]]]:
        dialog = win.opening.discover_stores([home])
        with qtbot.waitSignal(dialog.searched):
            pass
        rows = {dialog.table.item(r, 1).text(): (r, dialog.table.item(r, 2).text()) for r in range(dialog.table.rowCount())}
        return dialog, rows

    dialog, rows = listed()
    assert set(rows) == {str(p) for p in places.values()}
    opened = []
    for tool, path in sorted(places.items()):
        if dialog is None:
            dialog, rows = listed()
        row, memories = rows[str(path)]
        dialog.table.selectRow(row)
        if tool == "SQLite memory table":  # no format reads it: the window asks which columns mean what
            with qtbot.waitSignal(win.error_shown):
                qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
            mapping = win.findChild(TableMappingDialog, "table_mapping_dialog")
            qtbot.waitUntil(mapping.open_button.isEnabled)
            with qtbot.waitSignal(win.store_opened):
                qtbot.mouseClick(mapping.open_button, Qt.MouseButton.LeftButton)
        else:
            with qtbot.waitSignal(win.store_opened):
                qtbot.mouseClick(dialog.open_button, Qt.MouseButton.LeftButton)
        dialog = None
        qtbot.waitUntil(lambda: QApplication.activeModalWidget() is None)
        assert win.store is not None and win.store.root in (path, path.parent), (tool, win.store.root)
        assert str(win.store.count(MemoryQuery(statuses=()))) == memories, tool
        qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() > 0)
        qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0)  # its views read too
        assert win.findChild(QMessageBox, "error_box") is None, (tool, win.errors.last_error)
        opened.append(tool)
        win.close_store()
    assert len(opened) == len(places) == 17
