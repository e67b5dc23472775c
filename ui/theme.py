"""Themes (system, light, dark) and colours that stay readable on whichever palette is shown."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

THEMES = ("system", "light", "dark")
# Series colours, in order; each is lightened or darkened as the background needs.
SERIES = ("#2f5d9e", "#d9822b", "#3a9e6a", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#b7950b")
# WCAG's least contrast for graphics a person must make out (lines, bars, markers).
GRAPHIC_CONTRAST = 3.0

_system_style: str | None = None
_system_palette: QPalette | None = None


def dark_palette() -> QPalette:
    palette = QPalette()
    colors = {
        QPalette.ColorRole.Window: "#2b2b2b",
        QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1e1e",
        QPalette.ColorRole.AlternateBase: "#2a2a2a",
        QPalette.ColorRole.ToolTipBase: "#3a3a3a",
        QPalette.ColorRole.ToolTipText: "#e6e6e6",
        QPalette.ColorRole.PlaceholderText: "#8c8c8c",
        QPalette.ColorRole.Text: "#e6e6e6",
        QPalette.ColorRole.Button: "#353535",
        QPalette.ColorRole.ButtonText: "#e6e6e6",
        QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Link: "#6fa8ff",
        QPalette.ColorRole.Highlight: "#3d6fb6",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Light: "#505050",
        QPalette.ColorRole.Midlight: "#404040",
        QPalette.ColorRole.Mid: "#303030",
        QPalette.ColorRole.Dark: "#1a1a1a",
        QPalette.ColorRole.Shadow: "#000000",
    }
    for role, color in colors.items():
        palette.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return palette


def apply_theme(app: QApplication, theme: str) -> None:
    """Apply a theme to the whole application, live: "system" is what Qt chose at start-up."""
    global _system_style, _system_palette
    if theme not in THEMES:
        raise ValueError(f"Unknown theme {theme!r}; use {', '.join(THEMES)}.")
    if _system_style is None:
        _system_style = app.style().name()
        _system_palette = QPalette(app.palette())
    if theme == "system":
        app.setStyle(QStyleFactory.create(_system_style))
        app.setPalette(_system_palette or QPalette())
        return
    app.setStyle(QStyleFactory.create("Fusion"))
    app.setPalette(dark_palette() if theme == "dark" else app.style().standardPalette())


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def luminance(color: QColor) -> float:
    """WCAG relative luminance."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio, 1 (none) to 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(color: QColor | str, background: QColor, least: float = GRAPHIC_CONTRAST) -> QColor:
    """color, lightened on a dark background or darkened on a light one until it stands out."""
    shown = QColor(color)
    lighten = luminance(background) < 0.5
    for _ in range(12):
        if contrast(shown, background) >= least:
            break
        shown = shown.lighter(125) if lighten else shown.darker(125)
    return shown


def series_colors(count: int, background: QColor) -> list[QColor]:
    return [readable(SERIES[i % len(SERIES)], background) for i in range(count)]
