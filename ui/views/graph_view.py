"""Entity graph view: entities and relations, an ego graph around a chosen entity."""

from __future__ import annotations

import html
from typing import Any

import networkx as nx
from mnemoscope.storage import MemoryStore, NotFoundError
from mnemoscope.storage.views.graph import entity_details, graph_choices, graph_view
from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPainter, QPen, QResizeEvent, QWheelEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsEllipseItem,
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from ..theme import readable
from ..widgets.detail_panel import SafeTextBrowser
from .base_view import View

MAX_NODES = 150
SCALE = 420.0
ALL = "(all)"
EntityRole = Qt.ItemDataRole.UserRole + 3
LABEL_WIDTH = 140  # pixels; a longer name is elided (whole in the tooltip)


def node_radius(data: dict[str, Any]) -> float:
    return 6 + 16 * float(data.get("salience", 0.5))


def _label_offsets(radius: float, width: float, height: float) -> list[tuple[float, float]]:
    """Where a name may go around a circle of this radius: right, left, below, above, diagonals."""
    gap = 2.0
    return [
        (radius + gap, -height / 2),
        (-radius - gap - width, -height / 2),
        (-width / 2, radius + gap),
        (-width / 2, -radius - gap - height),
        (radius * 0.7 + gap, radius * 0.7),
        (radius * 0.7 + gap, -radius * 0.7 - height),
        (-radius * 0.7 - gap - width, radius * 0.7),
        (-radius * 0.7 - gap - width, -radius * 0.7 - height),
    ]


def layout_graph(store: MemoryStore, center: str | None, depth: int, types: list[str], channels: list[str]) -> dict[str, Any]:
    """Select and lay out the graph (runs on a worker thread)."""
    try:
        graph, info = graph_view(
            store, center=center, depth=depth, relation_types=types, channels=channels, max_nodes=MAX_NODES
        )
    except NotFoundError:  # the center is filtered out: show what the filters leave
        graph, info = graph_view(store, relation_types=types, channels=channels, max_nodes=MAX_NODES)
        info["center_filtered_out"] = center
    positions = nx.spring_layout(nx.Graph(graph), seed=7) if graph.number_of_nodes() else {}
    return {"graph": graph, "info": info, "positions": {n: (float(x), float(y)) for n, (x, y) in positions.items()}}


def relation_label(relation_type: str) -> str:
    """A relation type as words: KNOWS -> knows, PART_OF -> part of."""
    return relation_type.replace("_", " ").lower()


class ZoomingView(QGraphicsView):
    """Signals: zoomed() after the wheel or a resize changed what a pixel of the scene is."""

    zoomed = Signal()

    def wheelEvent(self, event: QWheelEvent) -> None:
        factor = 1.15 if event.angleDelta().y() > 0 else 1 / 1.15
        self.scale(factor, factor)
        self.zoomed.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.zoomed.emit()


