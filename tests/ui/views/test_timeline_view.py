"""The timeline's weeks are ISO weeks and keep the empty ones; it counts the channels the table
filters on, and a bin's click names its dates."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.views.timeline import bin_bounds
from mnemoscope.ui.store_session import StoreSession
from mnemoscope.ui.views.timeline_view import TimelineView
from PySide6.QtCore import Qt


def _load_timeline(qtbot, session: StoreSession) -> TimelineView:
    view = TimelineView(session)
    qtbot.addWidget(view)
    view.resize(1000, 400)
    view.show()
    with qtbot.waitSignal(view.loaded):
        view.load()
    return view


def test_week_labels_are_iso_weeks_and_empty_weeks_stay_on_the_axis(qtbot, demo_path: Path) -> None:
    with open_store(demo_path) as writable:
        # 2021-01-01 is a Friday: in ISO week 53 of 2020 (strftime's %W calls it 2021-W00).
        writable.add_session("s-new-year", channel="_global", title="New year",
                             started_at=datetime(2021, 1, 1, 10, tzinfo=timezone.utc))
        writable.add_turns("s-new-year", [("user", "happy new year", datetime(2021, 1, 1, 10, tzinfo=timezone.utc)),
                                          ("user", "back at work", datetime(2021, 1, 20, 10, tzinfo=timezone.utc))])
    with open_session(qtbot, demo_path) as session:
        store = session.store
        view = _load_timeline(qtbot, session)
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


def test_a_click_on_a_bar_chooses_its_dates_and_channels_narrow_the_counts(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        view = _load_timeline(qtbot, session)
        bins = view.chart.data["bins"]
        busiest = max(bins, key=lambda b: b["memories"])
        with qtbot.waitSignal(view.range_chosen) as chosen:
            qtbot.mouseClick(view.chart, Qt.MouseButton.LeftButton, pos=view.chart.bar_center(busiest["bin"]).toPoint())
        assert tuple(chosen.args) == bin_bounds(busiest["bin"], "week")
        with qtbot.waitSignal(view.loaded):
            view.set_channels(("webshop",))
        assert session.store is not None
        webshop = session.store.count(MemoryQuery(statuses=(), channels=("webshop",)))
        assert sum(b["memories"] for b in view.chart.data["bins"]) == webshop < sum(b["memories"] for b in bins)
        view.clear()
        assert view.chart.data["bins"] == [] and not view.is_open
