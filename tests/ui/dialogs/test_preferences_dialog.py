"""Preferences: the default search mode is saved at once and set in the window's search box."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.ui.dialogs.preferences_dialog import PreferencesDialog, saved_search_mode, saved_theme
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox


def test_a_search_mode_chosen_is_saved_and_applied(qtbot, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    box = QComboBox()
    box.addItems(["keyword", "vector", "hybrid"])
    dialog = PreferencesDialog(settings, box)
    qtbot.addWidget(dialog)
    default = saved_search_mode(settings)
    assert dialog.search_box.currentText() == default
    assert dialog.theme_box.currentText() == saved_theme(settings)
    other = "keyword" if default != "keyword" else "vector"
    dialog.search_box.setCurrentText(other)
    assert box.currentText() == other
    assert saved_search_mode(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)) == other
