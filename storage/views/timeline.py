"""The timeline: memories and turns of every kind on one time axis, in bins."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ..errors import UnsupportedError
from ..model import Memory
from ..query import MemoryQuery, Order
from ..store import MemoryStore

# Labels as a person reads them: weeks are ISO 8601 weeks (Monday first, week 1 holds the
# year's first Thursday), as calendars print them.
BIN_FORMATS = {"day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m"}
# What the sources count by. SQLite before 3.46 and PostgreSQL's to_char pieces cannot spell
# ISO weeks, so weeks are counted by day and the days summed into their ISO week here.
SOURCE_FORMATS = {"day": "%Y-%m-%d", "week": "%Y-%m-%d", "month": "%Y-%m"}
GROUPS = ("kind", "layer", "channel")


def timeline(
    store: MemoryStore,
    *,
    bin: str = "day",
    group_by: str = "kind",
    query: MemoryQuery = MemoryQuery(statuses=()),
) -> dict[str, Any]:
    """Counts per bin, split by kind, layer or channel; turns counted alongside. Every bin from
    the first to the last is listed, the empty ones with zeros, so the axis keeps its scale."""
    if bin not in BIN_FORMATS:
        raise UnsupportedError(f"Unknown bin {bin!r}; use day, week or month.")
    if group_by not in GROUPS:
        raise UnsupportedError(f"Unknown grouping {group_by!r}; use kind, layer or channel.")
    fmt = SOURCE_FORMATS[bin]
    bins: dict[str, dict[str, int]] = {}
    for (label, group), n in store.bin_counts(query, fmt, group_by).items():
        counts = bins.setdefault(relabel(label, bin), {})
        counts[group] = counts.get(group, 0) + n
    turns: dict[str, int] = {}
    for label, n in store.turn_bin_counts(fmt, query.since, query.until).items():
        key = relabel(label, bin)
        turns[key] = turns.get(key, 0) + n
    labels = every_bin(set(bins) | set(turns), bin)
    return {
        "bin": bin,
        "group_by": group_by,
        "bins": [
            {
                "bin": label,
                "start": bin_bounds(label, bin)[0].isoformat(),
                "end": bin_bounds(label, bin)[1].isoformat(),
                "memories": sum(bins.get(label, {}).values()),
                "counts": dict(sorted(bins.get(label, {}).items())),
                "turns": turns.get(label, 0),
            }
            for label in labels
        ],
    }


def relabel(label: str, bin: str) -> str:
    """A source's label (a day, for weeks) as the bin's label."""
    if bin != "week":
        return label
    return date.fromisoformat(label).strftime(BIN_FORMATS["week"])


def every_bin(labels: set[str], bin: str) -> list[str]:
    """The labels from the earliest to the latest, the bins between them that hold nothing too."""
    if not labels:
        return []
    first, last = min(labels), max(labels)
    return list(_labels_between(bin_bounds(first, bin)[0], bin_bounds(last, bin)[0], bin))


def _labels_between(start: datetime, last: datetime, bin: str) -> Iterator[str]:
    at = start
    while at <= last:
        yield at.strftime(BIN_FORMATS[bin])
        at = bin_bounds(at.strftime(BIN_FORMATS[bin]), bin)[1]


def bin_bounds(label: str, bin: str) -> tuple[datetime, datetime]:
    """The [start, end) interval a bin label covers, for filtering a view to it."""
    if bin == "day":
        start = datetime.strptime(label, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        return start, start + timedelta(days=1)
    if bin == "week":
        year, week = label.split("-W")
        monday = datetime.fromisocalendar(int(year), int(week), 1).replace(tzinfo=timezone.utc)
        return monday, monday + timedelta(weeks=1)
    if bin == "month":
        start = datetime.strptime(label, "%Y-%m").replace(tzinfo=timezone.utc)
        end = (start.replace(day=28) + timedelta(days=4)).replace(day=1)
        return start, end
    raise UnsupportedError(f"Unknown bin {bin!r}.")


def events(
    store: MemoryStore, since: datetime, until: datetime, *, limit: int = 200, query: MemoryQuery = MemoryQuery()
) -> list[Memory]:
    """The memories created in [since, until), oldest first."""
    ranged = MemoryQuery(**{**query.__dict__, "since": since, "until": until, "order": Order.CREATED})
    return list(reversed(store.page(ranged, limit=limit)))
