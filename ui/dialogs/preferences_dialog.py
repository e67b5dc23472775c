"""Preferences: the theme (applied as it is picked) and the default search mode, kept in QSettings."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QWidget

from ..theme import THEMES, apply_theme

THEME_KEY = "appearance/theme"
SEARCH_MODE_KEY = "search/default_mode"
SEARCH_MODES = ("keyword", "vector", "hybrid")
DEFAULT_SEARCH_MODE = "hybrid"


def saved_theme(settings: QSettings) -> str:
    theme = str(settings.value(THEME_KEY, "system"))
    return theme if theme in THEMES else "system"


def saved_search_mode(settings: QSettings) -> str:
    mode = str(settings.value(SEARCH_MODE_KEY, DEFAULT_SEARCH_MODE))
    return mode if mode in SEARCH_MODES else DEFAULT_SEARCH_MODE


def apply_saved_theme(settings: QSettings) -> None:
    """At start-up: the theme the person chose last time ("system" leaves Qt's choice alone)."""
    app = QApplication.instance()
    theme = saved_theme(settings)
    if isinstance(app, QApplication) and theme != "system":
        apply_theme(app, theme)


class PreferencesDialog(QDialog):
    """Each change is applied and saved at once; Close keeps them."""

    def __init__(self, settings: QSettings, search_mode: QComboBox | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.search_mode = search_mode  # the window's search mode box, set to the new default
        self.setWindowTitle("Preferences")
        self.setObjectName("preferences_dialog")
        self.theme_box = QComboBox()
        self.theme_box.setObjectName("preferences_theme")
        self.theme_box.setAccessibleName("Theme")
        self.theme_box.setAccessibleDescription("System follows the desktop; light and dark use Qt's Fusion style")
        self.theme_box.addItems(THEMES)
        self.theme_box.setCurrentText(saved_theme(settings))
        self.theme_box.currentTextChanged.connect(self._on_theme_chosen)
        self.search_box = QComboBox()
        self.search_box.setObjectName("preferences_search_mode")
        self.search_box.setAccessibleName("Default search mode")
        self.search_box.addItems(SEARCH_MODES)
        self.search_box.setCurrentText(saved_search_mode(settings))
        self.search_box.currentTextChanged.connect(self._on_search_mode_chosen)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.setObjectName("preferences_buttons")
        buttons.setAccessibleName("Close")
        buttons.rejected.connect(self.reject)
        layout = QFormLayout(self)
        layout.addRow("Theme", self.theme_box)
        layout.addRow("Default search mode", self.search_box)
        layout.addRow(buttons)

    def _on_theme_chosen(self, theme: str) -> None:
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)
        self.settings.setValue(THEME_KEY, theme)
        self.settings.sync()

    def _on_search_mode_chosen(self, mode: str) -> None:
        self.settings.setValue(SEARCH_MODE_KEY, mode)
        self.settings.sync()
        if self.search_mode is not None:
            self.search_mode.setCurrentText(mode)
