"""Curation: edit, promote, delete, purge, restore, reinforce, re-embed, undo, redo.

Every step is validate -> plan -> prepare -> apply -> journal. The source holding
each memory plans the record changes (before -> after snapshots) over every copy it
keeps (source.plan); the Curator validates the request against the source's
capabilities, lets every source the step writes ready its writers (a source that
cannot write refuses then, before anything is written, the journal's intent
included), applies the changes of all the memories selected all-or-nothing
(a failed write reverts those already written), writes one journal entry, and
tells the store's listeners. Undo applies the same changes backwards; redo
forwards again, past the counters an agent moved since (replay.py).
Nothing here asks what kind of store a memory lives in.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .consistency.repair import repair_kinds
from .consistency_report import Report
from .errors import (
    BelowThresholdError,
    ConflictError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    StoreFileError,
    UnreadableStoreError,
    UnsupportedError,
)
from .journal.log import DONE, FAILED, LOG, UNDONE
from .journal.redaction import PURGED, Purge, purge_step
from .model import GLOBAL_CHANNEL, AuditEntry, Layer, Memory, Status
from .replay import past_agent_counters, refuse_purged
from .source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    REEMBED,
    REINFORCE,
    RESTORE,
    Capabilities,
    Change,
    Checked,
    Plan,
    PlanContext,
    PurgeResidue,
    ScratchWriter,
    Snapshot,
    in_apply_order,
    memories_of,
    plans_of,
    prepare_writes,
    writer_runs,
)
from .step_lock import step_lock
from .store import MemoryStore, StoreEvent
from .timeutil import to_iso, utcnow

REPAIR = "repair"
Ids = str | Sequence[str]
# One revision (one id), or each selected id's revision as it was read.
Revisions = str | Mapping[str, str] | None


@dataclass
class Outcome:
    """What a curation step did: the journal entry and the ids to look at now."""

    operation: str
    seq: int
    ids: list[str]
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "seq": self.seq,
            "ids": self.ids,
            "notes": self.notes,
            "details": self.details,
        }


@dataclass
class _Planned:
    id: str
    channel: str | None
    plan: Plan
    details: dict[str, Any]


class Curator:
    """Curation of one open store. Every operation takes one id or several: several are
    planned together and applied as one step, one journal entry, one undo."""

    def __init__(self, store: MemoryStore, actor: str = "user") -> None:
        self.store = store
        self.actor = actor

    # -- public operations --------------------------------------------------------------

    def edit(
        self,
        memory_ids: Ids,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        layer: Layer | str | None = None,
        channel: str | None = None,
        salience: float | None = None,
        expected_revision: Revisions = None,
    ) -> Outcome:
        requested = {
            k: v
            for k, v in {
                "content": content,
                "tags": tuple(tags) if tags is not None else None,
                "layer": Layer(layer) if layer is not None else None,
                "channel": channel,
                "salience": salience,
            }.items()
            if v is not None
        }
        if not requested:
            raise UnsupportedError("Nothing to edit: give --content, --tag, --layer, --channel or --salience.")
        if salience is not None and not 0.0 <= float(salience) <= 1.0:
            raise UnsupportedError("Salience must be between 0 and 1.")
        if "content" in requested and not str(requested["content"]).strip():
            raise UnsupportedError("Content cannot be empty; delete the memory instead.")

        def check(memory: Memory, caps: Capabilities) -> dict[str, Any]:
            refused = [f for f in requested if f not in caps.editable_fields]
            if refused and not caps.editable_fields:
                reason = caps.read_only_reason or getattr(self.store.source_for(memory.id), "read_only_reason", "")
                raise UnsupportedError(f"{memory.id} can be deleted but not edited" + (f": {reason}." if reason else "."))
            if refused:
                raise UnsupportedError(
                    f"{memory.id} is a {memory.source.kind.value} memory: "
                    f"{', '.join(refused)} cannot be stored there (editable: {', '.join(caps.editable_fields)})."
                )
            before = {f: _plain(getattr(memory, f)) for f in requested}
            return {"fields": sorted(requested), "from": before, "to": {f: _plain(v) for f, v in requested.items()}}

        planned = self._plan_each(EDIT, memory_ids, requested, expected_revision, check)
        if not any(p.plan.changes for p in planned):
            names = ", ".join(p.id for p in planned)
            raise NothingToDoError(f"{names} already {'has' if len(planned) == 1 else 'have'} those values; nothing changed.")
        return self._run(EDIT, [p for p in planned if p.plan.changes])

    def promote(
        self,
        memory_ids: Ids,
        *,
        to: str = GLOBAL_CHANNEL,
        reason: str = "",
        expected_revision: Revisions = None,
        force: bool = False,
    ) -> Outcome:
        """A copy of each memory in channel ``to``, linked to it by PROMOTED_FROM (seed 002);
        the original stays. A memory that counts its accesses and misses one of the store's
        promotion thresholds is refused (BelowThresholdError, nothing written) unless force:
        the journal then records which thresholds it missed."""
        def check(memory: Memory, caps: Capabilities) -> dict[str, Any]:
            if not caps.can_promote:
                label = self.store.source_for(memory.id).label
                raise UnsupportedError(
                    f"{memory.id} is a {label} memory; {label} has no project and global "
                    "channels to promote between (import it into a workspace to promote it there)."
                )
            if memory.status is not Status.ACTIVE:
                raise UnsupportedError(f"{memory.id} is {memory.status.value}; restore it before promoting.")
            check = self.store.settings.promotion.check(memory)
            return {"from_channel": memory.channel, "to_channel": to, "reason": reason, "forced": False,
                    "shortfall": self.store.promotion_shortfall(memory), **check}

        planned = self._plan_each(PROMOTE, memory_ids, {"to": to, "reason": reason}, expected_revision, check)
        unmet = {p.id: p.details["shortfall"] for p in planned if p.details["shortfall"]}
        if unmet and not force:
            listed = "; ".join(f"{memory_id}: {', '.join(failed)}" for memory_id, failed in unmet.items())
            raise BelowThresholdError(
                f"Below the promotion thresholds ({listed}); nothing was promoted. "
                "Promote anyway with --force (the journal records which thresholds were missed).",
                unmet,
            )
        for p in planned:
            p.details["promoted_to"] = p.plan.new_id
            if p.id in unmet:
                p.details["forced"] = True
                p.plan.notes.append(f"Promoted below the thresholds ({', '.join(p.details['failed'])}).")
        return self._run(PROMOTE, planned, channel=to)

    def delete(self, memory_ids: Ids, *, purge: bool = False, expected_revision: Revisions = None) -> Outcome:
        """Soft delete (restorable), or with purge remove the memories for good: every copy, and
        their text wherever the store or the journal kept it (the owner's log, index residue, the
        journal's snapshots of every earlier step, redacted to a marker). A purge cannot be undone."""
        texts: list[str] = []

        def check(memory: Checked, caps: Capabilities) -> dict[str, Any]:
            if not purge and memory.status is Status.DELETED:
                raise NothingToDoError(f"{memory.id} is already deleted (use --purge to remove it for good).")
            if purge:
                texts.append(memory.content)
                return {"content": PURGED}
            return {"content": memory.content}

        operation = PURGE if purge else DELETE
        planned = self._plan_each(operation, memory_ids, {}, expected_revision, check, from_rows=not purge)
        return self._run(operation, planned, purged=texts if purge else None)

    def redact(
        self, memory_id: str, start: int, end: int, *, expected_revision: str | None = None, finding: str = ""
    ) -> Outcome:
        """Replace content[start:end] with [REDACTED] in every copy: an edit of that span only,
        journaled as "redact" (the details name the span, never what it held)."""
        from .findings import REDACTED, default_rules, fingerprint

        memory = self._current(memory_id, expected_revision)
        if not 0 <= start < end <= len(memory.content):
            raise UnsupportedError(f"{start}:{end} is not a span of {memory.id}'s content (0:{len(memory.content)}).")
        matched = memory.content[start:end]
        if finding and all(fingerprint(r.id, memory.id, matched) != finding for r in default_rules().rules):
            raise ConflictError(f"{memory.id} changed since finding {finding} was read; nothing was redacted. Scan again.")
        content = memory.content[:start] + REDACTED + memory.content[end:]

        def check(current: Memory, caps: Capabilities) -> dict[str, Any]:
            if "content" not in caps.editable_fields:
                raise UnsupportedError(f"{current.id}'s content cannot be edited here, so it cannot be redacted; "
                                       "delete the memory instead.")
            return {"span": [start, end], "finding": finding, "replaced_with": REDACTED}

        # Planned against the revision the span was measured on: a memory changed since refuses.
        planned = self._plan_each(EDIT, memory.id, {"content": content}, memory.revision or None, check)
        return self._run("redact", planned)

    def accept_findings(self, findings: Sequence[Any]) -> Outcome:
        """Add findings (storage.findings.Finding, or their fingerprints) to the store's baseline:
        one step, undone like any other."""
        from .findings import Finding, find_findings
        from .findings.store_scan import acceptance_changes

        self.store.require_writable()
        named = [f for f in findings if isinstance(f, str)]
        resolved = {f.fingerprint: f for f in find_findings(self.store, named)} if named else {}
        chosen = [resolved[f] if isinstance(f, str) else f for f in findings if isinstance(f, (str, Finding))]
        planned = [
            _Planned(f.memory_id, None, Plan([change], new_id=f.memory_id),
                     {"fingerprint": f.fingerprint, "rule": f.rule, "memory_id": f.memory_id})
            for f, change in acceptance_changes(self.store, chosen, self._context().now)
        ]
        return self._run("accept_finding", planned, channel=None)

    def reinforce(self, memory_ids: Ids, *, expected_revision: Revisions = None) -> Outcome:
        """One more access, last accessed now: what retrieval does, done by hand (pin)."""

        def check(memory: Memory, caps: Capabilities) -> dict[str, Any]:
            if not caps.can_reinforce:
                label = self.store.source_for(memory.id).label
                raise UnsupportedError(f"{memory.id} is {label}, which keeps no access count to reinforce.")
            return {"access_count": [memory.access_count, (memory.access_count or 0) + 1]}

        return self._run(REINFORCE, self._plan_each(REINFORCE, memory_ids, {}, expected_revision, check))

    def restore(self, memory_ids: Ids) -> Outcome:
        """Back to active: a soft-deleted memory's status, and the records its delete removed."""
        self.store.require_writable()
        context = self._context()
        planned = []
        for memory_id in dict.fromkeys(_as_list(memory_ids)):
            memory = self.store.find(memory_id)
            plan = Plan()
            if memory is not None and memory.status is not Status.ACTIVE:
                source = self.store.source_for(memory.id)
                self._writable(memory, source.capabilities(memory.id))
                plan = source.plan(RESTORE, memory, {}, context)
            elif memory is not None and not self._removed_by_delete(memory_id):
                raise NothingToDoError(f"{memory_id} is active; nothing to restore.")
            plan.changes += self.store.restored_copies(memory, self._removed_by_delete(memory_id))
            if not plan.changes:
                purged = self.store._journal.last_with((PURGE,), memory_id)
                if purged is not None:
                    raise NotFoundError(f"{memory_id} was purged for good in step {purged.seq}; a purge cannot be "
                                        "undone, so there is nothing to restore.")
                entry = self.store._journal.last_with(("delete", "restore"), memory_id)
                if entry is not None and entry.operation == "restore":
                    raise NothingToDoError(f"{memory_id} was already restored (journal entry {entry.seq}).")
                raise NotFoundError(f"No deleted memory {memory_id} to restore.")
            plan.new_id = memory.id if memory is not None else memory_id
            planned.append(_Planned(plan.new_id, memory.channel if memory is not None else None, plan, {}))
        return self._run(RESTORE, planned)

    def reembed(
        self, *, progress: Callable[[int, int], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> Outcome:
        """Recompute every vector marked stale with the store's embedder: one undoable step."""
        self.store.require_writable()
        embedder = self.store.embedder()
        if embedder is None:
            raise UnsupportedError("No embedder runs offline for this store's vectors; nothing can be re-embedded.")
        targets = list(dict.fromkeys(self.store.stale_ids()))
        if not targets:
            raise NothingToDoError("No vector is marked stale.")
        context = self._context()
        planned: list[_Planned] = []
        for start in range(0, len(targets), 64):
            if cancelled is not None and cancelled():
                raise NothingToDoError("Re-embedding cancelled; nothing was changed.")
            batch = [self.store.get(memory_id) for memory_id in targets[start : start + 64]]
            plans = [self.store.source_for(m.id).plan(REEMBED, m, {}, context) for m in batch]
            vectors = embedder.embed([plan.embed_text or "" for plan in plans])
            for memory, plan, vector in zip(batch, plans, vectors, strict=False):
                for change in plan.changes:
                    if change.after is not None and "embedding" in change.after:
                        change.after["embedding"] = vector
                planned.append(_Planned(memory.id, memory.channel, plan, {}))
            if progress is not None:
                progress(min(start + 64, len(targets)), len(targets))
        outcome = self._run(REEMBED, planned, channel=None)
        outcome.details.update({"count": len(targets), "embedder": embedder.name})
        return outcome

    def repair(self, report: Report, kinds: Sequence[str] | None = None) -> Outcome:
        """The safe repairs of a consistency report's findings of these kinds (default: every
        repairable kind it found), re-planned against the store as it is now: one undoable step."""
        self.store.require_writable()
        chosen = repair_kinds(report, kinds)
        plans = self.store.plan_repairs(report, chosen, self.store.embedder())
        planned = [_Planned(p.target, None, Plan(p.changes), {"target": p.target, "kinds": p.kinds}) for p in plans]
        outcome = self._run(REPAIR, planned, channel=None)
        counts = {kind: sum(kind in p.kinds for p in plans) for kind in chosen}
        outcome.details = {"count": len(plans), "kinds": counts}
        return outcome

    def set_scratch(self, session_id: str, key: str, value: Any, *, expected: str | None = None) -> Outcome:
        """Set one scratchpad key of a session (a new key is added) as the session's owner
        writes it; value keeps its JSON type. expected: the value as it was read
        (ScratchEntry.value); if it is no longer that, ConflictError and nothing is written."""
        if not key:
            raise UnsupportedError("A scratchpad key cannot be empty.")
        source, record, before = self._scratch(session_id, key, expected)
        after = source.scratch_snapshot(before, session_id, key, value, self._context().now)
        if after is before:
            raise NothingToDoError(f"{key} of session {session_id} already holds that value; nothing changed.")
        details = {"session_id": session_id, "key": key, "from": _scratch_value(source, before),
                   "to": source.scratch_entry(after).value}
        return self._scratch_step(EDIT, source, Change(record, before, after), session_id, details)

    def delete_scratch(self, session_id: str, key: str, *, expected: str | None = None) -> Outcome:
        """Remove one scratchpad key of a session (undo puts it back); expected as for set_scratch."""
        source, record, before = self._scratch(session_id, key, expected)
        if before is None:
            raise NotFoundError(f"Session {session_id} has no scratchpad key {key}.")
        details = {"session_id": session_id, "key": key, "from": _scratch_value(source, before), "to": None}
        return self._scratch_step(DELETE, source, Change(record, before, None), session_id, details)

    def scratch_writable(self, session_id: str) -> bool:
        """Whether set_scratch and delete_scratch can write the scratchpad of this session."""
        return not self.scratch_refusals([session_id])[session_id]

    def scratch_refusals(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Why set_scratch and delete_scratch would refuse each session's scratchpad ("" where they
        would write it), reading each source's sessions once."""
        if self.store.read_only:
            return dict.fromkeys(session_ids, f"{self.store.root} was opened read-only.")
        holders = self._session_holders()
        out = {}
        for session_id in session_ids:
            try:
                writer = self._scratch_writer(session_id, holders.get(session_id, []))
            except StoreError as exc:
                out[session_id] = str(exc)
                continue
            caps = writer.capabilities()  # type: ignore[attr-defined]
            out[session_id] = (
                f"The scratchpad of session {session_id} cannot be changed: {caps.read_only_reason}."
                if caps.read_only else ""
            )
        return out

    def _session_holders(self) -> dict[str, list[Any]]:
        holders: dict[str, list[Any]] = {}
        for source in self.store._sources:
            if source.capabilities().sessions:
                for session in source.sessions():  # type: ignore[attr-defined]
                    holders.setdefault(session.id, []).append(source)
        return holders

    def _scratch_source(self, session_id: str) -> ScratchWriter:
        return self._scratch_writer(session_id, self._session_holders().get(session_id, []))

    def _scratch_writer(self, session_id: str, holders: list[Any]) -> ScratchWriter:
        if not holders:
            raise NotFoundError(f"No session {session_id} in {self.store.root}.")
        writer = next((s for s in holders if isinstance(s, ScratchWriter)), None)
        if writer is None:
            raise UnsupportedError(
                f"The scratchpad of session {session_id} is kept in {holders[0].label}, whose scratchpad "
                "Mnemoscope only reads."
            )
        return writer

    def _scratch(self, session_id: str, key: str, expected: str | None) -> tuple[ScratchWriter, str, Snapshot | None]:
        self.store.require_writable()
        source = self._scratch_source(session_id)
        record = source.scratch_record(session_id, key)
        caps = self.store.source_for(record).capabilities(record)
        if caps.read_only:
            raise ReadOnlyError(f"The scratchpad of session {session_id} cannot be changed: {caps.read_only_reason}.")
        before = self.store.source_for(record).read_record(record)
        now = _scratch_value(source, before)
        if expected is not None and now != expected:
            state = "was removed" if now is None else "changed"
            raise ConflictError(
                f"{key} of session {session_id} {state} since it was read; nothing was written. Reload and try again."
            )
        return source, record, before

    def _scratch_step(self, operation: str, source: ScratchWriter, change: Change, session_id: str,
                      details: dict[str, Any]) -> Outcome:
        plan = Plan([change], notes=[source.scratch_note] if source.scratch_note else [])
        return self._run(operation, [_Planned(change.record, session_id, plan, details)])

    def undo(self) -> Outcome:
        self.store.require_writable()
        step = self.store._journal.step_to(UNDONE, self.store.own_steps)
        if step is None:
            raise NothingToDoError("Nothing to undo.")
        entry, changes = step
        return self._replay("undo", entry, [Change(c.record, c.after, c.before) for c in reversed(changes)])

    def redo(self) -> Outcome:
        self.store.require_writable()
        step = self.store._journal.step_to(DONE, self.store.own_steps)
        if step is None:
            raise NothingToDoError("Nothing to redo.")
        return self._replay("redo", *step)

    def _replay(self, verb: str, entry: AuditEntry, changes: list[Change]) -> Outcome:
        """Undo or redo a step: its own intent first, like any step, then the changes; where only
        an agent's counters moved since, once more over the records as they now are."""
        try:
            return self._replay_once(verb, entry, changes)
        except ConflictError:
            rebased = past_agent_counters(changes, self.store.writer_for)
            if rebased is None:
                raise
            return self._replay_once(verb, entry, rebased)

    def _replay_once(self, verb: str, entry: AuditEntry, changes: list[Change]) -> Outcome:
        refuse_purged(verb, entry, changes)
        details = {"step": entry.seq, "operation": entry.operation}
        journal = self.store._journal

        def replayed(applied: list[Change]) -> tuple[int, str, list[Change] | None]:
            state = UNDONE if verb == "undo" else DONE
            if [a.after for a in applied] == [c.after for c in changes]:
                return entry.seq, state, None  # every record as the entry says: its snapshots stay
            if verb == "undo":  # the snapshots kept as they now are on disk (markdown lines may have moved)
                return entry.seq, UNDONE, [Change(a.record, a.after, a.before) for a in reversed(applied)]
            return entry.seq, DONE, applied

        step: dict[str, Any] = dict(channel=entry.channel, details=details, actor=self.actor)
        at_once = self._in_one_transaction(changes, lambda conn, applied: journal.record_in(
            conn, verb, list(entry.targets), [], state=LOG, replayed=replayed(applied), **step))
        if at_once is not None:
            seq, applied = at_once
        else:
            with step_lock(self.store.root, label=self.store.location):  # (recovery.py)
                self._prepare(changes)
                seq = journal.begin(verb, list(entry.targets), changes, replaying=(entry.seq, UNDONE if verb == "undo" else DONE), **step)
                applied = self._apply_or_fail(seq, changes)
                journal.finish(seq, [], state=LOG, replayed=replayed(applied))
        self.store.own_steps.append(entry.seq)
        self._changed(list(entry.targets), applied)
        return Outcome(verb, seq, list(entry.targets), details=details)

    def _apply_or_fail(self, seq: int, changes: list[Change]) -> list[Change]:
        try:
            return self._apply(changes)
        except Exception as exc:
            if not getattr(exc, "unreverted", None):  # all put back: the intent stays in the log as failed
                self.store._journal.set_state(seq, FAILED)
            raise

    # -- planning -------------------------------------------------------------------------

    def _context(self) -> PlanContext:
        return PlanContext(now=to_iso(utcnow()), embed=self._embed, settings=self.store.settings)

    def _embed(self, text: str) -> list[float] | None:
        embedder = self.store.embedder()
        return embedder.embed([text])[0] if embedder is not None else None

    def _plan_each(
        self,
        operation: str,
        memory_ids: Ids,
        fields: dict[str, Any],
        expected_revision: Revisions,
        check: Callable[[Memory, Capabilities], dict[str, Any]],
        from_rows: bool = False,
    ) -> list[_Planned]:
        """Validate and plan every memory against the store as it is now; nothing is written.
        from_rows: check reads only a RowHead: many memories a source plans from rows build no Memory."""
        self.store.require_writable()
        ids = _as_list(memory_ids)
        if not ids:
            raise NothingToDoError("No memory selected.")
        context = self._context()
        if from_rows and expected_revision is None and len(ids) > 1:
            by_rows = self._plan_from_rows(operation, ids, check, context)
            if by_rows is not None:
                return by_rows
        sources: dict[str, Any] = {}
        found = memories_of(self.store.source_for, ids, sources)
        chosen: dict[str, tuple[Memory, Any, dict[str, Any]]] = {}
        for memory_id in ids:
            if isinstance(expected_revision, Mapping):
                revision = expected_revision.get(memory_id)
            else:
                revision = expected_revision if len(ids) == 1 else None
            if memory_id not in found:
                raise NotFoundError(f"No memory {memory_id} in {self.store.location}.")
            memory = _at_revision(found[memory_id], memory_id, revision)
            if memory.id in chosen:
                continue  # a copy's id and its memory's id name one memory
            source = sources[memory_id] if memory.id == memory_id else self.store.source_for(memory.id)
            caps = source.capabilities(memory.id)
            self._writable(memory, caps)
            chosen[memory.id] = (memory, source, check(memory, caps))
        plans = plans_of(operation, [(m, source) for m, source, _ in chosen.values()], fields, context)
        planned = []
        for (memory, source, details), plan in zip(chosen.values(), plans, strict=True):
            for change in plan.changes:
                change.writer = change.writer or source  # a format's source writes its own records
            planned.append(_Planned(memory.id, memory.channel, plan, details))
        return planned

    def _plan_from_rows(self, operation: str, ids: list[str], check: Callable[[Any, Capabilities], dict[str, Any]],
                        context: PlanContext) -> list[_Planned] | None:
        source = self.store.sole_source(ids)
        if source is None or not hasattr(source, "plan_rows"):
            return None
        by_rows = source.plan_rows(operation, ids, context)
        if by_rows is None:
            return None
        caps = source.capabilities(ids[0])
        planned = []
        for head, plan in by_rows:
            self._writable(head, caps)
            planned.append(_Planned(head.id, head.channel, plan, check(head, caps)))
        return planned

    def _current(self, memory_id: str, expected_revision: str | None) -> Memory:
        return _at_revision(self.store.get(memory_id), memory_id, expected_revision)

    @staticmethod
    def _writable(memory: Checked, caps: Capabilities) -> None:
        if caps.read_only:
            raise ReadOnlyError(f"{memory.id} cannot be changed: {caps.read_only_reason}.")

    def _removed_by_delete(self, memory_id: str) -> list[Change]:
        """The records the last delete of memory_id removed outright and that are still gone
        (a markdown block, a record of a store with no soft delete, a copy)."""
        entry = self.store._journal.last_with(("delete", "restore"), memory_id)
        if entry is None or entry.operation != "delete":
            return []
        return [  # backwards, as undo would: lines go back above the ones removed after them
            Change(c.record, None, c.before)
            for c in reversed(self.store._journal.changes(entry.seq))
            if c.after is None and c.before is not None and purge_step(c.before) is None and not self._exists(c.record)
        ]

    def _gone(self, record_id: str) -> bool:
        """Whether a record no longer exists (one that cannot be read counts as existing)."""
        try:
            return not self._exists(record_id)
        except StoreError:
            return False

    def _exists(self, record_id: str) -> bool:
        try:
            return self.store.source_for(record_id).read_record(record_id) is not None
        except NotFoundError:
            return False

    # -- applying ----------------------------------------------------------------------------

    def _prepare(self, changes: list[Change]) -> None:
        """Every source the step writes readies its writers first: one that cannot write refuses
        here, before anything (the journal's intent included) is written."""
        self._route(changes)
        prepare_writes(changes)

    def _route(self, changes: list[Change]) -> None:
        """A change read back from the journal (undo, redo) is routed to its writer, once."""
        for change in changes:
            if change.writer is None:
                change.writer = self.store.writer_for(change.record)

    def _in_one_transaction(self, changes: list[Change], entry: Callable[[Any, list[Change]], int]
                            ) -> tuple[int, list[Change]] | None:
        """A step whose every record one writer writes in the journal's own database (memory.db):
        its records and its journal entry (entry(conn, applied) -> seq) written in one transaction,
        set-based (write_records), so that it is all there or none of it, no intent to recover and
        no rehearsal needed. None (nothing written) for any other step."""
        self._route(changes)
        writer = changes[0].writer
        if not hasattr(writer, "write_records") or any(c.writer is not writer for c in changes) \
                or not self.store._journal.shares(writer):
            return None
        seqs: list[int] = []
        try:
            applied = writer.write_records(changes, then=lambda conn, applied: seqs.append(entry(conn, applied)))
        except Exception as exc:
            raise _failed_write(changes[0].record, exc) from (exc if not isinstance(exc, StoreError) else None)
        return seqs[0], applied

    def _apply(self, changes: list[Change]) -> list[Change]:
        """Write each change (a writer's run of several at once where it writes many in one
        transaction, write_records: all or none of the run); on failure revert those already
        written, then re-raise."""
        applied: list[Change] = []
        failing = ""
        try:
            for writer, run in writer_runs(changes):
                if len(run) > 1 and hasattr(writer, "write_records"):
                    failing = run[0].record
                    applied += writer.write_records(run)
                    continue
                for change in run:
                    failing = change.record
                    actual = writer.write_record(change.record, change.before, change.after)
                    applied.append(Change(change.record, change.before, actual, writer))
        except Exception as exc:  # a conflict, or an OS or library error mid-way: all-or-nothing
            stuck = self._revert(applied)
            error = _failed_write(failing, exc)
            if stuck:
                error = StoreError(
                    f"{error} Putting back {', '.join(stuck)} failed as well; the step stays in the journal "
                    "as unfinished and is undone the next time the store is opened."
                )
            error.unreverted = stuck  # type: ignore[attr-defined]
            raise error from (exc if error is not exc else None)
        return applied

    def _revert(self, applied: list[Change]) -> list[str]:
        """Put back what a failed step wrote; returns the records that could not be."""
        stuck = []
        for writer, run in writer_runs([Change(c.record, c.after, c.before, c.writer) for c in reversed(applied)]):
            if len(run) > 1 and hasattr(writer, "write_records"):
                try:
                    writer.write_records(run)
                    continue
                except Exception:  # put back one by one below: those that still fail are named
                    pass
            for change in run:
                try:
                    writer.write_record(change.record, change.before, change.after)
                except Exception:  # recovery on the next open finishes it: the intent is in the journal
                    stuck.append(change.record)
        return stuck

    def _run(
        self, operation: str, planned: list[_Planned], channel: str | None = "", purged: list[str] | None = None
    ) -> Outcome:
        """Apply every plan as one step and journal it as one entry. purged: the texts of the
        memories a purge removes (the journal is redacted of them, and so are the sources' files)."""
        changes = in_apply_order(_merged([c for p in planned for c in p.plan.changes]))
        if not changes:
            raise NothingToDoError("Nothing to change.")
        ids = [p.plan.new_id or p.id for p in planned]
        targets = list(dict.fromkeys([i for p in planned for i in (p.id, p.plan.new_id) if i]))
        if channel == "":
            channels = {p.channel for p in planned}
            channel = channels.pop() if len(channels) == 1 else None
        details = planned[0].details if len(planned) == 1 else {"count": len(planned), "each": [p.details for p in planned]}
        journal = self.store._journal
        step: dict[str, Any] = dict(channel=channel, details=details, actor=self.actor)
        at_once = None if purged is not None else self._in_one_transaction(
            changes, lambda conn, applied: journal.record_in(conn, operation, targets, applied, **step))
        purge = None
        if at_once is not None:
            seq, applied = at_once
        else:
            with step_lock(self.store.root, label=self.store.location):  # (recovery.py)
                self._prepare(changes)
                seq = journal.begin(operation, targets, changes, **step)
                applied = self._apply_or_fail(seq, changes)
                if purged is not None:
                    records = {*targets, *(c.record for c in applied)}
                    purge = Purge(seq, records, {t for t in purged if t}, self._gone)
                journal.finish(seq, applied, purge=purge)
        self.store.own_steps.append(seq)
        self._changed(targets, applied)
        notes = list(dict.fromkeys(n for p in planned for n in p.plan.notes))
        if purge is not None:
            notes += self._forget_purged(applied)
        return Outcome(operation, seq, ids, notes=notes, details=details)

    def _forget_purged(self, applied: list[Change]) -> list[str]:
        """What the purged records' text left in the sources' files beyond the records (the owner's
        log, index residue, freed pages, a -wal) and in the journal's file, removed; what could not
        be, as notes (the purge itself is done either way)."""
        by_writer: dict[int, tuple[Any, list[Change]]] = {}
        for change in applied:
            by_writer.setdefault(id(change.writer), (change.writer, []))[1].append(change)
        notes = []
        for writer, own in by_writer.values():
            if isinstance(writer, PurgeResidue):
                try:
                    notes += writer.forget_purged(own)
                except StoreError as exc:
                    label = getattr(writer, "label", "the store")
                    notes.append(f"The purge is done, but what {label} keeps beside the records could not all be "
                                 f"cleared: {exc}")
        try:
            notes += self.store._journal.settle()
        except StoreError as exc:
            notes.append(f"The purge is done, but the journal's file could not be compacted: {exc}")
        return notes

    def _changed(self, targets: list[str], changes: list[Change]) -> None:
        self.store.refresh_copies()
        # A scratchpad key is no memory: an event naming no memory says sessions and scratchpads may have changed.
        writers = {id(c.writer): c.writer for c in changes}
        writes_scratch = {key: isinstance(writer, ScratchWriter) for key, writer in writers.items()}  # one check each
        scratch = {c.record for c in changes if writes_scratch[id(c.writer)] and c.writer.is_scratch_record(c.record)}
        ids = tuple(i for i in dict.fromkeys([*targets, *(c.record for c in changes)]) if i not in scratch)
        self.store.notify(StoreEvent(ids, journal=True))


def scratch_value(text: str) -> Any:
    """A scratchpad value as a person typed it: the JSON value when the text parses as JSON
    (NaN and Infinity are no JSON), else the text itself (a string)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return text


def _no_constant(name: str) -> Any:
    raise ValueError(name)


def _scratch_value(source: ScratchWriter, snapshot: Snapshot | None) -> str | None:
    return source.scratch_entry(snapshot).value if snapshot is not None else None


def _failed_write(record: str, exc: Exception) -> StoreError:
    """What the user reads of a write that failed once the step's other writes are put back. A
    store file that refused (damaged, locked, read-only) keeps its class: the input's fault, not ours."""
    if isinstance(exc, StoreError) and not isinstance(exc, (StoreFileError, UnreadableStoreError)):
        return exc  # a conflict, a refusal: they say what happened themselves
    kind = type(exc) if isinstance(exc, StoreError) else StoreError
    return kind(f"Writing {record} failed ({str(exc).rstrip('.')}); every copy was left as it was.")


def _merged(changes: list[Change]) -> list[Change]:
    """The changes of several plans as one list: a record two plans change the same way is
    written once; two different changes to one record cannot be one step."""
    seen: dict[str, Change] = {}
    out = []
    for change in changes:
        earlier = seen.get(change.record)
        if earlier is None:
            seen[change.record] = change
            out.append(change)
        elif earlier.before != change.before or earlier.after != change.after:
            raise UnsupportedError(
                f"Two of the selected memories change {change.record} differently; curate them one at a time."
            )
    return out


def _at_revision(memory: Memory, memory_id: str, expected_revision: str | None) -> Memory:
    if expected_revision and memory.revision and memory.revision != expected_revision:
        raise ConflictError(
            f"{memory_id} changed since it was read (revision {expected_revision} -> "
            f"{memory.revision}); nothing was written. Reload and try again."
        )
    return memory


def _as_list(ids: Ids) -> list[str]:
    return [ids] if isinstance(ids, str) else list(ids)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value.value if hasattr(value, "value") else value
