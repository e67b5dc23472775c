"""The graph speaks in entity names and its labels do not overlap."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest
from helpers.sessions import open_session
from mnemoscope.ui.views.graph_view import GraphView, entity_facts
from PySide6.QtWidgets import QGraphicsLineItem


@pytest.fixture
def session(qtbot, demo_path: Path):
    with open_session(qtbot, demo_path) as opened:
        yield opened


def test_relations_are_named_by_their_entities(qtbot, session) -> None:
    facts = entity_facts(session.store, "e-dana")
    assert "Dana Okafor —knows→ Priya" in facts
    assert "e-priya" not in facts.replace("title='e-dana → e-priya'", "")
    view = GraphView(session)
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    with qtbot.waitSignal(view.loaded):
        view.load()
    tips = {item.toolTip() for item in view.scene.items() if isinstance(item, QGraphicsLineItem)}
    assert "Dana Okafor —knows→ Priya" in tips
    assert not any("e-" in tip for tip in tips)


@pytest.mark.parametrize("size", [(1000, 700), (520, 360)])
def test_graph_labels_do_not_overlap(qtbot, session, size: tuple[int, int]) -> None:
    view = GraphView(session)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    with qtbot.waitSignal(view.loaded):
        view.load()
    with qtbot.waitSignal(view.loaded):
        view.center_box.setCurrentIndex(0)  # the whole graph: the most crowded
    qtbot.wait(50)
    shown = {n: view.label_rect(n) for n, label in view.labels.items() if label.isVisible()}
    assert len(shown) >= len(view.labels) // 2  # crowding hides some names, not most
    for (a, ra), (b, rb) in combinations(shown.items(), 2):
        assert not ra.intersects(rb), f"the names of {a} and {b} overlap"
    for node, label in view.labels.items():
        assert label.toolTip() == view.nodes[node].toolTip().split(" (")[0]  # the full name, elided or hidden
