"""Timestamps: every value a store holds is read as an aware UTC datetime."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

from mnemoscope.storage.timeutil import as_utc, parse_time, to_iso, utcnow

NOON = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def test_every_spelling_of_a_time_reads_as_the_same_utc_instant() -> None:
    berlin = timezone(timedelta(hours=1))
    for value in ("2026-11-01T12:00:00Z", "2026-11-01T12:00:00+00:00", " 2026-11-01T13:00:00+01:00 ",
                  "2026-11-01T12:00:00", "2026-11-01 12:00:00", "2026-11-01T12:00", "2026-11-01T06:30:00-05:30",
                  "2026-11-01T12:00:00.000000+00:00", NOON.timestamp(), int(NOON.timestamp() * 1000),
                  datetime(2026, 11, 1, 13, 0, tzinfo=berlin), datetime(2026, 11, 1, 12, 0)):
        parsed = parse_time(value)
        assert parsed == NOON and parsed.tzinfo is not None, value
    assert parse_time(date(2026, 11, 1)) == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert parse_time("2026-11-01") == datetime(2026, 11, 1, tzinfo=timezone.utc)  # a bare date: midnight UTC


def test_empty_and_unreadable_values_give_the_default() -> None:
    assert parse_time(None) is None and parse_time("") is None
    assert parse_time("last Tuesday") is None
    assert parse_time("last Tuesday", NOON) == NOON


def test_times_are_written_as_iso_utc_and_now_has_whole_seconds() -> None:
    assert to_iso(datetime(2026, 11, 1, 13, 0, tzinfo=timezone(timedelta(hours=1)))) == "2026-11-01T12:00:00+00:00"
    assert as_utc(datetime(2026, 11, 1, 12, 0)) == NOON
    now = utcnow()
    assert now.tzinfo is timezone.utc and now.microsecond == 0
    assert abs(datetime.now(timezone.utc) - now) < timedelta(seconds=5)