class GraphView(View):
    """Signals: loaded(int) with the number of entities drawn, failed(object), entity_selected(str)."""

    entity_selected = Signal(str)
    name, title, order = "graph", "Graph", 40

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.center_box = QComboBox()
        self.center_box.setObjectName("graph_center")
        self.center_box.setMinimumWidth(180)
        self.center_box.setAccessibleName("Center entity")
        self.depth_box = QSpinBox()
        self.depth_box.setObjectName("graph_depth")
        self.depth_box.setRange(1, 3)
        self.depth_box.setAccessibleName("Depth")
        self.type_box = QComboBox()
        self.type_box.setObjectName("graph_type")
        self.type_box.setAccessibleName("Relation type")
        self.channel_box = QComboBox()
        self.channel_box.setObjectName("graph_channel")
        self.channel_box.setAccessibleName("Channel")
        self.note = QLabel("")
        self.note.setObjectName("graph_note")
        self.scene = QGraphicsScene(self)
        self.scene.selectionChanged.connect(self._on_scene_selection_changed)
        self.view = ZoomingView(self.scene)
        self.view.setObjectName("graph_canvas")
        self.view.setAccessibleName("Entity graph")
        self.view.setAccessibleDescription("Entities as circles, relations as lines; select an entity to see its facts")
        self.view.zoomed.connect(self.place_labels)
        self.view.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.view.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.facts = SafeTextBrowser()
        self.facts.setObjectName("graph_facts")
        self.facts.setAccessibleName("Entity facts")
        self.facts.setHtml("<p style='color:gray'>Select an entity to see what is known about it.</p>")
        bar = QHBoxLayout()
        for label, widget in (("Center", self.center_box), ("Depth", self.depth_box),
                              ("Relation", self.type_box), ("Channel", self.channel_box)):
            bar.addWidget(QLabel(label))
            bar.addWidget(widget)
        bar.addWidget(self.note, 1)
        splitter = QSplitter()
        splitter.addWidget(self.view)
        splitter.addWidget(self.facts)
        splitter.setSizes([700, 260])
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(splitter, 1)
        self._generation = 0
        self._loaded_once = False
        self._wanted_channel: str | None = None
        self._facts_generation = 0
        self.nodes: dict[str, QGraphicsEllipseItem] = {}
        self.labels: dict[str, QGraphicsSimpleTextItem] = {}
        self._shown: dict[str, Any] | None = None  # the last layout, drawn again on a new palette
        for box in (self.center_box, self.type_box, self.channel_box):
            box.currentIndexChanged.connect(lambda _i: self.lay_out())
        self.depth_box.valueChanged.connect(lambda _v: self.lay_out())

    def read_store(self) -> None:
        """Read the store's entities and relation types on a worker, then lay out the graph."""
        self._generation += 1
        generation = self._generation
        self.note.setText("reading entities…")
        self.read(graph_choices, on_result=lambda choices: self._on_choices(generation, choices),
                  on_error=self._on_layout_failed)

    def _on_choices(self, generation: int, choices: dict[str, Any]) -> None:
        if generation != self._generation:
            return
        widgets = (self.center_box, self.type_box, self.channel_box)
        before = (self.center_box.currentData(), self.type_box.currentText(), self.channel_box.currentText())
        for widget in widgets:
            widget.blockSignals(True)
            widget.clear()
        self.center_box.addItem("(whole graph)", None)
        entities = choices["entities"]
        if entities or choices["types"]:
            for entity in entities:
                self.center_box.addItem(f"{entity.name} ({entity.type})", entity.id)
            self.type_box.addItems([ALL, *choices["types"]])
            self.channel_box.addItems([ALL, *choices["channels"]])
            if entities:
                self.center_box.setCurrentIndex(1)
                self.depth_box.blockSignals(True)  # laid out once, below
                self.depth_box.setValue(2)
                self.depth_box.blockSignals(False)
        if self._loaded_once:  # a reload after a change keeps what the person picked
            center, kind, channel = before
            self.center_box.setCurrentIndex(max(self.center_box.findData(center), 0))
            self.type_box.setCurrentIndex(max(self.type_box.findText(kind), 0))
            self.channel_box.setCurrentIndex(max(self.channel_box.findText(channel), 0))
        if self._wanted_channel is not None:  # asked for before the channels were read
            self.channel_box.setCurrentIndex(max(self.channel_box.findText(self._wanted_channel), 0))
            self._wanted_channel = None
        self._loaded_once = True
        for widget in widgets:
            widget.blockSignals(False)
        self.lay_out()

    def set_channel(self, channel: str | None) -> None:
        """Show one channel's entities (None: all channels); a channel not read yet is picked
        once the channels arrive."""
        index = self.channel_box.findText(channel) if channel else 0
        self._wanted_channel = channel if index < 0 else None
        if index >= 0:
            self.channel_box.setCurrentIndex(index)

    def set_channels(self, channels: tuple[str, ...]) -> None:
        self.set_channel(channels[0] if len(channels) == 1 else None)

    def forget(self) -> None:
        self._loaded_once = False
        self._generation += 1
        self._facts_generation += 1
        self.scene.clear()
        self.nodes = {}
        self.labels = {}
        self._shown = None

    def lay_out(self) -> None:
        """Lay out the graph for the center, depth, relation type and channel chosen (on a worker)."""
        if not self.is_open:
            return
        self._generation += 1
        generation = self._generation
        center = self.center_box.currentData()
        types = [] if self.type_box.currentText() in ("", ALL) else [self.type_box.currentText()]
        channels = [] if self.channel_box.currentText() in ("", ALL) else [self.channel_box.currentText()]
        self.note.setText("laying out…")
        self.read(layout_graph, center, self.depth_box.value(), types, channels,
                  on_result=lambda result: self._on_layout(generation, result), on_error=self._on_layout_failed)

    def _on_layout_failed(self, _exc: BaseException) -> None:
        self.note.setText("")

    def _on_layout(self, generation: int, result: dict[str, Any]) -> None:
        if generation != self._generation:
            return
        self._shown = result
        self._draw(result)
        graph: nx.MultiDiGraph = result["graph"]
        hidden = result["info"]["hidden_nodes"]
        note = f"{graph.number_of_nodes()} entities, {graph.number_of_edges()} relations"
        if result["info"].get("center_filtered_out"):
            note += " — the chosen center is not in this channel or relation type"
        self.note.setText(note + (f" — {hidden} more not shown (pick a center or a filter)" if hidden else ""))
        self.loaded.emit(graph.number_of_nodes())

    def _draw(self, result: dict[str, Any]) -> None:
        graph: nx.MultiDiGraph = result["graph"]
        positions = result["positions"]
        selected = {i.data(0) for i in self.scene.selectedItems()}
        self.scene.clear()
        self.nodes = {}
        self.labels = {}
        palette = self.view.palette()
        background = palette.base().color()
        text = palette.text().color()
        edge_color = readable(QColor("#9aa5b1"), background, 2.0)
        for u, v, data in graph.edges(data=True):
            (x1, y1), (x2, y2) = positions[u], positions[v]
            line = QGraphicsLineItem(x1 * SCALE, y1 * SCALE, x2 * SCALE, y2 * SCALE)
            line.setPen(QPen(edge_color, 1.2))
            line.setToolTip(f"{graph.nodes[u]['name']} —{relation_label(data['type'])}→ {graph.nodes[v]['name']}")
            line.setZValue(-1)
            self.scene.addItem(line)
        center = result["info"]["center"]
        metrics = QFontMetrics(self.view.font())
        for node, data in graph.nodes(data=True):
            x, y = positions[node]
            radius = node_radius(data)
            item = QGraphicsEllipseItem(-radius, -radius, 2 * radius, 2 * radius)
            item.setPos(QPointF(x * SCALE, y * SCALE))
            color = readable("#d9822b" if node == center else "#2f5d9e", background)
            item.setBrush(QBrush(color))
            item.setPen(QPen(color.darker(130), 1))
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)  # sizes in pixels at any zoom
            item.setData(0, node)
            item.setToolTip(f"{data['name']} ({data['type']}, {data['channel']}), salience {data['salience']:.2f}")
            label = QGraphicsSimpleTextItem(metrics.elidedText(data["name"], Qt.TextElideMode.ElideRight, LABEL_WIDTH), item)
            label.setBrush(text)
            label.setToolTip(data["name"])
            self.scene.addItem(item)
            self.nodes[node] = item
            self.labels[node] = label
            item.setSelected(node in selected)
        self.view.setSceneRect(self.scene.itemsBoundingRect().adjusted(-60, -40, 140, 40))
        self.view.fitInView(self.view.sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)
        self.place_labels()

    def place_labels(self) -> None:
        """Put each name beside its circle, inside the canvas, where it overlaps no circle and no
        name placed before it (the center, then the most salient, go first); a name with no free
        place is hidden and shown in the circle's tooltip. Redone on every zoom: circles and
        names keep their pixel size."""
        if self._shown is None or not self.labels:
            return
        graph = self._shown["graph"]
        center = self._shown["info"]["center"]
        order = sorted(self.labels, key=lambda n: (n != center, -float(graph.nodes[n].get("salience", 0)), n))
        circles = [self._circle_rect(n) for n in self.nodes]
        placed: list[QRectF] = []
        canvas = QRectF(self.view.viewport().rect())
        for node in order:
            label, radius = self.labels[node], node_radius(graph.nodes[node])
            at = self.view.mapFromScene(self.nodes[node].pos())
            size = label.boundingRect().size()
            label.setVisible(False)
            for dx, dy in _label_offsets(radius, size.width(), size.height()):
                rect = QRectF(at.x() + dx, at.y() + dy, size.width(), size.height())
                free = not any(rect.intersects(r) for r in placed) and not any(rect.intersects(c) for c in circles)
                if free and canvas.contains(rect):
                    label.setPos(dx, dy)
                    label.setVisible(True)
                    placed.append(rect)
                    break

    def label_rect(self, node: str) -> QRectF:
        """Where a node's name is drawn, in the canvas's pixels."""
        label = self.labels[node]
        at = self.view.mapFromScene(self.nodes[node].pos())
        return QRectF(at.x() + label.pos().x(), at.y() + label.pos().y(),
                      label.boundingRect().width(), label.boundingRect().height())

    def _circle_rect(self, node: str) -> QRectF:
        at = self.view.mapFromScene(self.nodes[node].pos())
        r = self.nodes[node].rect().width() / 2
        return QRectF(at.x() - r, at.y() - r, 2 * r, 2 * r)

    def changeEvent(self, event: QEvent) -> None:
        """A new palette (a theme chosen in Preferences): draw the graph again in colours readable on it."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._shown is not None:
            self._draw(self._shown)

    def select_entity(self, entity_id: str) -> None:
        self.scene.clearSelection()
        self.nodes[entity_id].setSelected(True)

    def _on_scene_selection_changed(self) -> None:
        selected = [i for i in self.scene.selectedItems() if isinstance(i, QGraphicsEllipseItem)]
        if len(selected) != 1 or not self.is_open:
            return
        entity_id = selected[0].data(0)
        self._facts_generation += 1
        generation = self._facts_generation
        self.read(entity_facts, entity_id, on_result=lambda html_text: self._on_facts(generation, entity_id, html_text))

    def _on_facts(self, generation: int, entity_id: str, html_text: str) -> None:
        if generation != self._facts_generation:
            return
        self.facts.setHtml(html_text)
        self.entity_selected.emit(entity_id)


def entity_facts(store: MemoryStore, entity_id: str) -> str:
    """One entity, the facts about it and its relations, as HTML (on a worker)."""
    entity, facts, relations, names = entity_details(store, entity_id)
    items = "".join(f"<li>{html.escape(m.content)} <span style='color:gray'>({m.channel})</span></li>" for m in facts)
    links = "".join(
        f"<li title='{html.escape(r.source_id)} → {html.escape(r.target_id)}'>"
        f"{html.escape(names.get(r.source_id, r.source_id))} —{html.escape(relation_label(r.type))}→ "
        f"{html.escape(names.get(r.target_id, r.target_id))}</li>"
        for r in relations
    )
    return (
        f"<h3>{html.escape(entity.name)}</h3><p>{html.escape(entity.type)} · {html.escape(entity.channel)} · "
        f"salience {entity.salience:.2f}</p><p>{html.escape(entity.description)}</p>"
        f"<p><b>Facts about it</b></p><ul>{items or '<li>none</li>'}</ul>"
        f"<p><b>Relations</b></p><ul>{links or '<li>none</li>'}</ul>"
    )


VIEW = GraphView
