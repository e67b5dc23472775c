"""The embedding map in the window, driven as a person would: show the Map tab, drag a rectangle or a
lasso over points, click a point; the memories table lists what the map selects."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.table_rows import read_every_row
from mnemoscope.storage import open_store
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.store_session import StoreSession
from mnemoscope.ui.views.embedding_map_view import EmbeddingMapView, points_inside, polygon_of
from PySide6.QtCore import QPoint, QPointF, QSettings, Qt
from PySide6.QtGui import QColor, QPalette, QPolygonF


@pytest.fixture
def window(qtbot, demo_path: Path, tmp_path: Path):
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1200, 800)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(demo_path)
    yield win
    win.close_store()


def _show_map(qtbot, win: MainWindow) -> EmbeddingMapView:
    with qtbot.waitSignal(win.view("map").loaded):
        win.show_view("map")
    return win.view("map")


def _listed_ids(qtbot, win: MainWindow, count: int) -> list[str]:
    qtbot.waitUntil(lambda: win.model is not None and win.model.total == count)
    return [m.id for m in read_every_row(qtbot, win.model)]


def _drag(qtbot, widget, points: list[QPoint], modifier=Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.mousePress(widget, Qt.MouseButton.LeftButton, modifier, points[0])
    for point in points[1:]:
        qtbot.mouseMove(widget, point)
    qtbot.mouseRelease(widget, Qt.MouseButton.LeftButton, modifier, points[-1])


def test_the_map_shows_every_vector_of_the_demo_store(qtbot, window: MainWindow, demo_path: Path) -> None:
    view = _show_map(qtbot, window)
    assert view.message_shown() == "" and view.canvas.isVisible()
    data = view.prepared.data
    with open_store(demo_path, read_only=True) as store:
        assert data.count == sum(store._workspace.vectors.record_count(n) for n in store._workspace.vectors.collections())
        assert all(store.find(i) is not None for i in data.ids)
    assert "PCA" in view.status.text() and f"{data.count:,} vectors" in view.status.text()
    assert view.legend.text().count("■") == len(set(data.fields["channel"]))
    view.colour_box.setCurrentText("layer")
    assert view.legend.text().count("■") == len(set(data.fields["layer"]))
    for control in (view.colour_box, view.lasso_button, view.reset_button, view.clear_button, view.canvas):
        assert control.accessibleName() and control.objectName()


def test_a_rubber_band_selects_the_points_inside_and_the_table_lists_exactly_them(qtbot, window: MainWindow) -> None:
    view = _show_map(qtbot, window)
    positions = view.canvas.widget_positions()
    left, top = positions.min(axis=0)
    middle = float(np.median(positions[:, 0]))
    bottom = positions[:, 1].max()
    start, end = QPoint(int(left) - 3, int(top) - 3), QPoint(int(middle), int(bottom) + 3)
    inside = ((positions[:, 0] >= start.x()) & (positions[:, 0] <= end.x())
              & (positions[:, 1] >= start.y()) & (positions[:, 1] <= end.y()))
    expected = sorted(np.asarray(view.prepared.data.ids)[inside].tolist())
    assert 0 < len(expected) < view.prepared.data.count
    with qtbot.waitSignal(view.selection_changed) as selected:
        _drag(qtbot, view.canvas, [start, QPoint((start.x() + end.x()) // 2, end.y() // 2), end])
    assert sorted(selected.args[0]) == expected
    assert f"{len(expected):,} selected" in view.status.text()
    assert sorted(_listed_ids(qtbot, window, len(expected))) == expected
    assert any("selected on the map" in label for _key, label in window.filter_search.filters.chips())
    qtbot.mouseClick(view.table_button, Qt.MouseButton.LeftButton)
    assert window.views.currentWidget() is not view
    qtbot.mouseClick(window.memories.filter_chips.close_button("ids"), Qt.MouseButton.LeftButton)  # the chip's ✕
    qtbot.waitUntil(lambda: window.model.total is not None and window.model.total > len(expected))
    assert view.selected_ids() == [] and not window.filter_search.filters.ids


def test_clear_selection_lists_every_memory_again(qtbot, window: MainWindow) -> None:
    view = _show_map(qtbot, window)
    where = view.canvas.widget_point(0).toPoint()
    with qtbot.waitSignal(view.neighbours_found):
        qtbot.mouseClick(view.canvas, Qt.MouseButton.LeftButton, pos=where)
    qtbot.waitUntil(lambda: window.model.total == 1)
    with qtbot.waitSignal(view.selection_changed) as cleared:
        qtbot.mouseClick(view.clear_button, Qt.MouseButton.LeftButton)
    assert cleared.args[0] == []
    qtbot.waitUntil(lambda: window.model.total is not None and window.model.total > 1)
    assert not window.filter_search.filters.ids


def test_a_shift_drag_lasso_selects_the_points_inside_it(qtbot, window: MainWindow) -> None:
    view = _show_map(qtbot, window)
    positions = view.canvas.widget_positions()
    (x0, y0), (x1, y1) = positions.min(axis=0), positions.max(axis=0)
    trail = [QPoint(int(x0) - 4, int(y0) - 4), QPoint(int(x1) + 4, int(y0) - 4), QPoint(int(x0) - 4, int(y1) + 4)]
    polygon = QPolygonF([QPointF(p) for p in trail])
    inside = [polygon.containsPoint(QPointF(x, y), Qt.FillRule.OddEvenFill) for x, y in positions.tolist()]
    expected = sorted(np.asarray(view.prepared.data.ids)[np.array(inside)].tolist())
    assert 0 < len(expected) < view.prepared.data.count
    with qtbot.waitSignal(view.selection_changed) as selected:
        _drag(qtbot, view.canvas, trail, Qt.KeyboardModifier.ShiftModifier)
    assert sorted(selected.args[0]) == expected
    assert sorted(_listed_ids(qtbot, window, len(expected))) == expected


def test_clicking_a_point_selects_it_and_rings_its_neighbours(qtbot, window: MainWindow) -> None:
    view = _show_map(qtbot, window)
    target = 3
    where = view.canvas.widget_point(target).toPoint()
    clicked = view.canvas.point_near(QPointF(where))
    assert clicked is not None
    with qtbot.waitSignal(view.neighbours_found) as found:
        qtbot.mouseClick(view.canvas, Qt.MouseButton.LeftButton, pos=where)
    memory_id = view.prepared.data.ids[clicked]
    assert view.selected_ids() == [memory_id]
    assert len(found.args[0]) > 0 and memory_id not in [i for i, _d in found.args[0]]
    assert view.canvas.neighbour_indices and view.canvas.focus_index == clicked
    assert _listed_ids(qtbot, window, 1) == [memory_id]


def test_a_store_without_vectors_says_so_instead_of_a_blank_canvas(qtbot, markdown_only: Path, tmp_path: Path) -> None:
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(markdown_only)
    view = _show_map(qtbot, win)
    assert "no vectors" in view.message_shown()
    assert view.message.isVisible() and not view.canvas.isVisible()
    win.close_store()


def test_points_are_readable_on_a_dark_palette(qtbot, demo_path: Path) -> None:
    session = StoreSession()
    view = EmbeddingMapView(session)
    qtbot.addWidget(view)
    palette = view.palette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(QPalette.ColorRole.Window, QColor("#1e1e1e"))
    view.setPalette(palette)
    view.resize(600, 400)
    view.show()
    with qtbot.waitSignal(session.opened):
        session.open(demo_path, read_only=True)
    with qtbot.waitSignal(view.loaded):
        view.load()
    image = view.canvas.grab().toImage()
    seen = {image.pixelColor(x, y).name() for x in range(0, image.width(), 2) for y in range(0, image.height(), 2)}
    lit = [QColor(c) for c in seen if QColor(c).lightnessF() > 0.35]
    assert lit, "no point stands out from the dark background"
    session.close()


def test_points_inside_follows_the_even_odd_rule() -> None:
    points = np.array([[1.0, 1.0], [4.0, 5.0], [9.5, 1.0], [3.0, 8.0], [-1.0, 2.0]])
    triangle = [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)]
    assert points_inside(points, triangle).tolist() == [True, True, False, False, False]


def test_point_arrays_hold_exactly_the_projected_points() -> None:
    points = np.random.default_rng(5).random((5000, 2))
    polygon = polygon_of(points)
    assert polygon.size() == len(points)
    assert np.array_equal(np.array([(p.x(), p.y()) for p in polygon]), points)
    assert polygon_of(np.zeros((0, 2))).size() == 0
