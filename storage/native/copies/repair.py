"""plan_repairs(workspace, report, kinds, embedder): the safe repairs of a report's findings about
the workspace's copies, planned as record changes (before -> after) that each name the part that
writes them (Change.writer: memory.db, the vectors or the markdown files), for Curator.repair to
apply as one step. Each repair re-reads the records it changes: it fixes the workspace as it is
now, and a finding that no longer holds plans nothing."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...consistency_report import Report
from ...embedders.base import Embedder
from ...errors import NothingToDoError, UnsupportedError
from ...source import Change, Snapshot
from ..chroma.records import NATIVE_COLLECTION, STALE_KEY, memory_metadata, record_id_for
from ..db.fts import fts_rowid
from ..markdown.blocks import bullet_text
from ..markdown.blocks import record_id_for as block_id_for
from ..markdown.files import inside

if TYPE_CHECKING:
    from ..chroma.local import ChromaSource
    from ..db.tables import NativeDb
    from ..markdown.source import MarkdownSource
    from ..workspace import NativeWorkspace
    from ..workspace_vectors import WorkspaceVectors

_REEMBEDDED = {"missing-vector", "stale-vector"}
_VECTOR_KINDS = {"missing-vector", "stale-vector", "vector-metadata-mismatch", "orphan-vector"}


@dataclass
class RepairPlan:
    """The changes of one memory's repairs (memory_id None: a record that belongs to none)."""

    memory_id: str | None
    target: str
    kinds: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)


def plan_repairs(
    workspace: NativeWorkspace, report: Report, kinds: Sequence[str], embedder: Embedder | None
) -> list[RepairPlan]:
    """One plan per memory (or per record that belongs to none) of the report's findings of these
    kinds. NothingToDoError when the report holds none of them, or every one was repaired since;
    UnsupportedError without memory.db, or when vectors are to be embedded and no embedder runs."""
    by_memory: dict[str, dict[str, set[str]]] = {}  # target -> kind -> records
    for kind in kinds:
        for finding in report.items(kind):
            target = finding.memory_id or finding.record
            by_memory.setdefault(target, {}).setdefault(kind, set()).add(finding.record)
    if not by_memory:
        raise NothingToDoError("The report holds nothing of those kinds to repair.")
    db = workspace.db
    if db is None:
        raise UnsupportedError(f"{workspace.root} has no memory.db; these findings have no automatic repair.")
    if embedder is None and any(_REEMBEDDED & set(k) for k in by_memory.values()):
        raise UnsupportedError("No embedder runs offline for this store's vectors; missing and stale vectors "
                               "cannot be embedded here.")
    plans = []
    for target, found in by_memory.items():
        plan = RepairPlan(target if not target.startswith(("vec:", "fts:", "md:")) else None, target, sorted(found))
        row = db.read_record(plan.memory_id) if plan.memory_id else None
        vector_kinds = set(found) & _VECTOR_KINDS
        if vector_kinds and workspace.vectors is not None:
            plan.changes += _vector_changes(db, workspace.vectors, target, row, vector_kinds, embedder)
        if "missing-bullet" in found and row is not None:
            plan.changes += _bullet_changes(workspace, row)
        for record in sorted(found.get("text-mismatch", ())):
            plan.changes += _bullet_text_changes(workspace.markdown, record, row)
        for kind in ("stale-fts", "missing-fts"):
            for record in sorted(found.get(kind, ())):
                plan.changes += _fts_changes(db, record, row)
        if plan.changes:
            plans.append(plan)
    if not plans:
        raise NothingToDoError("Every finding of those kinds was already repaired; nothing changed.")
    return plans


def _vector_changes(db: NativeDb, vectors: ChromaSource | WorkspaceVectors, target: str, row: Snapshot | None,
                    kinds: set[str], embedder: Embedder | None) -> list[Change]:
    if row is None:  # an orphan vector: its row is gone
        snap = vectors.read_record(target) if "orphan-vector" in kinds else None
        return [Change(target, snap, None, vectors)] if snap is not None else []
    rid = record_id_for(NATIVE_COLLECTION, row["id"])
    snap = vectors.read_record(rid)
    after: Snapshot = copy.deepcopy(snap) if snap is not None else {
        "collection": NATIVE_COLLECTION, "id": row["id"], "document": row["content"], "embedding": None,
        "metadata": memory_metadata(row)}
    if "vector-metadata-mismatch" in kinds:
        stale = bool(after["metadata"].get(STALE_KEY))
        after["metadata"] = {**memory_metadata(row), **({STALE_KEY: True} if stale else {})}
    text_changed = after["document"] != row["content"]
    state = row["vector_state"]
    if kinds & _REEMBEDDED or (text_changed and embedder is not None) or after["embedding"] is None:
        if embedder is None:
            return []
        after["document"] = row["content"]
        after["embedding"] = embedder.embed([row["content"]])[0]
        after["metadata"].pop(STALE_KEY, None)
        state = "fresh"
    elif text_changed:  # the right text, with no embedder to match it: flagged, as an edit would
        after["document"] = row["content"]
        after["metadata"][STALE_KEY] = True
        state = "stale"
    changes = [Change(rid, snap, after, vectors)] if after != snap else []
    if state != row["vector_state"]:
        changes.append(Change(row["id"], row, {**row, "vector_state": state}, db))
    return changes


def _bullet_changes(workspace: NativeWorkspace, row: Snapshot) -> list[Change]:
    markdown, rel = workspace.markdown, row.get("md_file")
    if markdown is None or not isinstance(rel, str) or inside(workspace.root, rel) is None:
        return []
    if (workspace.root / rel).is_file() and markdown.find_copy(rel, row["content"]) is not None:
        return []
    line = markdown.append_bullet_position(rel)
    return [Change(block_id_for(rel, row["content"]), None,
                   {"path": rel, "line": line, "text": markdown.bullet_for(rel, row["content"])}, markdown)]


def _bullet_text_changes(markdown: MarkdownSource | None, record: str, row: Snapshot | None) -> list[Change]:
    """The bullet rewritten to say what its memory's row says, as an edit of the memory writes it."""
    snap = markdown.read_record(record) if markdown is not None else None
    if markdown is None or snap is None or row is None or snap.get("text") == bullet_text(row["content"]):
        return []
    changes = list(markdown.plan_edit(record, snap, row["content"]).changes)
    for change in changes:
        change.writer = markdown
    return changes


def _fts_changes(db: NativeDb, record: str, row: Snapshot | None) -> list[Change]:
    """The full-text entry indexed again from its row (dropped, where the row is gone)."""
    current = db.read_record(record)
    wanted = {"rowid": fts_rowid(record), "content": row["content"], "tags": row["tags"]} if row is not None else None
    return [Change(record, current, wanted, db)]
