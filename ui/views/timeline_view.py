"""Timeline view: memories and turns of every kind on one time axis, in bins."""

from __future__ import annotations

import math
from typing import Any

from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.views.timeline import bin_bounds, timeline
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPen, QWheelEvent
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ..store_session import StoreSession
from ..theme import series_colors
from .base_view import View

BINS = ("day", "week", "month")
GROUPS = ("kind", "layer", "channel")
BAR = {"day": 14, "week": 36, "month": 80}
AXIS = 40


class TimelineChart(QWidget):
    """Stacked bars per bin; a dot line for turns. Signals: bin_clicked(str)."""

    bin_clicked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.data: dict[str, Any] = {"bins": [], "bin": "day"}
        self.colors: dict[str, QColor] = {}
        self.setMinimumHeight(260)
        self.setMouseTracking(True)

    def set_data(self, data: dict[str, Any]) -> None:
        self.data = data
        self._pick_colors()
        self.setMinimumWidth(int(AXIS + len(data["bins"]) * BAR.get(data.get("bin", "day"), 14) + 20))
        self.update()

    def _pick_colors(self) -> None:
        """Series colours that stand out from this palette's background (light or dark)."""
        groups = sorted({g for b in self.data["bins"] for g in b["counts"]})
        self.colors = dict(zip(groups, series_colors(len(groups), self.palette().base().color()), strict=True))

    def turns_color(self) -> QColor:
        """The turns line: the palette's text colour, the most visible on its background."""
        return self.palette().text().color()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._pick_colors()
        super().changeEvent(event)

    def _bar(self) -> float:
        """Bar width: at least the bin's minimum, widened to fill the view, at most 80 px."""
        n = len(self.data["bins"]) or 1
        fill = (self.width() - AXIS - 20) / n
        return max(float(BAR.get(self.data.get("bin", "day"), 14)), min(fill, 80.0))

    def bin_at(self, x: float) -> str | None:
        i = int((x - AXIS) // self._bar())
        bins = self.data["bins"]
        return bins[i]["bin"] if 0 <= i < len(bins) and x >= AXIS else None

    def bar_center(self, label: str) -> QPointF:
        i = [b["bin"] for b in self.data["bins"]].index(label)
        return QPointF(AXIS + i * self._bar() + self._bar() / 2, self.height() / 2)

    def paintEvent(self, _event: Any) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        bins = self.data["bins"]
        if not bins:
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "No dated memories.")
            return
        bottom = self.height() - 28
        height = bottom - 16
        peak = max(max(b["memories"], b["turns"]) for b in bins) or 1
        bar = self._bar()
        text = self.palette().text().color()
        step = max(1, math.ceil(78 / bar))
        for i, b in enumerate(bins):
            left = AXIS + i * bar
            y = float(bottom)
            for group, n in b["counts"].items():
                h = height * n / peak
                painter.fillRect(QRectF(left + 1, y - h, bar - 2, h), self.colors[group])
                y -= h
            if i % step == 0:
                painter.setPen(text)
                painter.drawText(QPointF(left, bottom + 16), b["bin"])
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self.turns_color(), 2))
        turns = [QPointF(AXIS + i * bar + bar / 2, bottom - height * b["turns"] / peak) for i, b in enumerate(bins)]
        for a, c in zip(turns, turns[1:], strict=False):
            painter.drawLine(a, c)
        painter.setBrush(self.turns_color())
        for point in turns:
            painter.drawEllipse(point, 2.5, 2.5)
        painter.setPen(text)
        painter.drawLine(QPointF(AXIS, bottom), QPointF(self.width(), bottom))
        painter.drawText(QPointF(4, 24), str(peak))
        painter.drawText(QPointF(4, bottom), "0")

    def mousePressEvent(self, event: QMouseEvent) -> None:
        label = self.bin_at(event.position().x())
        if label is not None and event.button() == Qt.MouseButton.LeftButton:
            self.bin_clicked.emit(label)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        label = self.bin_at(event.position().x())
        b = next((b for b in self.data["bins"] if b["bin"] == label), None)
        if b is None:
            self.setToolTip("")
            return
        parts = ", ".join(f"{g} {n}" for g, n in b["counts"].items())
        self.setToolTip(f"{label}: {b['memories']} memories ({parts}), {b['turns']} turns — click to list them")


