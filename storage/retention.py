"""What a store's owner will expire, archive or clean up, and when, by the owner's own rule.

A source whose system drops memory on its own (SynthOrg's retention and expiry, AgentX's 90-day
archive, LangGraph's TTLs, mem0's expiration dates, Redis key TTLs) implements
``RetentionSource.upcoming``; the store gathers them for ``mnemoscope retention`` and the window.
Nothing here changes a store: it previews what the owner will do.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

EXPIRE = "expire"  # the owner stops returning it (it may stay on disk)
ARCHIVE = "archive"  # the owner moves it out of the live set
CLEAN_UP = "clean up"  # the owner deletes it
ACTIONS = (EXPIRE, ARCHIVE, CLEAN_UP)


@dataclass(frozen=True)
class Upcoming:
    """One record the owner will act on, when and by which of its rules."""

    record_id: str  # a memory id, or a scratchpad key
    action: str  # one of ACTIONS
    when: datetime  # UTC; in the past when the owner is overdue (it runs its rule lazily)
    rule: str  # the owner's rule in words, e.g. "SynthOrg retention: episodic 30 days (agent override)"
    owner: str  # the format's label
    preview: str = ""  # the first words of the content, for a person to recognise it

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.record_id,
            "action": self.action,
            "when": self.when.isoformat(),
            "rule": self.rule,
            "owner": self.owner,
            "preview": self.preview,
        }


@runtime_checkable
class RetentionSource(Protocol):
    """A source whose owner expires, archives or cleans up records by a rule of its own."""

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        """Every record the owner will act on before ``until`` (overdue ones included)."""
        ...


def keeps_rule(source: object) -> bool:
    """Whether a source's owner expires, archives or cleans up by a rule: a RetentionSource does,
    unless it says its store has no such rule (``keeps_retention_rule`` False: a LangGraph file of
    checkpoints only)."""
    return isinstance(source, RetentionSource) and bool(getattr(source, "keeps_retention_rule", True))


PREVIEW_WORDS = 12


def preview_of(text: str) -> str:
    """The first words of a record's text, on one line."""
    words = str(text).split()
    return " ".join(words[:PREVIEW_WORDS]) + (" …" if len(words) > PREVIEW_WORDS else "")


def gathered(sources: Iterable[object], now: datetime, until: datetime) -> list[Upcoming]:
    """What every source that implements RetentionSource will act on before until, the most
    overdue first."""
    found = [u for s in sources if isinstance(s, RetentionSource) for u in s.upcoming(now, until) if u.when <= until]
    return sorted(found, key=lambda u: (u.when, u.owner, u.record_id))


_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_duration(text: str) -> timedelta:
    """A window ahead written as a count and a unit: 90m, 12h, 7d, 30d, 2w."""
    match = re.fullmatch(r"\s*(\d+)\s*([mhdw])\s*", text.lower())
    if match is None:
        raise ValueError(f"not a duration: {text!r} (write a count and a unit: 12h, 7d, 30d, 2w)")
    return int(match.group(1)) * _UNITS[match.group(2)]


def duration_text(span: timedelta) -> str:
    """A window in words, in the largest unit it is a whole number of: "30 days", "12 hours"."""
    for name, unit in (("week", timedelta(weeks=1)), ("day", timedelta(days=1)), ("hour", timedelta(hours=1))):
        if span >= unit and span % unit == timedelta(0) and not (name == "week" and span < timedelta(weeks=2)):
            count = span // unit
            return f"{count} {name}" + ("s" if count != 1 else "")
    minutes = int(span.total_seconds() // 60)
    return f"{minutes} minute" + ("s" if minutes != 1 else "")


def due_text(when: datetime, now: datetime) -> str:
    """How far off when is: "in 3 days", "overdue by 2 hours", "due now"."""
    delta = when - now
    span = abs(delta)
    for name, unit in (("day", timedelta(days=1)), ("hour", timedelta(hours=1)), ("minute", timedelta(minutes=1))):
        if span >= unit:
            count = span // unit
            words = f"{count} {name}" + ("s" if count != 1 else "")
            return f"in {words}" if delta > timedelta(0) else f"overdue by {words}"
    return "due now" if delta >= timedelta(0) else "overdue by under a minute"


def summary_lines(now: datetime, upcoming: list[Upcoming], kept: dict[str, bool], within: timedelta) -> list[str]:
    """What a preview found, in words: how many and how many overdue; each store whose owner
    expires nothing; "nothing expires" when the owners that do have nothing due."""
    lines = []
    if upcoming:
        overdue = sum(u.when <= now for u in upcoming)
        lines.append(f"{len(upcoming)} within {duration_text(within)}"
                     + (f", {overdue} overdue (their owner acts when it next runs)" if overdue else ""))
    lines += [f"{label} keeps no expiry or retention rule" for label, keeps in kept.items() if not keeps]
    if not upcoming and any(kept.values()):
        lines.append(f"nothing expires within {duration_text(within)}")
    return lines
