"""Embedding map view: a store's vectors in 2-D (storage.views.embedding_map), selectable.

The projection, and the point arrays the canvas paints (one QPolygonF per colour, per field to
colour by), are made on a worker; the canvas paints every point of a colour in one drawPoints
call. Drag a rectangle to select (Shift+drag, or the lasso toggle, draws a free-hand lasso); a
click selects the nearest memory and rings its nearest neighbours (found on a worker, in the full
space); the wheel zooms about the cursor, a right- or middle-button drag pans.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from mnemoscope.storage import MemoryStore
from mnemoscope.storage.views.embedding_map import COLOUR_FIELDS, DEFAULT_LIMIT, EmbeddingMap, embedding_map, neighbours
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QPolygonF,
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedLayout,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from ..workers import ASKED, Worker
from .base_view import View

# Qualitative colours told apart by most colour-blind readers (Okabe-Ito, with a grey), toned
# per palette so that each stays readable on a light or a dark background.
POINT_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#999999")
NEIGHBOURS = 10
POINT_PX = 4.0  # 6 px while the map has few points
FEW_POINTS = 2_000
CLICK_PX = 8.0  # a click this close to a point picks it
DRAG_PX = 4.0  # a press that moves less than this is a click
MARGIN = 16.0
HALO_PX = 8.0  # selected points are drawn over a square of the highlight colour this wide


@dataclass
class PreparedMap:
    """A map as the canvas paints it: points in a unit square (y up), grouped by colour per field."""

    data: EmbeddingMap
    unit: Any  # numpy (n, 2) float64 in [0, 1]
    groups: dict[str, list[tuple[str, QPolygonF]]]  # field -> (label, its points), most points first
    index_of: dict[str, int]


def prepare_map(worker: Worker, store: MemoryStore, limit: int = DEFAULT_LIMIT) -> PreparedMap:
    """Runs on a worker: the projection, then the canvas's point arrays."""
    data = embedding_map(
        store, limit=limit, progress=lambda done, total: worker.signals.yielded.emit((done, total)),
        cancelled=lambda: worker.cancelled,
    )
    xy = np.asarray(data.xy, dtype=np.float64)
    unit = np.zeros((len(xy), 2))
    if len(xy):
        low, span = xy.min(axis=0), np.ptp(xy, axis=0)
        size = float(span.max()) or 1.0
        unit = (xy - low) / size + (1.0 - span / size) / 2.0  # the same scale on both axes, centred
        unit[:, 1] = 1.0 - unit[:, 1]
    groups: dict[str, list[tuple[str, QPolygonF]]] = {}
    for name in COLOUR_FIELDS:
        labels = np.asarray(data.fields[name], dtype=str) if data.count else np.zeros(0, dtype=str)
        found, counts = np.unique(labels, return_counts=True)
        ordered = sorted(zip(found.tolist(), counts.tolist(), strict=True), key=lambda t: (-t[1], t[0]))
        groups[name] = [(label, polygon_of(unit[labels == label])) for label, _n in ordered]
    return PreparedMap(data, unit, groups, {memory_id: i for i, memory_id in enumerate(data.ids)})


def polygon_of(points: Any) -> QPolygonF:
    """A QPolygonF of numpy (n, 2) points: copied into its storage in one numpy assignment (no
    QPointF per point, which would keep the worker holding the GIL); point by point where that
    storage cannot be reached."""
    polygon = QPolygonF()
    if not len(points):
        return polygon
    polygon.resize(len(points))
    try:
        import shiboken6

        # PySide6's stubs type data() as one QPointF and VoidPtr as taking an int; data() is the
        # address of the polygon's array of points, which VoidPtr wraps as a writable buffer.
        address: Any = polygon.data()
        void_ptr: Any = shiboken6.VoidPtr
        storage = np.frombuffer(void_ptr(address, len(points) * 16, True), dtype=np.float64)
        storage[:2] = (1.5, -2.5)  # within the first point: harmless should data() be a copy of it
        if polygon.at(0) == QPointF(1.5, -2.5):  # it is the polygon's storage
            storage[:] = np.ascontiguousarray(points, dtype=np.float64).ravel()
            return polygon
    except (ImportError, TypeError, ValueError):
        pass
    return QPolygonF([QPointF(x, y) for x, y in np.asarray(points, dtype=np.float64).tolist()])


