"""The timeline's weeks are ISO weeks and keep the empty ones; the graph speaks in entity names
and its labels do not overlap."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from itertools import combinations
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.views.timeline import bin_bounds
from mnemoscope.ui.views.graph_view import GraphView, entity_facts
from mnemoscope.ui.views.timeline_view import TimelineView
from PySide6.QtWidgets import QGraphicsLineItem


@pytest.fixture
def store(demo_path: Path):
    with open_store(demo_path) as opened:
        yield opened


def _load_timeline(qtbot, store) -> TimelineView:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(1000, 400)
    view.show()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.load(store)
    return view


def test_week_labels_are_iso_weeks_and_empty_weeks_stay_on_the_axis(qtbot, demo_path: Path) -> None:
    with open_store(demo_path) as writable:
        # 2021-01-01 is a Friday: in ISO week 53 of 2020 (strftime's %W calls it 2021-W00).
        writable.add_session("s-new-year", channel="_global", title="New year",
                             started_at=datetime(2021, 1, 1, 10, tzinfo=timezone.utc))
        writable.add_turns("s-new-year", [("user", "happy new year", datetime(2021, 1, 1, 10, tzinfo=timezone.utc)),
                                          ("user", "back at work", datetime(2021, 1, 20, 10, tzinfo=timezone.utc))])
    with open_store(demo_path) as store:
        view = _load_timeline(qtbot, store)
        bins = view.chart.data["bins"]
        labels = [b["bin"] for b in bins]
        assert all(re.fullmatch(r"\d{4}-W\d{2}", label) for label in labels)
        by_label = {b["bin"]: b for b in bins}
        assert by_label["2020-W53"]["turns"] == 1 and by_label["2021-W03"]["turns"] == 1
        assert by_label["2021-W01"] == {**by_label["2021-W01"], "memories": 0, "turns": 0}  # kept, empty
        for before, after in zip(bins, bins[1:], strict=False):  # one bin per week, none missing
            assert before["end"] == after["start"]
        busiest = max(bins, key=lambda b: b["memories"])
        start, end = bin_bounds(busiest["bin"], "week")
        assert start.weekday() == 0 and start.isocalendar()[1] == int(busiest["bin"][-2:])
        assert store.count(MemoryQuery(statuses=(), since=start, until=end)) == busiest["memories"]
        assert len(labels) == len(set(labels))


def test_relations_are_named_by_their_entities(qtbot, store) -> None:
    facts = entity_facts(store, "e-dana")
    assert "Dana Okafor —knows→ Priya" in facts
    assert "e-priya" not in facts.replace("title='e-dana → e-priya'", "")
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.load(store)
    tips = {item.toolTip() for item in view.scene.items() if isinstance(item, QGraphicsLineItem)}
    assert "Dana Okafor —knows→ Priya" in tips
    assert not any("e-" in tip for tip in tips)


@pytest.mark.parametrize("size", [(1000, 700), (520, 360)])
def test_graph_labels_do_not_overlap(qtbot, store, size: tuple[int, int]) -> None:
    view = GraphView()
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.load(store)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.center_box.setCurrentIndex(0)  # the whole graph: the most crowded
    qtbot.wait(50)
    shown = {n: view.label_rect(n) for n, label in view.labels.items() if label.isVisible()}
    assert len(shown) >= len(view.labels) // 2  # crowding hides some names, not most
    for (a, ra), (b, rb) in combinations(shown.items(), 2):
        assert not ra.intersects(rb), f"the names of {a} and {b} overlap"
    for node, label in view.labels.items():
        assert label.toolTip() == view.nodes[node].toolTip().split(" (")[0]  # the full name, elided or hidden