class TimelineView(View):
    """Signals: loaded(int) with the number of bins, failed(object), range_chosen(object, object)
    with a bin's [start, end)."""

    range_chosen = Signal(object, object)
    name, title, order, follows_rows = "timeline", "Timeline", 10, True

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.bin_box = QComboBox()
        self.bin_box.setObjectName("timeline_bin")
        self.bin_box.addItems(BINS)
        self.bin_box.setCurrentText("week")
        self.bin_box.setAccessibleName("Bin size")
        self.bin_box.setToolTip("Day, ISO week (Monday first, e.g. 2026-W11) or month; Ctrl+wheel zooms")
        self.group_box = QComboBox()
        self.group_box.setObjectName("timeline_group")
        self.group_box.addItems(GROUPS)
        self.group_box.setAccessibleName("Split by")
        self.legend = QLabel("")
        self.legend.setObjectName("timeline_legend")
        self.chart = TimelineChart()
        self.chart.setObjectName("timeline_chart")
        self.chart.setAccessibleName("Timeline chart")
        self.chart.setAccessibleDescription("Memories per bin as stacked bars, turns as a line; click a bar to list them")
        self.chart.bin_clicked.connect(self._on_chart_bin_clicked)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.chart)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Bin"))
        bar.addWidget(self.bin_box)
        bar.addWidget(QLabel("Split by"))
        bar.addWidget(self.group_box)
        bar.addWidget(self.legend, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(scroll, 1)
        self._channels: tuple[str, ...] = ()
        self._generation = 0
        self.bin_box.currentTextChanged.connect(lambda _t: self.read_store())
        self.group_box.currentTextChanged.connect(lambda _t: self.read_store())

    def set_channels(self, channels: tuple[str, ...]) -> None:
        """Count only these channels (none: all)."""
        if channels != self._channels:
            self._channels = channels
            self.read_store()

    def forget(self) -> None:
        self._generation += 1
        self.chart.set_data({"bins": [], "bin": self.bin_box.currentText()})

    def read_store(self) -> None:
        if not self.is_open:
            return
        self._generation += 1
        generation = self._generation
        self.read(
            timeline,
            bin=self.bin_box.currentText(),
            group_by=self.group_box.currentText(),
            query=MemoryQuery(statuses=(), channels=self._channels),
            on_result=lambda data: self._on_loaded(generation, data),
        )

    def _on_loaded(self, generation: int, data: dict[str, Any]) -> None:
        if generation != self._generation:
            return
        self.chart.set_data(data)
        self._show_legend()
        self.loaded.emit(len(data["bins"]))

    def _show_legend(self) -> None:
        self.legend.setText(
            "  ".join(f"<span style='color:{c.name()}'>■</span> {g}" for g, c in self.chart.colors.items())
            + f"  <b style='color:{self.chart.turns_color().name()}'>—•</b> turns"
        )

    def changeEvent(self, event: QEvent) -> None:
        """A new palette (a theme chosen in Preferences) recolours the series to stay readable on it."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self.chart._pick_colors()
            self.chart.update()
            self._show_legend()

    def wheelEvent(self, event: QWheelEvent) -> None:
        """Ctrl+wheel zooms the time axis between day, week and month bins."""
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            step = -1 if event.angleDelta().y() > 0 else 1
            index = min(max(self.bin_box.currentIndex() + step, 0), len(BINS) - 1)
            self.bin_box.setCurrentIndex(index)
            event.accept()
            return
        super().wheelEvent(event)

    def _on_chart_bin_clicked(self, label: str) -> None:
        start, end = bin_bounds(label, self.bin_box.currentText())
        self.range_chosen.emit(start, end)


VIEW = TimelineView
