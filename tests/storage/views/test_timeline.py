"""The timeline (storage/views/timeline.py): the demo's memories and turns per day, ISO week or
month, split by kind, layer or channel, every bin on the axis, each bin a filter."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.views.timeline import bin_bounds, events, every_bin, relabel, timeline

EVERY_STATUS = MemoryQuery(statuses=())


@pytest.fixture
def store(demo_path: Path):
    with open_store(demo_path) as opened:
        yield opened


@pytest.mark.parametrize(
    "label, bin, start, end",
    [
        ("2026-03-14", "day", datetime(2026, 3, 14), datetime(2026, 3, 15)),
        ("2026-W11", "week", datetime(2026, 3, 9), datetime(2026, 3, 16)),
        ("2020-W53", "week", datetime(2020, 12, 28), datetime(2021, 1, 4)),
        ("2026-12", "month", datetime(2026, 12, 1), datetime(2027, 1, 1)),
    ],
)
def test_bin_bounds(label: str, bin: str, start: datetime, end: datetime) -> None:
    assert bin_bounds(label, bin) == (start.replace(tzinfo=timezone.utc), end.replace(tzinfo=timezone.utc))
    fmt = {"day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m"}[bin]
    assert start.strftime(fmt) == label and (end - timedelta(seconds=1)).strftime(fmt) == label


def test_clicking_a_bin_filters_to_its_memories(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        data = timeline(store, bin="week", query=MemoryQuery(statuses=()))
        busiest = max(data["bins"], key=lambda b: b["memories"])
        start, end = bin_bounds(busiest["bin"], "week")
        assert store.count(MemoryQuery(statuses=(), since=start, until=end)) == busiest["memories"]


@pytest.mark.parametrize("bin", ["day", "week", "month"])
def test_every_memory_and_turn_is_in_one_bin_and_no_bin_is_skipped(store, bin: str) -> None:
    data = timeline(store, bin=bin)
    bins = data["bins"]
    assert sum(b["memories"] for b in bins) == store.count(EVERY_STATUS)
    assert sum(b["turns"] for b in bins) == sum(store.turn_bin_counts("%Y-%m", None, None).values()) > 0
    for before, after in zip(bins, bins[1:], strict=False):
        assert before["end"] == after["start"]  # one axis, the empty bins listed with zeros
    empty = [b for b in bins if b["memories"] == 0 and b["turns"] == 0]
    assert all(b["counts"] == {} for b in empty)
    if bin == "day":  # the demo's sessions are six days apart: days with nothing lie between
        assert empty


def test_a_grouping_splits_each_bin_as_the_filters_count(store) -> None:
    data = timeline(store, bin="month", group_by="channel")
    assert data["group_by"] == "channel"
    for channel in ("webshop", "rust-cli", "_global"):
        in_bins = sum(b["counts"].get(channel, 0) for b in data["bins"])
        assert in_bins == store.count(MemoryQuery(statuses=(), channels=(channel,))) > 0
    layers = timeline(store, bin="month", group_by="layer")
    assert {k for b in layers["bins"] for k in b["counts"]} <= {"core", "semantic", "episodic", "procedural",
                                                                 "working", "social"}


def test_a_filtered_timeline_counts_only_what_the_filter_keeps(store) -> None:
    webshop = timeline(store, bin="week", group_by="channel", query=MemoryQuery(statuses=(), channels=("webshop",)))
    assert {k for b in webshop["bins"] for k in b["counts"]} == {"webshop"}


def test_an_unknown_bin_or_grouping_is_refused(store) -> None:
    with pytest.raises(UnsupportedError, match="use day, week or month"):
        timeline(store, bin="year")
    with pytest.raises(UnsupportedError, match="use kind, layer or channel"):
        timeline(store, group_by="status")
    with pytest.raises(UnsupportedError, match="Unknown bin"):
        bin_bounds("2026", "year")


def test_days_become_their_iso_weeks_and_the_gaps_between_labels_are_filled() -> None:
    assert relabel("2026-03-14", "week") == "2026-W11"
    assert relabel("2021-01-03", "week") == "2020-W53"  # a Sunday: still the old year's last week
    assert relabel("2026-03-14", "day") == "2026-03-14"
    assert every_bin({"2026-11", "2027-02"}, "month") == ["2026-11", "2026-12", "2027-01", "2027-02"]
    assert every_bin({"2020-W53", "2021-W02"}, "week") == ["2020-W53", "2021-W01", "2021-W02"]
    assert every_bin({"2024-02-28", "2024-03-01"}, "day") == ["2024-02-28", "2024-02-29", "2024-03-01"]
    assert every_bin(set(), "day") == []


def test_events_are_the_memories_created_in_the_interval_oldest_first(store) -> None:
    data = timeline(store, bin="week")
    busiest = max(data["bins"], key=lambda b: b["memories"])
    since, until = bin_bounds(busiest["bin"], "week")
    found = events(store, since, until, query=EVERY_STATUS)
    assert len(found) == busiest["memories"]
    created = [m.created_at for m in found]
    assert created == sorted(created) and since <= created[0] and created[-1] < until
    assert events(store, since, until, limit=2, query=EVERY_STATUS) == found[-2:]  # the newest two
    later = datetime(2030, 1, 1, tzinfo=timezone.utc)
    assert events(store, later, later + timedelta(days=1)) == []
