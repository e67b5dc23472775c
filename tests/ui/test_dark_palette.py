"""Every view drawn on a dark palette: its series, lines and marks stand out from the background."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.theme import GRAPHIC_CONTRAST, apply_theme, contrast, is_dark, readable
from mnemoscope.ui.views.salience_view import chart_colors
from mnemoscope.ui.views.transcript_view import ROLE_COLORS
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QWidget


@pytest.fixture
def dark_window(qtbot, demo_path: Path, tmp_path: Path):
    app = QApplication.instance()
    apply_theme(app, "dark")
    try:
        win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        qtbot.addWidget(win)
        win.resize(1280, 800)
        win.show()
        with qtbot.waitSignals([win.store_opened, win.view("timeline").loaded, win.view("graph").loaded, win.view("salience").loaded,
                                win.view("transcript").loaded], timeout=20_000):
            win.open_path(demo_path)
        qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() > 0, timeout=10_000)
        yield win
        win.close_store()
    finally:
        apply_theme(app, "system")


def _image(qtbot, widget: QWidget) -> np.ndarray:
    qtbot.wait(50)
    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    width, height = image.width(), image.height()
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(height, image.bytesPerLine() // 4, 4)
    return raw[:, :width, 2::-1].astype(int)  # BGRA in memory: as RGB


def _pixels_like(pixels: np.ndarray, color: QColor, tolerance: int = 24) -> int:
    wanted = np.array([color.red(), color.green(), color.blue()])
    return int((np.abs(pixels - wanted).max(axis=2) <= tolerance).sum())


def _assert_stands_out(pixels: np.ndarray, color: QColor, background: QColor, least: int = 20) -> None:
    assert contrast(color, background) >= GRAPHIC_CONTRAST, f"{color.name()} on {background.name()}"
    assert _pixels_like(pixels, color) >= least, f"{color.name()} is not drawn"


def test_every_view_is_readable_on_a_dark_palette(qtbot, dark_window: MainWindow) -> None:
    win = dark_window
    background = win.palette().base().color()
    assert is_dark(win.palette())

    win.show_view("timeline")
    chart = win.view("timeline").chart
    pixels = _image(qtbot, chart)
    assert _pixels_like(pixels, background) > pixels.shape[0] * pixels.shape[1] // 3  # drawn on the dark base
    _assert_stands_out(pixels, chart.turns_color(), background)
    assert chart.colors
    for color in chart.colors.values():
        _assert_stands_out(pixels, color, background)

    win.table_actions.select_row(0)
    win.show_view("salience")
    qtbot.waitUntil(lambda: win.view("salience").curve.report is not None, timeout=10_000)
    colors = chart_colors(win.view("salience").palette())
    _assert_stands_out(_image(qtbot, win.view("salience").curve), colors["curve"], background)
    _assert_stands_out(_image(qtbot, win.view("salience").histogram), colors["bar"], background)

    win.show_view("graph")
    pixels = _image(qtbot, win.view("graph").view.viewport())
    _assert_stands_out(pixels, readable("#2f5d9e", background), background)  # the entities
    _assert_stands_out(pixels, win.view("graph").palette().text().color(), background, least=5)  # their names

    win.show_view("transcript")
    pixels = _image(qtbot, win.view("transcript").browser.viewport())
    for role in ("user", "assistant"):
        _assert_stands_out(pixels, readable(ROLE_COLORS[role], background, 4.5), background, least=5)
    assert _pixels_like(pixels, win.view("transcript").palette().text().color(), 40) > 50  # the turns' text


def test_the_old_fixed_colours_would_not_stand_out(qtbot) -> None:
    """The check above can fail: the colours the views used before a theme was known."""
    dark = QColor("#1e1e1e")
    assert contrast(QColor("#222222"), dark) < GRAPHIC_CONTRAST  # the timeline's turns line
    assert contrast(QColor("#2f5d9e"), dark) < GRAPHIC_CONTRAST  # the salience curve, the graph's entities
    assert contrast(readable("#2f5d9e", dark), dark) >= GRAPHIC_CONTRAST
