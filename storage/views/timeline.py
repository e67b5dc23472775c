"""The timeline: memories and turns of every kind on one time axis, in bins."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import UnsupportedError
from ..model import Memory
from ..query import MemoryQuery, Order
from ..store import MemoryStore

BIN_FORMATS = {"day": "%Y-%m-%d", "week": "%Y-W%W", "month": "%Y-%m"}
GROUPS = ("kind", "layer", "channel")


def timeline(
    store: MemoryStore,
    *,
    bin: str = "day",
    group_by: str = "kind",
    query: MemoryQuery = MemoryQuery(statuses=()),
) -> dict[str, Any]:
    """Counts per bin, split by kind, layer or channel; turns counted alongside."""
    if bin not in BIN_FORMATS:
        raise UnsupportedError(f"Unknown bin {bin!r}; use day, week or month.")
    if group_by not in GROUPS:
        raise UnsupportedError(f"Unknown grouping {group_by!r}; use kind, layer or channel.")
    fmt = BIN_FORMATS[bin]
    bins: dict[str, dict[str, int]] = {}
    for source in store.sources:
        if not query.wants_kind(source.kind):
            continue
        for (label, group), n in source.bin_counts(query, fmt, group_by).items():
            counts = bins.setdefault(label, {})
            counts[group] = counts.get(group, 0) + n
    turns = store.turn_bin_counts(fmt, query.since, query.until)
    labels = sorted(set(bins) | set(turns))
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


def bin_bounds(label: str, bin: str) -> tuple[datetime, datetime]:
    """The [start, end) interval a bin label covers, for filtering a view to it."""
    if bin == "day":
        start = datetime.strptime(label, "%Y-%m-%d").replace(tzinfo=timezone.utc)
        return start, start + timedelta(days=1)
    if bin == "week":
        year, week = label.split("-W")
        jan1 = datetime(int(year), 1, 1, tzinfo=timezone.utc)
        first_monday = jan1 + timedelta(days=(7 - jan1.weekday()) % 7)
        start = first_monday + timedelta(weeks=int(week) - 1) if int(week) > 0 else jan1
        end = first_monday + timedelta(weeks=int(week))
        return start, end
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
