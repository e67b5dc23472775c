"""Salience view: one memory's decay curve, the store's histogram, the memories at risk."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from mnemoscope.storage import Memory, shown
from mnemoscope.storage.salience import MNEMOSCOPE_DECAY, InferredFactDecay, SalienceModel
from mnemoscope.storage.timeutil import parse_time
from mnemoscope.storage.views.salience import salience_at_risk, salience_report, salience_spread_of
from PySide6.QtCore import QItemSelectionModel, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from ..theme import readable
from ..workers import SHOWN
from .base_view import View

MARGIN = 36
SERIES = {"curve": "#2f5d9e", "threshold": "#c0392b", "now": "#3a9e6a", "bar": "#2f5d9e", "at_risk": "#c0392b"}


def chart_colors(palette: QPalette) -> dict[str, QColor]:
    """The charts' colours, each made to stand out from this palette's background (light or dark)."""
    background = palette.base().color()
    return {name: readable(color, background) for name, color in SERIES.items()}


class CurveWidget(QWidget):
    """Effective salience over time: past and projected, threshold, now, crossing date."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(180)
        self.report: dict[str, Any] | None = None

    def set_report(self, report: dict[str, Any] | None) -> None:
        self.report = report
        self.update()

    def paintEvent(self, _event: Any) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), self.palette().base())
        plot = QRectF(MARGIN, 12, self.width() - MARGIN - 12, self.height() - 12 - MARGIN)
        painter.setPen(QPen(self.palette().text().color(), 1))
        painter.drawRect(plot)
        if not self.report:
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter, "Select a memory to see how its salience decays.")
            return
        if not self.report["curve"]:  # the owner's own salience (its formula is its own), or none
            painter.drawText(plot, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.report["formula"])
            return
        points = [(parse_time(p["at"]), p["effective"]) for p in self.report["curve"]]
        start, end = points[0][0], points[-1][0]
        span = (end - start).total_seconds() or 1.0

        def x(t: datetime) -> float:
            return plot.left() + plot.width() * (t - start).total_seconds() / span

        def y(v: float) -> float:
            return plot.bottom() - plot.height() * v

        colors = chart_colors(self.palette())
        threshold = self.report["model"]["cleanup_threshold"]
        painter.setPen(QPen(colors["threshold"], 1, Qt.PenStyle.DashLine))
        painter.drawLine(QPointF(plot.left(), y(threshold)), QPointF(plot.right(), y(threshold)))
        painter.drawText(QPointF(plot.left() + 4, y(threshold) - 4), f"cleanup {threshold}")
        now = parse_time(self.report["at"])
        path = QPainterPath(QPointF(x(points[0][0]), y(points[0][1])))
        for t, v in points[1:]:
            path.lineTo(QPointF(x(t), y(v)))
        painter.setPen(QPen(colors["curve"], 2))
        painter.drawPath(path)
        painter.setPen(QPen(colors["now"], 1))
        painter.drawLine(QPointF(x(now), plot.top()), QPointF(x(now), plot.bottom()))
        painter.drawText(QPointF(x(now) + 4, plot.top() + 14), f"now {self.report['effective']:.2f}")
        crossing = parse_time(self.report.get("crosses_threshold_at"))
        if crossing and start <= crossing <= end:
            painter.setPen(QPen(colors["threshold"], 1))
            painter.drawEllipse(QPointF(x(crossing), y(threshold)), 4, 4)
            painter.drawText(QPointF(x(crossing) + 6, y(threshold) + 16), f"{crossing:%Y-%m-%d}")
        painter.setPen(QPen(self.palette().text().color(), 1))
        painter.drawText(QPointF(plot.left(), plot.bottom() + 16), f"{start:%Y-%m-%d}")
        painter.drawText(QPointF(plot.right() - 70, plot.bottom() + 16), f"{end:%Y-%m-%d}")
        painter.drawText(QPointF(4, y(1.0) + 10), "1.0")
        painter.drawText(QPointF(4, y(0.0)), "0")


