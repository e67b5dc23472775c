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