def point_colours(palette: QPalette, count: int) -> list[QColor]:
    """count colours for points, readable on the palette's base colour."""
    dark = palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5
    out = []
    for i in range(count):
        colour = QColor(POINT_COLOURS[i % len(POINT_COLOURS)])
        out.append(colour.lighter(125) if dark else colour.darker(115) if colour.lightnessF() > 0.6 else colour)
    return out


class MapCanvas(QWidget):
    """Paints the points; turns drags and clicks into selections. Signals: selected(object) with
    the indices (numpy) a drag enclosed, clicked(int) with the index of the point clicked."""

    selected = Signal(object)
    clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(320, 240)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.prepared: PreparedMap | None = None
        self.field = COLOUR_FIELDS[0]
        self.lasso_mode = False
        self.zoom = 1.0
        self.pan = QPointF(0.0, 0.0)
        self.selection = np.zeros(0, dtype=np.int64)
        self.selection_shape: QPolygonF | None = None  # in unit coordinates, kept while the selection is
        self._selected_points = QPolygonF()
        self.focus_index: int | None = None
        self.neighbour_indices: list[int] = []
        self._press: QPointF | None = None
        self._trail: list[QPointF] = []
        self._panning: QPointF | None = None
        self._lasso_drag = False

    # -- what is shown --------------------------------------------------------------------------

    def set_map(self, prepared: PreparedMap | None) -> None:
        self.prepared = prepared
        self.zoom, self.pan = 1.0, QPointF(0.0, 0.0)
        self.clear_selection()

    def set_field(self, field: str) -> None:
        self.field = field
        self.update()

    def clear_selection(self) -> None:
        self.set_selection(np.zeros(0, dtype=np.int64))

    def set_selection(self, indices: Any, shape: QPolygonF | None = None, focus: int | None = None) -> None:
        """Select these points (shape: the rectangle or lasso drawn, in unit coordinates; focus:
        the point clicked, whose neighbours are ringed once found)."""
        self.selection = indices
        self.selection_shape = shape
        self.focus_index, self.neighbour_indices = focus, []
        unit = self.prepared.unit if self.prepared is not None else np.zeros((0, 2))
        self._selected_points = polygon_of(unit[indices]) if len(indices) else QPolygonF()
        self.update()

    def reset_view(self) -> None:
        self.zoom, self.pan = 1.0, QPointF(0.0, 0.0)
        self.update()

    def transform(self) -> QTransform:
        """Unit square -> widget pixels, with the zoom and pan."""
        side = max(1.0, min(self.width(), self.height()) - 2 * MARGIN) * self.zoom
        left = (self.width() - side) / 2 + self.pan.x()
        top = (self.height() - side) / 2 + self.pan.y()
        return QTransform(side, 0.0, 0.0, side, left, top)

    def widget_point(self, index: int) -> QPointF:
        """Where point index is drawn, in widget pixels."""
        assert self.prepared is not None
        x, y = self.prepared.unit[index]
        return self.transform().map(QPointF(float(x), float(y)))

    def widget_positions(self) -> Any:
        """Every point's widget position, as a numpy (n, 2) array."""
        assert self.prepared is not None
        t = self.transform()
        return self.prepared.unit * np.array([t.m11(), t.m22()]) + np.array([t.dx(), t.dy()])

    # -- painting ------------------------------------------------------------------------------

    def paintEvent(self, _event: Any) -> None:
        painter = QPainter(self)
        palette = self.palette()
        painter.fillRect(self.rect(), palette.base())
        prepared = self.prepared
        if prepared is None or not prepared.data.count:
            return
        groups = prepared.groups[self.field]
        colours = point_colours(palette, len(groups))
        t = self.transform()  # polygons are mapped (in C++), not the painter: pens stay in pixels
        highlight = palette.color(QPalette.ColorRole.Highlight)
        if self.selection_shape is not None:
            fill = QColor(highlight)
            fill.setAlpha(40)
            painter.setPen(QPen(highlight, 1.0))
            painter.setBrush(fill)
            painter.drawPolygon(t.map(self.selection_shape))
            painter.setBrush(Qt.BrushStyle.NoBrush)
        if len(self.selection):
            painter.setPen(_point_pen(highlight, HALO_PX + (2 if prepared.data.count < FEW_POINTS else 0)))
            painter.drawPoints(t.map(self._selected_points))
        size = POINT_PX + 2 if prepared.data.count < FEW_POINTS else POINT_PX
        for (_label, points), colour in zip(groups, colours, strict=True):
            painter.setPen(_point_pen(colour, size))
            painter.drawPoints(t.map(points))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = palette.color(QPalette.ColorRole.Text)
        if self.focus_index is not None:
            focus = t.map(self._unit_point(self.focus_index))
            painter.setPen(QPen(text, 1.0))
            for i in self.neighbour_indices:
                where = t.map(self._unit_point(i))
                painter.drawLine(focus, where)
                painter.drawEllipse(where, 5.0, 5.0)
            painter.setPen(QPen(highlight, 2.5))
            painter.drawEllipse(focus, 7.0, 7.0)
        if self._trail:
            painter.setPen(QPen(text, 1, Qt.PenStyle.DashLine))
            if self._lasso_drag:
                painter.drawPolyline(QPolygonF(self._trail))
            else:
                painter.drawRect(QRectF(self._trail[0], self._trail[-1]).normalized())

    def _unit_point(self, index: int) -> QPointF:
        assert self.prepared is not None
        x, y = self.prepared.unit[index]
        return QPointF(float(x), float(y))

    # -- mouse --------------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() in (Qt.MouseButton.RightButton, Qt.MouseButton.MiddleButton):
            self._panning = event.position()
            return
        if event.button() != Qt.MouseButton.LeftButton or self.prepared is None:
            return
        self._press = event.position()
        self._trail = [event.position()]
        self._lasso_drag = self.lasso_mode or bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        # The press started the gesture (a test's synthetic move may carry no buttons).
        if self._panning is not None:
            self.pan += event.position() - self._panning
            self._panning = event.position()
            self.update()
            return
        if self._press is None:
            self._hover(event.position())
            return
        if self._lasso_drag:
            last = self._trail[-1]
            if (event.position() - last).manhattanLength() >= 3:
                self._trail.append(event.position())
        else:
            self._trail = [self._press, event.position()]
        self.update()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._panning is not None:
            self._panning = None
            return
        if self._press is None:
            return
        press, trail, lasso = self._press, self._trail + [event.position()], self._lasso_drag
        self._press, self._trail = None, []
        if max((p - press).manhattanLength() for p in trail) < DRAG_PX:  # a lasso may end where it began
            index = self.point_near(event.position())
            if index is not None:
                self.clicked.emit(index)
            self.update()
            return
        if lasso:
            self.select_shape(QPolygonF(trail))
        else:
            rect = QRectF(press, event.position()).normalized()
            self.select_shape(QPolygonF([rect.topLeft(), rect.topRight(), rect.bottomRight(), rect.bottomLeft()]))

    def wheelEvent(self, event: QWheelEvent) -> None:
        factor = 1.25 if event.angleDelta().y() > 0 else 1 / 1.25
        zoom = min(max(self.zoom * factor, 0.5), 400.0)
        anchor = event.position()
        before = self.transform().inverted()[0].map(anchor)
        self.zoom = zoom
        after = self.transform().map(before)
        self.pan += anchor - after  # the point under the cursor stays there
        self.update()
        event.accept()

    def _hover(self, where: QPointF) -> None:
        index = self.point_near(where)
        if index is None or self.prepared is None:
            self.setToolTip("")
            return
        data = self.prepared.data
        fields = ", ".join(f"{f} {data.fields[f][index]}" for f in COLOUR_FIELDS)
        self.setToolTip(f"{data.ids[index]}\n{fields}")

    # -- hit testing ----------------------------------------------------------------------------

    def point_near(self, where: QPointF) -> int | None:
        """The point drawn nearest to where, if within CLICK_PX."""
        if self.prepared is None or not self.prepared.data.count:
            return None
        d = ((self.widget_positions() - np.array([where.x(), where.y()])) ** 2).sum(axis=1)
        best = int(d.argmin())
        return best if d[best] <= CLICK_PX**2 else None

    def select_shape(self, shape: QPolygonF) -> None:
        """Select the points inside shape (widget pixels): a rectangle or a lasso."""
        if self.prepared is None:
            return
        corners = [shape.at(i) for i in range(shape.size())]
        inside = points_inside(self.widget_positions(), [(p.x(), p.y()) for p in corners])
        self.set_selection(np.flatnonzero(inside), self.transform().inverted()[0].map(shape))
        self.selected.emit(self.selection)


