"""The Help menu and Preferences, opened from the window's menus as a person would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from mnemoscope.storage.data_folder import data_folder
from mnemoscope.ui.dialogs.help_dialogs import (
    AboutDialog,
    HelpDialog,
    ShortcutsDialog,
    StoreFormatsDialog,
    markdown_table,
    readme_text,
    section,
)
from mnemoscope.ui.dialogs.preferences_dialog import PreferencesDialog
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.theme import apply_theme, is_dark
from PySide6.QtCore import QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication

README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.fixture
def window(qtbot, tmp_path: Path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    return win


def _open(qtbot, win: MainWindow, entry: str):
    action = next(a for a in win.help_menu.actions() if a.text().replace("&", "") == entry)
    action.trigger()
    qtbot.waitUntil(lambda: getattr(win, "help_dialog", None) is not None and win.help_dialog.isVisible())
    return win.help_dialog


def test_shortcuts_list_every_shortcut_of_the_window(qtbot, window: MainWindow) -> None:
    dialog = _open(qtbot, window, "Keyboard shortcuts")
    assert isinstance(dialog, ShortcutsDialog)
    rows = dialog.rows()
    undo = QKeySequence(QKeySequence.StandardKey.Undo).toString(QKeySequence.SequenceFormat.NativeText)
    assert ["Edit", "Undo", undo] in rows
    assert ["View", "Transcript", "Ctrl+6"] in [[w, c, k] for w, c, k in rows]
    assert any(c == "Keyboard shortcuts" and k == "Ctrl+/" for _, c, k in rows)
    window.curation.edit_action.setShortcut(QKeySequence("Ctrl+E"))  # generated from the actions: never stale
    assert ["Edit", "Edit memory…", "Ctrl+E"] in ShortcutsDialog(window).rows()


def test_about_shows_version_license_and_where_data_is_kept(qtbot, window: MainWindow) -> None:
    dialog = _open(qtbot, window, "About Mnemoscope")
    assert isinstance(dialog, AboutDialog)
    text = dialog.text.text()
    assert "0.1.0" in text and re.search(r"MIT", text)
    assert str(data_folder()) in text and window.settings.fileName() in text
    assert "PySide6" in text and "Python" in text


def test_store_formats_lists_every_format_of_the_readme_table(qtbot, window: MainWindow) -> None:
    dialog = _open(qtbot, window, "Store formats")
    assert isinstance(dialog, StoreFormatsDialog)
    _, table = markdown_table(section(README.read_text(encoding="utf-8"), "## Stores other tools wrote"))
    rows = dialog.rows()
    assert len(rows) == len(table) >= 15
    tools = [r[0] for r in rows]
    for tool in ("mem0 (mem0ai)", "LangGraph", "OpenAI Agents SDK", "Google ADK", "AgenticX", "OpenClaw",
                 "CrewAI", "Letta", "Claude memory tool", "any Chroma directory"):
        assert tool in tools


def test_help_renders_the_readme_headings(qtbot, window: MainWindow) -> None:
    dialog = _open(qtbot, window, "Mnemoscope Help")
    assert isinstance(dialog, HelpDialog)
    shown = dialog.browser.toPlainText()
    headings = re.findall(r"^#{1,3} (.+)$", readme_text(), flags=re.MULTILINE)
    assert len(headings) > 5
    for heading in ("Two commands", "The command line", "Stores other tools wrote"):
        assert heading in headings and heading in shown
    sizes = {}  # rendered as headings (bigger than the text), not shown as markdown
    block = dialog.browser.document().begin()
    while block.isValid():
        it = block.begin()
        if not it.atEnd():
            sizes.setdefault(block.text(), it.fragment().charFormat().font().pointSizeF())
        block = block.next()
    body = sizes["See and fix what your AI agents remember."]
    assert sizes["Mnemoscope"] > sizes["The command line"] > body


def test_preferences_apply_the_theme_live_and_keep_it(qtbot, window: MainWindow, tmp_path: Path) -> None:
    dialog = window.show_preferences()
    assert isinstance(dialog, PreferencesDialog)
    app = QApplication.instance()
    try:
        dialog.theme_box.setCurrentText("dark")
        assert is_dark(app.palette())
        qtbot.waitUntil(lambda: is_dark(window.palette()))  # the window follows, by its PaletteChange event
        dialog.search_box.setCurrentText("keyword")
        assert window.memories.search_mode.currentText() == "keyword"
        again = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(again)
        assert again.memories.search_mode.currentText() == "keyword"
        assert PreferencesDialog(again.settings).theme_box.currentText() == "dark"
        dialog.theme_box.setCurrentText("light")
        assert not is_dark(app.palette())
    finally:
        apply_theme(app, "system")
