"""Timestamps: everything in storage is an aware UTC datetime."""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import overload


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


def as_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


@overload
def parse_time(value: object, default: datetime) -> datetime: ...
@overload
def parse_time(value: object, default: None = None) -> datetime | None: ...
def parse_time(value: object, default: datetime | None = None) -> datetime | None:
    """Parse ISO strings, epoch seconds, dates or datetimes; None when empty."""
    if type(value) is str and value and value[-1] not in "Z " and value[0] != " ":
        # Most values: a database's ISO text, with an offset or read as UTC without one (parsed
        # with "+00:00" added: a fifth of what replace(tzinfo=...) costs); any other text (a
        # bare date, say) takes the general way below.
        offset = len(value) > 16 and value[-3] == ":" and value[-6] in "+-"
        try:
            parsed: datetime | None = datetime.fromisoformat(value if offset else value + "+00:00")
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            return parsed if parsed.tzinfo is timezone.utc else parsed.astimezone(timezone.utc)
    if value is None or value == "":
        return default
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if isinstance(value, (int, float)):
        seconds = float(value)
        if seconds > 1e11:  # milliseconds
            seconds /= 1000.0
        return datetime.fromtimestamp(seconds, timezone.utc)
    text = str(value).strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        return as_utc(datetime.fromisoformat(text))
    except ValueError:
        return default


def to_iso(value: datetime) -> str:
    return as_utc(value).isoformat()
