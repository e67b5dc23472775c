"""The window on a store part this install cannot read (CrewAI 1.x's LanceDB table without the
crewai extra; lancedb's import blocked stands in for its absence): the sidebar and the status bar
say "unread: install mnemoscope[crewai]", and a store of nothing else is refused in those words,
never shown as 0 memories."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from formats.test_crewai import build_crewai_storage, write_lance
from helpers.windows import open_window
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings

UNREAD = "unread: install mnemoscope[crewai]"


@pytest.fixture(autouse=True)
def without_lancedb(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lancedb")
    monkeypatch.setitem(sys.modules, "lancedb", None)


def sidebar_group(win: MainWindow, title: str) -> list[tuple[str, str]]:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == title:
            return [(top.child(j).text(0), top.child(j).toolTip(0)) for j in range(top.childCount())]
    return []


def test_the_sidebar_and_status_bar_say_what_was_not_read(qtbot, tmp_path: Path):
    root = build_crewai_storage(tmp_path)
    write_lance(root / "memory")
    win = open_window(qtbot, root, tmp_path)
    qtbot.waitUntil(lambda: bool(sidebar_group(win, "Not read here")))
    [(entry, tip)] = sidebar_group(win, "Not read here")
    assert entry == UNREAD and tip.startswith(f"{UNREAD} (CrewAI unified memory (LanceDB) at {root}/memory")
    assert win.sidebar.topLevelItem(0).text(1) == "4"  # All memories: what was read
    assert win.statusBar().currentMessage().startswith(f"{UNREAD} (CrewAI unified memory (LanceDB)")
    assert win.store_notes[0] == tip
    win.close_store()


def test_a_store_of_nothing_else_is_refused_in_those_words(qtbot, tmp_path: Path):
    write_lance(tmp_path / "crew1x" / "memory")
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.error_shown) as shown:
        win.open_path(tmp_path / "crew1x")
    assert shown.args[0].startswith(f"{UNREAD} (CrewAI unified memory (LanceDB) at {tmp_path}/crew1x/memory")
    assert win.store is None and win.count_label.text() == "No store open"
