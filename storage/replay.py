"""What undo and redo check before they write a step again.

A step that changed memories purged since (or a purge itself) is refused: their text is gone and
is never written back. And a step is judged on what the person changed: the counters an agent
keeps moving as it retrieves (access count, last access) are its own, so a step replayed after the
agent bumped them is rebased onto them instead of refused; any other change since is a conflict."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from .errors import UnsupportedError
from .journal.redaction import purge_step
from .model import AuditEntry
from .source import PURGE, Change, Snapshot, same_record

AGENT_COUNTERS = ("access_count", "last_accessed")
NESTED = "metadata"  # a vector record keeps them in its metadata


def _levels(snapshot: Snapshot) -> list[dict[str, Any]]:
    """The dicts a snapshot keeps counters in: itself, and a vector record's metadata."""
    nested = snapshot.get(NESTED)
    return [snapshot, nested] if isinstance(nested, dict) else [snapshot]


def _counter_values(snapshot: Snapshot | None) -> list[dict[str, Any]]:
    """The agent's counters a snapshot holds, per level."""
    return [{k: level[k] for k in AGENT_COUNTERS if k in level} for level in _levels(snapshot)] if snapshot else []


def _without_counters(snapshot: Snapshot) -> Snapshot:
    kept = {k: v for k, v in snapshot.items() if k not in AGENT_COUNTERS}
    if isinstance(kept.get(NESTED), dict):
        kept[NESTED] = {k: v for k, v in kept[NESTED].items() if k not in AGENT_COUNTERS}
    return kept


def only_counters_moved(current: Snapshot | None, expected: Snapshot | None) -> bool:
    """Whether current differs from expected in the agent's counters alone."""
    if current is None or expected is None:
        return False
    return same_record(_without_counters(current), _without_counters(expected))


def with_counters_of(target: Snapshot | None, current: Snapshot) -> Snapshot | None:
    """target with the agent's counters as they are now (None stays None: a record removed)."""
    if target is None:
        return None
    out = copy.deepcopy(target)
    for level, now in zip(_levels(out), _counter_values(current), strict=False):
        level.update(now)
    return out


def with_counter_moves(target: Snapshot, expected: Snapshot, current: Snapshot) -> Snapshot:
    """target for a step that moved the counters itself (a reinforce, or its undo) replayed over an
    agent that moved them since: the access count moved by the step's own difference from where
    the agent left it, the last access the agent's where it moved, else the step's."""
    out = copy.deepcopy(target)
    for level, aim, was, now in zip(_levels(out), _counter_values(target), _counter_values(expected),
                                    _counter_values(current), strict=False):
        for key, value in now.items():
            if key != "access_count":
                if key in aim or value != was.get(key):
                    level[key] = aim.get(key) if value == was.get(key) else value
                continue
            counts = [0 if v is None else v for v in (value, aim.get(key), was.get(key))]  # (NULL: never counted)
            if all(isinstance(v, int) and not isinstance(v, bool) for v in counts):
                level[key] = max(0, counts[0] + counts[1] - counts[2])
            else:
                level[key] = value
    return out


def past_agent_counters(changes: Sequence[Change], writer_for: Any) -> list[Change] | None:
    """changes rebased onto each record as it is now where only the agent's counters moved since
    (their targets keep those counters; a step that moved them itself, a reinforce, moves them by
    its own difference again: with_counter_moves); None where any record changed otherwise (a
    real conflict), where one the agent used would be removed, or where none moved at all. A
    record that keeps no counters (a markdown block, found by its text) goes as it is: its own
    writer judges it."""
    out: list[Change] = []
    rebased = False
    for change in changes:
        if not any(_counter_values(change.before) + _counter_values(change.after)):
            out.append(change)
            continue
        writer = change.writer or writer_for(change.record)
        current = writer.read_record(change.record)
        if same_record(current, change.before):
            out.append(change)
        elif change.after is not None and change.before is not None and only_counters_moved(current, change.before):
            assert current is not None
            target = (with_counters_of(change.after, current)
                      if _counter_values(change.before) == _counter_values(change.after)
                      else with_counter_moves(change.after, change.before, current))
            out.append(Change(change.record, current, target, writer))
            rebased = True
        else:
            return None
    return out if rebased else None


def refuse_purged(verb: str, entry: AuditEntry, changes: list[Change]) -> None:
    """Undo and redo never write back what a purge redacted: the step refuses, nothing written."""
    steps = sorted({s for c in changes for s in (purge_step(c.before), purge_step(c.after)) if s is not None})
    if not steps:
        return
    names = ", ".join(entry.targets)
    if entry.operation == PURGE:
        raise UnsupportedError(f"Step {entry.seq} was a purge of {names}: a purge removes memories for good and "
                               "cannot be undone (their text is gone). Nothing was changed.")
    raise UnsupportedError(
        f"Step {entry.seq} ({entry.operation} of {names}) cannot be {verb}ne: it changed memories purged for good "
        f"in step {steps[0]}, whose text is gone. Nothing was changed."
    )