def points_inside(points: Any, polygon: list[tuple[float, float]]) -> Any:
    """Which points (numpy (n, 2)) lie inside polygon (even-odd rule), as a bool array; only the
    points within its bounding box are tested edge by edge."""
    inside = np.zeros(len(points), dtype=bool)
    if len(polygon) < 3 or not len(points):
        return inside
    vertices = np.asarray(polygon, dtype=np.float64)
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    boxed = np.flatnonzero((points[:, 0] >= low[0]) & (points[:, 0] <= high[0])
                           & (points[:, 1] >= low[1]) & (points[:, 1] <= high[1]))
    x, y = points[boxed, 0], points[boxed, 1]
    hits = np.zeros(len(boxed), dtype=bool)
    for (x1, y1), (x2, y2) in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
        if y1 == y2:
            continue
        crosses = (y1 > y) != (y2 > y)
        hits ^= crosses & (x < (x2 - x1) * (y - y1) / (y2 - y1) + x1)
    inside[boxed] = hits
    return inside


def _point_pen(colour: QColor, width: float) -> QPen:
    """A pen whose points are squares of width pixels (square points paint fastest)."""
    pen = QPen(colour, width)
    pen.setCapStyle(Qt.PenCapStyle.SquareCap)
    return pen


class EmbeddingMapView(View):
    """Signals: loaded(int) with the number of points, failed(object), selection_changed(list) with
    the selected memory ids, neighbours_found(list) with (memory id, distance) of the clicked
    memory's neighbours, show_in_table_requested()."""

    name, title, order, read_when_shown = "map", "Map", 60, True
    selection_changed = Signal(list)
    neighbours_found = Signal(list)
    show_in_table_requested = Signal()

    def __init__(self, session: StoreSession, parent: QWidget | None = None, limit: int = DEFAULT_LIMIT) -> None:
        super().__init__(session, parent)
        self.limit = limit
        self.colour_box = QComboBox()
        self.colour_box.setObjectName("map_colour_by")
        self.colour_box.setAccessibleName("Colour points by")
        self.colour_box.addItems(list(COLOUR_FIELDS))
        self.lasso_button = QToolButton()
        self.lasso_button.setObjectName("map_lasso")
        self.lasso_button.setAccessibleName("Lasso selection")
        self.lasso_button.setText("Lasso")
        self.lasso_button.setCheckable(True)
        self.lasso_button.setToolTip("Drag a free-hand lasso instead of a rectangle (or hold Shift while dragging)")
        self.reset_button = QPushButton("Reset view")
        self.reset_button.setObjectName("map_reset_view")
        self.reset_button.setAccessibleName("Reset zoom and pan")
        self.clear_button = QPushButton("Clear selection")
        self.clear_button.setObjectName("map_clear_selection")
        self.clear_button.setAccessibleName("Clear the map selection")
        self.table_button = QPushButton("Show in table")
        self.table_button.setObjectName("map_show_in_table")
        self.table_button.setAccessibleName("Show the selected memories in the table")
        self.table_button.setEnabled(False)
        self.legend = QLabel("")
        self.legend.setObjectName("map_legend")
        self.legend.setAccessibleName("Map legend")
        self.status = QLabel("")
        self.status.setObjectName("map_status")
        self.status.setAccessibleName("Map status")
        self.status.setWordWrap(True)
        self.canvas = MapCanvas()
        self.canvas.setObjectName("map_canvas")
        self.canvas.setAccessibleName("Embedding map")
        self.canvas.setAccessibleDescription(
            "Points are memories placed by their vectors; drag to select, click a point for its neighbours")
        self.message = QLabel("")
        self.message.setObjectName("map_message")
        self.message.setAccessibleName("Map message")
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Colour by"))
        bar.addWidget(self.colour_box)
        bar.addWidget(self.lasso_button)
        bar.addWidget(self.reset_button)
        bar.addWidget(self.clear_button)
        bar.addWidget(self.table_button)
        bar.addWidget(self.legend, 1)
        self.stack = QStackedLayout()
        self.stack.addWidget(self.message)
        self.stack.addWidget(self.canvas)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addLayout(self.stack, 1)
        layout.addWidget(self.status)
        self.colour_box.currentTextChanged.connect(self._on_colour_box_text_changed)
        self.lasso_button.toggled.connect(self._on_lasso_button_toggled)
        self.reset_button.clicked.connect(self.canvas.reset_view)
        self.clear_button.clicked.connect(self.clear_selection)
        self.table_button.clicked.connect(self.show_in_table_requested.emit)
        self.canvas.selected.connect(self._on_canvas_selected)
        self.canvas.clicked.connect(self._on_canvas_clicked)
        self._generation = 0
        self._worker: Worker | None = None
        self._show_message("Open a store to see its embedding map.")

    # -- loading --------------------------------------------------------------------------------

    @property
    def prepared(self) -> PreparedMap | None:
        return self.canvas.prepared

    def forget(self) -> None:
        self._cancel()
        self.canvas.set_map(None)
        self.legend.setText("")
        self.status.setText("")
        self.table_button.setEnabled(False)
        self._show_message("Open a store to see its embedding map.")

    def read_store(self) -> None:
        self._cancel()
        generation = self._generation
        self._show_message("Projecting the store's vectors…")
        self.status.setText("Reading vectors…")
        self._worker = self.session.read(
            prepare_map, self.limit, with_worker=True,
            on_result=lambda prepared: self._on_prepared(generation, prepared),
            on_error=lambda exc: self._on_failed(generation, exc),
            on_progress=lambda done_total: self._on_progress(generation, done_total),
        )

    def _cancel(self) -> None:
        self._generation += 1
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None

    def _on_progress(self, generation: int, done_total: tuple[int, int]) -> None:
        if generation == self._generation:
            done, total = done_total
            self.status.setText(f"Reading vectors… {done:,} of {total:,}")

    def _on_failed(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        self._worker = None
        self._show_message("The embedding map could not be made; see the message.")
        self.status.setText("")
        self.failed.emit(exc)

    def _on_prepared(self, generation: int, prepared: PreparedMap) -> None:
        if generation != self._generation:
            return
        self._worker = None
        data = prepared.data
        self.canvas.set_map(prepared)
        self.table_button.setEnabled(False)
        if not data.count:
            notes = "".join(f"\n{note}" for note in data.notes)
            self._show_message("This store has no vectors to map: none of its parts keeps embeddings "
                               "(a Chroma directory or server does)." + notes)
            self.status.setText("No vectors.")
            self.legend.setText("")
        else:
            self.stack.setCurrentWidget(self.canvas)
            self._show_legend()
            self._show_status()
        self.loaded.emit(data.count)

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def message_shown(self) -> str:
        """The message shown instead of the map ("" while the map shows)."""
        return self.message.text() if self.stack.currentWidget() is self.message else ""

    def _show_status(self) -> None:
        prepared = self.prepared
        if prepared is None:
            return
        data = prepared.data
        x, y = data.explained_variance
        shown = f"{data.count:,} of {data.total:,} vectors (a random sample)" if data.sampled else f"{data.count:,} vectors"
        selected = len(self.canvas.selection)
        parts = [f"{shown}, {data.dimension} dimensions; PCA: x {x:.1%}, y {y:.1%} of the variance"]
        if selected:
            parts.append(f"{selected:,} selected")
        parts += list(data.notes)
        self.status.setText(" · ".join(parts))

    def _show_legend(self) -> None:
        prepared = self.prepared
        if prepared is None:
            return
        groups = prepared.groups[self.colour_box.currentText()]
        colours = point_colours(self.palette(), len(groups))
        self.legend.setText("  ".join(f"<span style='color:{c.name()}'>■</span> {label} ({points.size():,})"
                                      for (label, points), c in zip(groups, colours, strict=True)))

    # -- selection ------------------------------------------------------------------------------

    def selected_ids(self) -> list[str]:
        prepared = self.prepared
        if prepared is None:
            return []
        return [prepared.data.ids[i] for i in self.canvas.selection.tolist()]

    def forget_selection(self) -> None:
        """End the selection without telling anyone (the table's filter was removed there)."""
        self.canvas.clear_selection()
        self.table_button.setEnabled(False)
        self._show_status()

    def clear_selection(self) -> None:
        had = len(self.canvas.selection) > 0
        self.canvas.clear_selection()
        self.table_button.setEnabled(False)
        self._show_status()
        if had:
            self.selection_changed.emit([])

    def _on_canvas_selected(self, _indices: Any) -> None:
        ids = self.selected_ids()
        self.table_button.setEnabled(bool(ids))
        self._show_status()
        self.selection_changed.emit(ids)

    def _on_canvas_clicked(self, index: int) -> None:
        prepared = self.prepared
        if prepared is None or not self.is_open:
            return
        canvas = self.canvas
        canvas.set_selection(np.array([index], dtype=np.int64), focus=index)
        memory_id = prepared.data.ids[index]
        self._on_canvas_selected(canvas.selection)
        generation = self._generation
        self.read(neighbours, memory_id, NEIGHBOURS, priority=ASKED,
                  on_result=lambda found: self._on_neighbours(generation, index, found))

    def _on_neighbours(self, generation: int, index: int, found: list[tuple[str, float]]) -> None:
        prepared = self.prepared
        if generation != self._generation or prepared is None or self.canvas.focus_index != index:
            return
        self.canvas.neighbour_indices = [prepared.index_of[i] for i, _d in found if i in prepared.index_of]
        self.canvas.update()
        shown = len(self.canvas.neighbour_indices)
        self.status.setText(f"{prepared.data.ids[index]}: {len(found)} nearest neighbours"
                            + (f", {shown} of them on the map" if shown < len(found) else ""))
        self.neighbours_found.emit(found)

    # -- controls -------------------------------------------------------------------------------

    def _on_colour_box_text_changed(self, field: str) -> None:
        self.canvas.set_field(field)
        self._show_legend()

    def _on_lasso_button_toggled(self, checked: bool) -> None:
        self.canvas.lasso_mode = checked


VIEW = EmbeddingMapView
