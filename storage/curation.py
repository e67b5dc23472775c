"""Curation: edit, promote, delete, purge, restore, undo, redo.

Every operation is planned as a list of record changes (before -> after
snapshots) covering every copy of the memory (memory.db row, vector record,
markdown lines), applied in order, and journaled. If one write fails the ones
already applied are reverted, so a memory changes everywhere or nowhere.
Undo applies the same changes backwards; redo forwards again.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .errors import (
    ConflictError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    UnsupportedError,
)
from .journal import DONE, LOG, UNDONE, Change
from .model import GLOBAL_CHANNEL, AuditEntry, Kind, Layer, Memory, RelationType, Status
from .source import Snapshot
from .native.vectors import (
    MIRROR_KEY,
    NATIVE_COLLECTION,
    STALE_KEY,
    memory_metadata,
    record_id_for,
    split_record_id,
)
from .native.markdown import MEMORY_FILE, Block, bullet_text, daily_date, render_block
from .native.memory_db import RELATION_PREFIX, new_id
from .store import MemoryStore
from .timeutil import to_iso, utcnow


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


class Curator:
    def __init__(self, store: MemoryStore, actor: str = "user") -> None:
        self.store = store
        self.actor = actor

    # -- public operations --------------------------------------------------------------

    def edit(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        tags: Sequence[str] | None = None,
        layer: Layer | str | None = None,
        channel: str | None = None,
        salience: float | None = None,
        expected_revision: str | None = None,
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
        if "salience" in requested and not 0.0 <= float(requested["salience"]) <= 1.0:
            raise UnsupportedError("Salience must be between 0 and 1.")
        if "content" in requested and not str(requested["content"]).strip():
            raise UnsupportedError("Content cannot be empty; delete the memory instead.")
        memory = self._current(memory_id, expected_revision)
        caps = self.store.source_for(memory_id).capabilities()
        self._writable(memory, caps.read_only, caps.read_only_reason)
        refused = [f for f in requested if f not in caps.editable_fields]
        if refused and not caps.editable_fields:
            reason = getattr(self.store.source_for(memory_id), "read_only_reason", "")
            raise UnsupportedError(f"{memory_id} can be deleted but not edited" + (f": {reason}." if reason else "."))
        if refused:
            raise UnsupportedError(
                f"{memory_id} is a {memory.source.kind.value} memory: "
                f"{', '.join(refused)} cannot be stored there (editable: {', '.join(caps.editable_fields)})."
            )
        changes = self._plan_edit(memory, requested)
        if not changes:
            raise NothingToDoError(f"{memory_id} already has those values; nothing changed.")
        before = {f: _plain(getattr(memory, f)) for f in requested}
        after = {f: _plain(v) for f, v in requested.items()}
        return self._run(
            "edit", [memory_id], changes, memory.channel,
            {"fields": sorted(requested), "from": before, "to": after},
            ids=[memory_id],
        )

    def promote(
        self, memory_id: str, *, to: str = GLOBAL_CHANNEL, reason: str = "", expected_revision: str | None = None
    ) -> Outcome:
        memory = self._current(memory_id, expected_revision)
        source = self.store.source_for(memory_id)
        caps = source.capabilities()
        self._writable(memory, caps.read_only, caps.read_only_reason)
        if not caps.can_promote:
            raise UnsupportedError(
                f"{memory_id} is a {source.label} memory; {source.label} has no project and global "
                "channels to promote between (import it into a workspace to promote it there)."
            )
        if memory.status is not Status.ACTIVE:
            raise UnsupportedError(f"{memory_id} is {memory.status.value}; restore it before promoting.")
        check = self.store.settings.promotion.check(memory)
        details = {"from_channel": memory.channel, "to_channel": to, "reason": reason, **check}
        if memory.source.kind is Kind.MARKDOWN:
            changes, new_id_ = self._plan_markdown_promote(memory)
        else:
            if memory.channel == to:
                raise NothingToDoError(f"{memory_id} is already in channel {to}.")
            changes, new_id_ = self._plan_record_promote(memory, to, reason)
        notes = []
        if not check["all_met"]:
            unmet = [k for k, ok in check["met"].items() if not ok]
            notes.append(
                "Promoted by hand below the automatic thresholds ("
                + ", ".join(f"{k} {check['values'][k]} < {check['thresholds'][k]}" for k in unmet)
                + ")."
            )
        details["promoted_to"] = new_id_
        outcome = self._run("promote", [memory_id, new_id_], changes, to, details, ids=[new_id_])
        outcome.notes.extend(notes)
        return outcome

    def delete(self, memory_id: str, *, purge: bool = False, expected_revision: str | None = None) -> Outcome:
        memory = self._current(memory_id, expected_revision)
        source = self.store.source_for(memory_id)
        caps = source.capabilities()
        self._writable(memory, caps.read_only, caps.read_only_reason)
        if not purge and memory.status is Status.DELETED:
            raise NothingToDoError(f"{memory_id} is already deleted (use --purge to remove it for good).")
        if _is_foreign(source):
            # The owner keeps no deleted state: the record goes, the journal keeps it for undo/restore.
            changes = [Change(memory_id, self._read(memory_id), None)]
            outcome = self._run("delete", [memory_id], changes, memory.channel, {"content": memory.content}, ids=[memory_id])
            outcome.notes.append(f"{source.label} has no soft delete: the record was removed; undo or restore brings it back.")
            return outcome
        changes = self._plan_delete(memory, purge)
        op = "purge" if purge else "delete"
        return self._run(op, [memory_id], changes, memory.channel, {"content": memory.content}, ids=[memory_id])

    def reinforce(self, memory_id: str, *, expected_revision: str | None = None) -> Outcome:
        """One more access, last accessed now: what retrieval does, done by hand (pin)."""
        memory = self._current(memory_id, expected_revision)
        caps = self.store.source_for(memory_id).capabilities()
        self._writable(memory, caps.read_only, caps.read_only_reason)
        source = self.store.source_for(memory_id)
        if not caps.can_reinforce:
            raise UnsupportedError(f"{memory_id} is {source.label}, which keeps no access count to reinforce.")
        now = to_iso(utcnow())
        snap = self._read(memory_id)
        assert snap is not None
        if memory.source.kind is Kind.CHROMA:
            new = copy.deepcopy(snap)
            new["metadata"].update({"access_count": memory.access_count + 1, "last_accessed": now})
            changes = [Change(memory_id, snap, new)]
        else:
            new_row = {**snap, "access_count": snap["access_count"] + 1, "last_accessed": now}
            changes = [Change(memory_id, snap, new_row)]
            vector = self._vector_copy(memory_id)
            if vector is not None:
                rid, vsnap = vector
                new_vector = copy.deepcopy(vsnap)
                new_vector["metadata"].update({"access_count": new_row["access_count"], "last_accessed": now})
                changes.append(Change(rid, vsnap, new_vector))
        details = {"access_count": [memory.access_count, memory.access_count + 1]}
        return self._run("reinforce", [memory_id], changes, memory.channel, details, ids=[memory_id])

    def reembed(
        self, *, progress: Callable[[int, int], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> Outcome:
        """Recompute every vector marked stale with the store's embedder: one undoable step."""
        embedder = self.store.embedder()
        if embedder is None or self.store.chroma is None:
            raise UnsupportedError("No embedder runs offline for this store's vectors; nothing can be re-embedded.")
        targets = self.store.sqlite.stale_vector_ids() if self.store.sqlite is not None else []
        targets += self.store.chroma.stale_record_ids()
        if not targets:
            raise NothingToDoError("No vector is marked stale.")
        changes: list[Change] = []
        for start in range(0, len(targets), 64):
            if cancelled is not None and cancelled():
                raise NothingToDoError("Re-embedding cancelled; nothing was changed.")
            batch = targets[start : start + 64]
            planned = [self._plan_reembed(memory_id) for memory_id in batch]
            vectors = embedder.embed([text for _, text in planned])
            for (plan, _text), vector in zip(planned, vectors):
                for change in plan:
                    if change.after is not None and "embedding" in change.after:
                        change.after["embedding"] = vector
                changes.extend(plan)
            if progress is not None:
                progress(min(start + 64, len(targets)), len(targets))
        details = {"count": len(targets), "embedder": embedder.name}
        return self._run("reembed", targets, changes, None, details, ids=targets)

    def _plan_reembed(self, memory_id: str) -> tuple[list[Change], str]:
        if memory_id.startswith("vec:"):
            snap = self._read(memory_id)
            assert snap is not None
            new = copy.deepcopy(snap)
            new["metadata"].pop(STALE_KEY, None)
            text = snap["document"] or str(snap["metadata"].get("data", ""))
            return [Change(memory_id, snap, new)], text
        row = self._read(memory_id)
        assert row is not None
        changes = [Change(memory_id, row, {**row, "vector_state": "fresh"})]
        vector = self._vector_copy(memory_id)
        if vector is not None:
            rid, vsnap = vector
            new_vector = copy.deepcopy(vsnap)
            new_vector["document"] = row["content"]
            new_vector["metadata"].pop(STALE_KEY, None)
            changes.append(Change(rid, vsnap, new_vector))
        return changes, row["content"]

    def restore(self, memory_id: str) -> Outcome:
        source = self.store.source_for(memory_id)
        # A markdown id names a line, which after a delete holds the next memory.
        memory = None if source.kind is Kind.MARKDOWN else source.get(memory_id)
        if memory is not None and memory.status is not Status.ACTIVE:
            changes = self._plan_status(memory, Status.ACTIVE)
            changes += self._reinsert_removed_copies(memory_id)
            return self._run("restore", [memory_id], changes, memory.channel, {}, ids=[memory_id])
        # A markdown memory (or copy) that a delete removed from its file.
        entry = self.store.journal.last_with(("delete", "restore"), memory_id)
        if memory is None and entry is not None and entry.operation == "restore":
            raise NothingToDoError(f"{memory_id} was already restored (journal entry {entry.seq}).")
        if memory is None and entry is not None and self._reinsert_removed_copies(memory_id):
            changes = self._reinsert_removed_copies(memory_id)
            ids = [
                f"md:{c.after['path']}:{c.after['line']}" if c.record.startswith("md:") else c.record
                for c in changes
                if c.after
            ]
            return self._run("restore", [memory_id, *ids], changes, None, {"from_delete": entry.seq}, ids=ids)
        if memory is not None:
            raise NothingToDoError(f"{memory_id} is active; nothing to restore.")
        raise NotFoundError(f"No deleted memory {memory_id} to restore.")

    def undo(self) -> Outcome:
        entry = self.store.journal.next_to_undo()
        if entry is None:
            raise NothingToDoError("Nothing to undo.")
        changes = self.store.journal.changes(entry.seq)
        applied = self._apply([Change(c.record, c.after, c.before) for c in reversed(changes)])
        # Keep the snapshots as they now are on disk (markdown lines may have moved).
        reverted = [Change(a.record, a.after, a.before) for a in reversed(applied)]
        return self._log_replay("undo", entry, UNDONE, reverted)

    def redo(self) -> Outcome:
        entry = self.store.journal.next_to_redo()
        if entry is None:
            raise NothingToDoError("Nothing to redo.")
        applied = self._apply(self.store.journal.changes(entry.seq))
        return self._log_replay("redo", entry, DONE, applied)

    def _log_replay(self, verb: str, entry: AuditEntry, state: str, changes: list[Change]) -> Outcome:
        self.store.journal.set_state(entry.seq, state, changes)
        details = {"step": entry.seq, "operation": entry.operation}
        log = self.store.journal.record(
            verb, list(entry.targets), [], channel=entry.channel, details=details, actor=self.actor, state=LOG
        )
        self.store.refresh_copies()
        return Outcome(verb, log.seq, list(entry.targets), details=details)

    # -- planning -------------------------------------------------------------------------

    def _current(self, memory_id: str, expected_revision: str | None) -> Memory:
        memory = self.store.get(memory_id)
        if expected_revision and memory.revision and memory.revision != expected_revision:
            raise ConflictError(
                f"{memory_id} changed since it was read (revision {expected_revision} -> "
                f"{memory.revision}); nothing was written. Reload and try again."
            )
        return memory

    @staticmethod
    def _writable(memory: Memory, read_only: bool, reason: str) -> None:
        if read_only:
            raise ReadOnlyError(f"{memory.id} cannot be changed: {reason}.")

    def _read(self, record_id: str) -> Snapshot | None:
        return self.store.source_for(record_id).read_record(record_id)

    def _vector_copy(self, memory_id: str) -> tuple[str, Snapshot] | None:
        chroma = self.store.chroma
        if chroma is None or NATIVE_COLLECTION not in chroma.collections():
            return None
        rid = record_id_for(NATIVE_COLLECTION, memory_id)
        snap = chroma.read_record(rid)
        return (rid, snap) if snap is not None else None

    def _markdown_copy(self, row: Snapshot) -> Block | None:
        md = self.store.markdown
        if md is None or not row.get("md_file"):
            return None
        return md.find_copy(row["md_file"], row["content"])

    def _embed(self, text: str) -> list[float] | None:
        embedder = self.store.embedder()
        return embedder.embed([text])[0] if embedder is not None else None

    def _plan_edit(self, memory: Memory, requested: dict[str, Any]) -> list[Change]:
        now = to_iso(utcnow())
        kind = memory.source.kind
        source = self.store.source_for(memory.id)
        if hasattr(source, "edit_snapshot"):  # a foreign format that edits its own records
            snap = self._read(memory.id)
            assert snap is not None
            new = source.edit_snapshot(snap, requested, now)
            return [] if new == snap else [Change(memory.id, snap, new)]
        if kind is Kind.MARKDOWN:
            snap = self._read(memory.id)
            assert snap is not None
            new_text = render_block(snap["text"], requested["content"])
            if new_text == snap["text"]:
                return []
            return [Change(memory.id, snap, {**snap, "text": new_text})]
        if kind is Kind.CHROMA:
            snap = self._read(memory.id)
            assert snap is not None
            new = self._edited_vector(snap, requested, now)
            return [] if new == snap else [Change(memory.id, snap, new)]
        row = self._read(memory.id)
        assert row is not None
        new_row = dict(row)
        for name, value in requested.items():
            if name == "tags":
                new_row["tags"] = json.dumps(list(value), ensure_ascii=False)
            elif name == "layer":
                new_row["layer"] = Layer(value).value
            else:
                new_row[name] = value
        if all(new_row[k] == row[k] for k in row):
            return []
        new_row["updated_at"] = now
        changes = []
        vector = self._vector_copy(memory.id)
        if vector is not None:
            rid, vsnap = vector
            new_vector = self._mirror_snapshot(vsnap, new_row, content_changed="content" in requested)
            new_row["vector_state"] = "stale" if new_vector["metadata"].get(STALE_KEY) else "fresh"
            changes.append(Change(rid, vsnap, new_vector))
        block = self._markdown_copy(row)
        if block is not None and "content" in requested:
            changes.append(
                Change(block.record_id, block.snapshot(), {**block.snapshot(), "text": render_block(block.text, new_row["content"])})
            )
        return [Change(memory.id, row, new_row), *changes]

    def _mirror_snapshot(self, vsnap: Snapshot, row: Snapshot, content_changed: bool) -> Snapshot:
        new = copy.deepcopy(vsnap)
        new["document"] = row["content"]
        stale = bool(vsnap["metadata"].get(STALE_KEY))
        new["metadata"] = memory_metadata(row)
        if content_changed:
            vector = self._embed(row["content"])
            if vector is None:
                stale = True
            else:
                new["embedding"], stale = vector, False
        if stale:
            new["metadata"][STALE_KEY] = True
        return new

    def _edited_vector(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        new = copy.deepcopy(snap)
        meta = new["metadata"]
        for name, value in requested.items():
            if name == "content":
                if snap["document"] is None and "data" in meta:
                    meta["data"] = value  # mem0 keeps its text in metadata
                else:
                    new["document"] = value
                vector = self._embed(value)
                if vector is None:
                    meta[STALE_KEY] = True
                else:
                    new["embedding"] = vector
                    meta.pop(STALE_KEY, None)
            elif name == "tags":
                meta["tags"] = json.dumps(list(value), ensure_ascii=False)
            elif name == "layer":
                meta["layer"] = Layer(value).value
            else:
                meta[name] = value
        if new != snap:
            meta["updated_at"] = now
        return new

    def _plan_status(self, memory: Memory, status: Status) -> list[Change]:
        now = to_iso(utcnow())
        if memory.source.kind is Kind.CHROMA:
            snap = self._read(memory.id)
            assert snap is not None
            new = copy.deepcopy(snap)
            new["metadata"]["status"] = status.value
            new["metadata"]["updated_at"] = now
            return [Change(memory.id, snap, new)]
        row = self._read(memory.id)
        assert row is not None
        new_row = {**row, "status": status.value, "updated_at": now}
        changes = [Change(memory.id, row, new_row)]
        vector = self._vector_copy(memory.id)
        if vector is not None:
            rid, vsnap = vector
            new_vector = copy.deepcopy(vsnap)
            new_vector["metadata"]["status"] = status.value
            new_vector["metadata"]["updated_at"] = now
            changes.append(Change(rid, vsnap, new_vector))
        return changes

    def _plan_delete(self, memory: Memory, purge: bool) -> list[Change]:
        if memory.source.kind is Kind.MARKDOWN:
            snap = self._read(memory.id)
            return [Change(memory.id, snap, None)]
        if not purge:
            changes = self._plan_status(memory, Status.DELETED)
        elif memory.source.kind is Kind.CHROMA:
            return [Change(memory.id, self._read(memory.id), None)]
        else:
            changes = [Change(memory.id, self._read(memory.id), None)]
            vector = self._vector_copy(memory.id)
            if vector is not None:
                changes.append(Change(vector[0], vector[1], None))
            sqlite = self.store.sqlite
            assert sqlite is not None
            for relation in sqlite.relations(touching=memory.id):
                rid = RELATION_PREFIX + relation.id
                changes.append(Change(rid, sqlite.read_record(rid), None))
        if memory.source.kind is Kind.SQLITE:
            row = self._read(memory.id)
            block = self._markdown_copy(row) if row else None
            if block is not None:
                changes.append(Change(block.record_id, block.snapshot(), None))
        return changes

    def _reinsert_removed_copies(self, memory_id: str) -> list[Change]:
        entry = self.store.journal.last_with(("delete",), memory_id)
        if entry is None:
            return []
        return [
            Change(c.record, None, c.before)
            for c in self.store.journal.changes(entry.seq)
            if (c.record.startswith("md:") or _is_foreign(self.store.source_for(c.record)))
            and c.after is None
            and c.before is not None
        ]

    def _plan_markdown_promote(self, memory: Memory) -> tuple[list[Change], str]:
        md = self.store.markdown
        assert md is not None
        if memory.source.path == MEMORY_FILE:
            raise NothingToDoError(f"{memory.id} is already curated in {MEMORY_FILE}.")
        if daily_date(memory.source.path) is None and memory.channel == GLOBAL_CHANNEL:
            raise UnsupportedError(
                f"{memory.id} is in {memory.source.path}; only daily-log entries "
                "(memory/YYYY-MM-DD.md) or project sections are promoted to MEMORY.md."
            )
        snap = self._read(memory.id)
        assert snap is not None
        line = md.append_bullet_position(MEMORY_FILE)
        inserted = {"path": MEMORY_FILE, "line": line, "text": bullet_text(memory.content)}
        new_id_ = f"md:{MEMORY_FILE}:{line}"
        return [Change(memory.id, snap, None), Change(new_id_, None, inserted)], new_id_

    def _plan_record_promote(self, memory: Memory, to: str, reason: str) -> tuple[list[Change], str]:
        now = to_iso(utcnow())
        if memory.source.kind is Kind.CHROMA:
            name, _ = split_record_id(memory.id)
            snap = self._read(memory.id)
            assert snap is not None
            promoted_id = record_id_for(name, new_id("p"))
            new_snap = copy.deepcopy(snap)
            new_snap["id"] = split_record_id(promoted_id)[1]
            new_snap["metadata"].update(
                {"channel": to, "promoted_from": memory.id, "created_at": now, "updated_at": now}
            )
            archived = copy.deepcopy(snap)
            archived["metadata"].update({"status": Status.ARCHIVED.value, "updated_at": now})
            return [Change(promoted_id, None, new_snap), Change(memory.id, snap, archived)], promoted_id
        row = self._read(memory.id)
        assert row is not None
        promoted_id = new_id()
        new_row = {
            **row,
            "id": promoted_id,
            "channel": to,
            "promoted_from": memory.id,
            "created_at": now,
            "updated_at": now,
            "import_key": None,
            "metadata": json.dumps({**json.loads(row["metadata"] or "{}"), **({"promotion_reason": reason} if reason else {})}, sort_keys=True),
        }
        changes: list[Change] = []
        block = self._markdown_copy(row)
        if block is not None and daily_date(block.path) is not None:
            md = self.store.markdown
            assert md is not None
            line = md.append_bullet_position(MEMORY_FILE)
            changes.append(Change(block.record_id, block.snapshot(), None))
            changes.append(
                Change(f"md:{MEMORY_FILE}:{line}", None, {"path": MEMORY_FILE, "line": line, "text": bullet_text(row["content"])})
            )
            new_row["md_file"] = MEMORY_FILE
        elif block is None:
            new_row["md_file"] = None
        relation_id = new_id("r")
        relation = {
            "id": relation_id,
            "source_id": promoted_id,
            "target_id": memory.id,
            "type": RelationType.PROMOTED_FROM.value,
            "channel": to,
            "weight": 1.0,
            "created_at": now,
        }
        archived_row = {**row, "status": Status.ARCHIVED.value, "updated_at": now, "md_file": None if changes else row["md_file"]}
        changes = [
            Change(promoted_id, None, new_row),
            Change(RELATION_PREFIX + relation_id, None, relation),
            Change(memory.id, row, archived_row),
            *changes,
        ]
        vector = self._vector_copy(memory.id)
        if vector is not None:
            rid, vsnap = vector
            promoted_vector = copy.deepcopy(vsnap)
            promoted_vector["id"] = promoted_id
            promoted_vector["metadata"] = {**memory_metadata(new_row), MIRROR_KEY: True}
            archived_vector = copy.deepcopy(vsnap)
            archived_vector["metadata"]["status"] = Status.ARCHIVED.value
            archived_vector["metadata"]["updated_at"] = now
            changes.append(Change(record_id_for(NATIVE_COLLECTION, promoted_id), None, promoted_vector))
            changes.append(Change(rid, vsnap, archived_vector))
        return changes, promoted_id

    # -- applying ----------------------------------------------------------------------------

    def _apply(self, changes: list[Change]) -> list[Change]:
        """Write each change; on failure revert those already written, then re-raise."""
        applied: list[Change] = []
        try:
            for change in changes:
                source = self.store.source_for(change.record)
                actual = source.write_record(change.record, change.before, change.after)
                applied.append(Change(change.record, change.before, actual))
        except StoreError:
            self._revert(applied)
            raise
        except Exception as exc:  # an OS or library error mid-way: still all-or-nothing
            self._revert(applied)
            raise StoreError(f"Writing {change.record} failed ({exc}); every copy was left as it was.") from exc
        return applied

    def _revert(self, applied: list[Change]) -> None:
        for change in reversed(applied):
            source = self.store.source_for(change.record)
            try:
                source.write_record(change.record, change.after, change.before)
            except Exception:  # best effort; the journal still records nothing for this step
                continue

    def _run(
        self,
        operation: str,
        targets: list[str],
        changes: list[Change],
        channel: str | None,
        details: dict[str, Any],
        ids: list[str],
    ) -> Outcome:
        applied = self._apply(changes)
        entry = self.store.journal.record(
            operation, targets, applied, channel=channel, details=details, actor=self.actor
        )
        self.store.refresh_copies()
        final_ids = [_current_id(i, applied) for i in ids]
        return Outcome(operation, entry.seq, final_ids, details=details)


def _is_foreign(source: Any) -> bool:
    """A store another tool owns, curated only the way that tool writes it."""
    return getattr(source, "format", "") not in ("mnemoscope", "chroma", "markdown")


def _current_id(memory_id: str, applied: list[Change]) -> str:
    """A markdown memory's id follows its first line, which a write may move."""
    if not memory_id.startswith("md:"):
        return memory_id
    for change in applied:
        if change.record == memory_id and change.after and "path" in change.after:
            return f"md:{change.after['path']}:{change.after['line']}"
    return memory_id


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value.value if hasattr(value, "value") else value
