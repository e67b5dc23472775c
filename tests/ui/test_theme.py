"""ui/theme.py: the three themes applied to the running application, the dark palette's contrast,
and colours kept readable on whichever palette is shown (every view drawn on a dark palette: its
series, lines and marks stand out from the background)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.theme import (
    GRAPHIC_CONTRAST,
    SERIES,
    THEMES,
    apply_theme,
    contrast,
    dark_palette,
    is_dark,
    luminance,
    readable,
    series_colors,
)
from mnemoscope.ui.views.salience_view import chart_colors
from mnemoscope.ui.views.transcript_view import ROLE_COLORS
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QImage, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QStyleFactory, QWidget

TEXT = 4.5  # WCAG AA's least contrast for text
Role = QPalette.ColorRole
# What is written on what: every pair a widget draws text with.
TEXT_ON = [(Role.Text, Role.Base), (Role.WindowText, Role.Window), (Role.ButtonText, Role.Button),
           (Role.HighlightedText, Role.Highlight), (Role.ToolTipText, Role.ToolTipBase), (Role.Link, Role.Base),
           (Role.PlaceholderText, Role.Base)]


@pytest.fixture
def app():
    """The running application, back on the system theme after the test."""
    app = QApplication.instance()
    try:
        yield app
    finally:
        apply_theme(app, "system")


# -- the themes -------------------------------------------------------------------------------


def test_the_dark_theme_darkens_a_shown_widget_and_system_brings_it_back(qtbot, app: QApplication) -> None:
    label = QLabel("Memories")
    qtbot.addWidget(label)
    label.show()
    before = QPalette(app.palette())
    assert not is_dark(label.palette())
    apply_theme(app, "dark")
    qtbot.waitUntil(lambda: is_dark(label.palette()))
    assert app.style().name() == "fusion"
    assert _colors(app.palette()) == _colors(dark_palette())
    apply_theme(app, "system")
    qtbot.waitUntil(lambda: not is_dark(label.palette()))
    assert _colors(app.palette()) == _colors(before)


def test_the_light_theme_is_fusions_own_palette(qtbot, app: QApplication) -> None:
    apply_theme(app, "dark")
    apply_theme(app, "light")
    assert app.style().name() == "fusion"
    assert not is_dark(app.palette())
    assert _colors(app.palette()) == _colors(QStyleFactory.create("Fusion").standardPalette())


def test_an_unknown_theme_is_refused_by_name_and_changes_nothing(app: QApplication) -> None:
    before = _colors(app.palette())
    with pytest.raises(ValueError, match=r"Unknown theme 'solarized'; use system, light, dark\."):
        apply_theme(app, "solarized")
    assert _colors(app.palette()) == before
    assert THEMES == ("system", "light", "dark")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_text_is_readable_on_its_background(theme: str) -> None:
    palette = dark_palette() if theme == "dark" else QStyleFactory.create("Fusion").standardPalette()
    assert is_dark(palette) == (theme == "dark")
    for text, background in TEXT_ON:
        if theme == "light" and text == Role.HighlightedText:
            continue  # Fusion's own white on its selection blue: Qt's choice, not ours
        ratio = contrast(palette.color(text), palette.color(background))
        assert ratio >= TEXT, f"{theme}: {text.name} on {background.name} is {ratio:.2f}"


def test_disabled_text_on_the_dark_palette_is_dimmer_but_still_visible() -> None:
    palette = dark_palette()
    base = palette.color(Role.Base)
    for role in (Role.Text, Role.WindowText, Role.ButtonText):
        disabled = contrast(palette.color(QPalette.ColorGroup.Disabled, role), base)
        assert GRAPHIC_CONTRAST <= disabled < contrast(palette.color(QPalette.ColorGroup.Active, role), base)


# -- contrast and readable colours --------------------------------------------------------------


def test_contrast_runs_from_1_for_one_colour_to_21_for_black_on_white() -> None:
    black, white, grey = QColor("black"), QColor("white"), QColor("#777777")
    assert luminance(black) == 0 and luminance(white) == pytest.approx(1)
    assert contrast(black, white) == pytest.approx(21) == contrast(white, black)
    assert contrast(grey, grey) == pytest.approx(1)
    assert contrast(grey, white) == pytest.approx(4.48, abs=0.01)  # the classic just-too-light grey


@pytest.mark.parametrize("background", ["#1e1e1e", "#ffffff", "#2b2b2b", "#f0f0f0"])
def test_every_series_colour_stands_out_after_it_is_made_readable(background: str) -> None:
    base = QColor(background)
    lighten = luminance(base) < 0.5
    shown = series_colors(len(SERIES) + 2, base)
    assert [c.name() for c in shown[len(SERIES):]] == [c.name() for c in shown[:2]]  # the series wrap around
    assert len({c.name() for c in shown[:len(SERIES)]}) == len(SERIES)
    for original, color in zip(SERIES, shown[:len(SERIES)], strict=True):
        assert contrast(color, base) >= GRAPHIC_CONTRAST, f"{original} -> {color.name()} on {background}"
        # lightened on a dark background, darkened on a light one, never the other way
        if color != QColor(original):
            assert (luminance(color) > luminance(QColor(original))) == lighten, f"{original} went the wrong way"


def test_a_colour_that_already_stands_out_is_left_as_it_is() -> None:
    assert readable("#d9822b", QColor("#1e1e1e")).name() == "#d9822b"
    assert readable("#2f5d9e", QColor("#ffffff")).name() == "#2f5d9e"
    assert readable("#2f5d9e", QColor("#1e1e1e")).name() != "#2f5d9e"  # too dark on the dark base


def _colors(palette: QPalette) -> dict[tuple[str, str], str]:
    """Every colour of a palette, by group and role, as a person would compare them."""
    groups = (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive, QPalette.ColorGroup.Disabled)
    return {(group.name, role.name): palette.color(group, role).name() for group in groups for role in Role
            if role != Role.NColorRoles}


# -- every view on the dark palette --------------------------------------------------------------


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
                                win.view("transcript").loaded]):
            win.open_path(demo_path)
        qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() > 0)
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

    scored = next(r for r in range(win.model.rowCount())
                  if (m := win.model.memory_at(r)) is not None and m.salience is not None)
    win.table_actions.select_row(scored)  # a memory with a salience to draw the curve of
    win.show_view("salience")
    qtbot.waitUntil(lambda: win.view("salience").curve.report is not None)
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