class HistogramWidget(QWidget):
    """How many active memories sit in each band of effective salience."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumHeight(150)
        self.bins: list[dict[str, Any]] = []

    def set_bins(self, bins: list[dict[str, Any]]) -> None:
        self.bins = bins
        self.update()

    def paintEvent(self, _event: Any) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().base())
        plot = QRectF(MARGIN, 22, self.width() - MARGIN - 12, self.height() - 22 - MARGIN)
        if not self.bins:
            return
        colors = chart_colors(self.palette())
        peak = max(b["count"] for b in self.bins) or 1
        width = plot.width() / len(self.bins)
        for i, b in enumerate(self.bins):
            height = plot.height() * b["count"] / peak
            bar = QRectF(plot.left() + i * width + 2, plot.bottom() - height, width - 4, height)
            color = colors["at_risk"] if b["to"] <= 0.1 + 1e-9 else colors["bar"]
            painter.fillRect(bar, color)
            painter.setPen(self.palette().text().color())
            painter.drawText(QRectF(bar.left(), bar.top() - 16, bar.width(), 14), Qt.AlignmentFlag.AlignCenter, str(b["count"]))
            painter.drawText(QRectF(bar.left(), plot.bottom() + 2, bar.width(), 14), Qt.AlignmentFlag.AlignCenter, f"{b['from']:.1f}")


class SalienceView(View):
    """Signals: at_risk_shown(int) with the number of memories at risk listed (the tab's first
    rows, read at once from a few index candidates), loaded(int) with it again once the
    histogram (a pass over every active memory) is drawn too, failed(object),
    reinforce_requested(str) with a memory id."""

    reinforce_requested = Signal(str)
    at_risk_shown = Signal(int)
    name, title, order, follows_rows = "salience", "Salience", 30, True

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.curve = CurveWidget()
        self.curve.setObjectName("salience_curve")
        self.curve.setAccessibleName("Salience decay curve")
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.formulas = QLabel("")
        self.formulas.setObjectName("decay_formulas")
        self.formulas.setWordWrap(True)
        self.formulas.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.histogram = HistogramWidget()
        self.histogram.setObjectName("salience_histogram")
        self.histogram.setAccessibleName("Salience histogram")
        self.at_risk = QTableWidget(0, 4)
        self.at_risk.setObjectName("at_risk_table")
        self.at_risk.setAccessibleName("Memories most at risk")
        self.at_risk.setHorizontalHeaderLabels(["Effective", "Falls below", "Memory", "Content"])
        self.at_risk.verticalHeader().setVisible(False)
        self.at_risk.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.at_risk.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.at_risk.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.reinforce_button = QPushButton("Reinforce selected")
        self.reinforce_button.setObjectName("reinforce_button")
        self.reinforce_button.setAccessibleName("Reinforce selected")
        self.reinforce_button.clicked.connect(self._on_reinforce_button_clicked)

        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.addWidget(self.curve, 1)
        top_layout.addWidget(self.caption)
        bottom = QWidget()
        bottom_layout = QHBoxLayout(bottom)
        left = QVBoxLayout()
        self.spread_label = QLabel("Effective salience of active memories")
        self.spread_label.setObjectName("salience_spread_label")
        self.without_salience = 0
        left.addWidget(self.spread_label)
        left.addWidget(self.histogram, 1)
        left.addWidget(self.formulas)
        right = QVBoxLayout()
        right.addWidget(QLabel("Most at risk"))
        right.addWidget(self.at_risk, 1)
        right.addWidget(self.reinforce_button)
        bottom_layout.addLayout(left, 2)
        bottom_layout.addLayout(right, 3)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self._generation = 0
        self._waiting: set[str] = set()
        self._formulas: dict[str, str] = {}

    def read_store(self) -> None:
        """The memories most at risk first, on a thread of their own at once (a bounded read);
        the histogram once they are shown (a pass over every active memory: it would compete
        with them for the cores), with the other aggregates."""
        self._generation += 1
        generation = self._generation
        self._waiting = {"at_risk", "spread"}
        self._formulas = {}
        self.read(salience_at_risk, on_result=lambda data: self._on_at_risk(generation, data), priority=SHOWN,
                  on_error=lambda _exc: self._read_spread(generation))

    def _read_spread(self, generation: int) -> None:
        if generation == self._generation:
            self.read(salience_spread_of, on_result=lambda data: self._on_spread(generation, data))

    def forget(self) -> None:
        self._generation += 1
        self._formulas = {}
        self.formulas.setText("")
        self.curve.set_report(None)
        self.histogram.set_bins([])
        self.at_risk.setRowCount(0)

    def show_memory(self, model: SalienceModel, memory: Memory, fact_decay: InferredFactDecay | None = None) -> None:
        report = salience_report(model, memory, fact_decay=fact_decay)
        memory_id = memory.id
        self.curve.set_report(report)
        crossing = (report["crosses_threshold_at"] or "never")[:10]
        if report["decay"] != MNEMOSCOPE_DECAY:  # as its owner keeps it, or none
            said = "no salience" if report["effective"] is None else f"salience {report['effective']:.3f} now"
            self.caption.setText(f"{memory_id}: {said}; {report['formula']}.")
            return
        text = (
            f"{memory_id}: effective {report['effective']:.3f} now (stored {report['stored_salience']:.2f}, "
            f"{shown(report['access_count'])} accesses); falls below {report['model']['cleanup_threshold']} on {crossing}; "
            f"decay {report['model']['decay_rate']}/day, half-life {report['model']['half_life_days']} days."
        )
        if "confidence" in report:
            c = report["confidence"]
            text += (f" Inferred fact: confidence {shown(c['effective'], '.3f')} now (stored {shown(c['stored'], '.2f')}), "
                     f"{c['formula']}.")
        self.caption.setText(text)

    def _on_spread(self, generation: int, data: dict[str, Any]) -> None:
        if generation != self._generation:
            return
        self.histogram.set_bins(data["histogram"])
        self.without_salience = data["without_salience"]
        self.spread_label.setText("Effective salience of active memories" + (
            f" ({self.without_salience} more keep none: their stores do not score them)" if self.without_salience else ""))
        self._formulas = {**data["formulas"], **self._formulas}
        self._show_formulas()
        self._arrived(generation, "spread")

    def _show_formulas(self) -> None:
        self.formulas.setText("\n".join(f"{name.capitalize()}: {formula}" for name, formula in self._formulas.items()))

    def _on_at_risk(self, generation: int, data: dict[str, Any]) -> None:
        if generation != self._generation:
            return
        self._formulas.update(data["formulas"])
        self._show_formulas()
        rows = data["at_risk"]
        self.at_risk.setRowCount(len(rows))
        for r, item in enumerate(rows):
            owners = item.get("decay", MNEMOSCOPE_DECAY) != MNEMOSCOPE_DECAY
            cells = [
                f"{item['effective']:.3f}" + (" (owner's)" if owners else ""),
                "—" if owners else (item["crosses_threshold_at"] or "never")[:10],
                item["id"],
                " ".join(item["content"].split()),
            ]
            for c, text in enumerate(cells):
                self.at_risk.setItem(r, c, QTableWidgetItem(text))
        self.at_risk.resizeColumnsToContents()
        self.at_risk_shown.emit(len(rows))
        self._arrived(generation, "at_risk")
        self._read_spread(generation)

    def _arrived(self, generation: int, part: str) -> None:
        self._waiting.discard(part)
        if not self._waiting and generation == self._generation:
            self.loaded.emit(self.at_risk.rowCount())

    def select_at_risk(self, row: int) -> None:
        index = self.at_risk.model().index(row, 0)
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.at_risk.selectionModel().select(index, flags)

    def _on_reinforce_button_clicked(self) -> None:
        rows = sorted({i.row() for i in self.at_risk.selectionModel().selectedRows()})
        for row in rows:
            item = self.at_risk.item(row, 2)
            if item is not None:
                self.reinforce_requested.emit(item.text())


VIEW = SalienceView
