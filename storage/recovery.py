"""Steps a killed process never finished: undone at the next writable open, and never shown
half-applied to a reader.

A step that writes more than one copy journals its intent (every change, with before-images)
before touching a store, and holds the store's step lock (step_lock.py) until it is marked done.
An intent still pending is one of two things: a live step in another process (its lock is held)
or a crashed one (its lock went with the process). Recovery and readers wait for a live step to
finish; a crashed step is undone by the next writable open and refused by read-only ones, which
cannot undo it and would otherwise show its half (UnfinishedStepError).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import ConflictError, LockedError, StoreError, UnfinishedStepError
from .journal.log import INTERRUPTED
from .model import AuditEntry
from .replay import only_counters_moved, with_counters_of
from .source import Change, same_content
from .step_lock import between_steps, step_lock

if TYPE_CHECKING:
    from .store import MemoryStore


def describe(entry: AuditEntry) -> str:
    return f"step #{entry.seq} ({entry.operation})"


def _step(entry: AuditEntry) -> str:
    """describe(), to begin a sentence."""
    return "S" + describe(entry)[1:]


def unfinished_steps(store: MemoryStore) -> list[AuditEntry]:
    """The steps a killed process left pending: read again once no process is in a step (a live
    one is waited for; LockedError, naming its process, if it runs on past the step lock's timeout)."""
    journal = store._journal
    pending = journal.pending()
    if pending:
        with between_steps(store.root, label=store.location):
            pending = journal.pending()
    return pending


def refuse_unfinished(store: MemoryStore) -> None:
    """For a read-only open: UnfinishedStepError when a crashed step is still pending."""
    pending = unfinished_steps(store)
    if pending:
        raise UnfinishedStepError(
            f"{store.location}: {', '.join(describe(e) for e in pending)} was interrupted (its process died) "
            "and is not undone yet, so some copies are half-changed; a read-only open cannot put them back. "
            f"Open the store for writing once to undo it (e.g. `mnemoscope check {store.location} --repair-all`)."
        )


def pending_notes(store: MemoryStore) -> list[str]:
    """What a read-only open would do about unfinished steps."""
    return [
        f"{_step(entry)} was interrupted; open the store without read-only to put its copies "
        "back in agreement."
        for entry in unfinished_steps(store)
    ]


def recover_interrupted(store: MemoryStore) -> list[str]:
    """Undo what a step that never finished (the process was killed) had written, so every copy
    agrees again: under the step lock, so that a step another process is still writing is waited
    for, never undone. Each step's intent is in the journal before any store is touched."""
    journal = store._journal
    if not journal.pending():
        return []
    try:
        with step_lock(store.root, label=store.location):
            pending = journal.pending()
            notes = [_undo(store, entry) for entry in pending]
    except LockedError as exc:
        return [f"Unfinished steps were left as they are: {exc}"]
    if notes:
        store.refresh_copies()
    return notes


def _undo(store: MemoryStore, entry: AuditEntry) -> str:
    """One unfinished step undone as far as it can be, and marked interrupted either way: a
    record someone changed since keeps their change (named in the note, for check and a person
    to look at), and the step is no longer pending, so readers are not refused for good."""
    journal = store._journal
    stuck = [c.record for c in reversed(journal.changes(entry.seq)) if not _put_back(store, c)]
    journal.set_state(entry.seq, INTERRUPTED)
    if stuck:
        return (f"{_step(entry)} was interrupted and could not be fully undone: "
                f"{', '.join(stuck)} changed since (kept as it now is); check them.")
    return f"{_step(entry)} was interrupted; what it had written was undone."


def _put_back(store: MemoryStore, change: Change) -> bool:
    """One change of an unfinished step back to its before state (the agent's counters as they
    now are where only those moved since); False if someone else changed it otherwise."""
    try:
        source = store.source_for(change.record)
        current = source.read_record(change.record)
        if change.after is None:
            if current is None:
                source.write_record(change.record, None, change.before)
                return True
            return same_content(current, change.before)
        try:
            source.write_record(change.record, change.after, change.before)
        except ConflictError:  # never written, written over since, or the agent used it since
            if current is not None and change.before is not None and only_counters_moved(current, change.after):
                source.write_record(change.record, current, with_counters_of(change.before, current))
                return True
            return same_content(current, change.before)
        return True
    except StoreError:
        return False
