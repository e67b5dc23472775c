"""The native workspace as one source: memory.db, vectors/ and workspace markdown.

A memory agents write through Mnemoscope can live in up to three copies: its
memory.db row (the memory itself), a vector record in the ``memories``
collection (a *mirror*, flagged ``mnemoscope_mirror``) and a markdown block in
the file named by the row's ``md_file``. This module owns that relation: it
lists each memory once (copies hidden), answers a copy's id with the memory it
copies, and plans every change so that it reaches every copy. Vector records
and markdown blocks that copy nothing are memories of their own, planned by
their part. It also compares the copies with their rows and plans the repairs
of what differs (copies/).

Ids: ``m-…`` rows, ``vec:<collection>:<id>`` vector records,
``md:<file>:<key>`` markdown blocks (see markdown/blocks.py: keyed by content, so
stable when lines move).
"""

from __future__ import annotations

import copy
import posixpath
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..embedders.base import Embedder
from ..errors import NotFoundError, StoreFileError, UnreadableStoreError, UnsupportedError
from ..model import Entity, Kind, Memory, Relation, ScratchEntry, Session, Turn
from ..query import MemoryQuery
from ..salience import PromotionThresholds
from ..source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    REEMBED,
    REINFORCE,
    RESTORE,
    Capabilities,
    Change,
    Plan,
    PlanContext,
    RowHead,
    Snapshot,
    counts_by_columns,
    merged_page,
    prepare_writes,
    revisions_of,
    summed,
)
from .chroma.records import (
    MIRROR_KEY,
    NATIVE_COLLECTION,
    STALE_KEY,
    memory_metadata,
    record_id_for,
    with_metadata,
)
from .markdown.blocks import Block
from .markdown.files import MEMORY_FILE, daily_date, inside
from .workspace_vectors import VECTORS_DIR, WorkspaceVectors, unreadable_folder

if TYPE_CHECKING:  # memory.db's reader loads SQLAlchemy, Chroma's chromadb, markdown's markdown-it: each only where its part is
    from ..consistency_report import Progress, Report
    from .chroma.local import ChromaSource
    from .copies.repair import RepairPlan
    from .db.tables import NativeDb
    from .markdown.source import MarkdownSource


class NativeWorkspace:
    """memory.db (or the same tables on PostgreSQL), a Chroma directory and workspace markdown, any
    of them absent."""

    format = "mnemoscope"
    label = "Mnemoscope workspace"

    def __init__(
        self,
        root: Path,
        db: NativeDb | None = None,
        vectors: ChromaSource | WorkspaceVectors | None = None,
        markdown: MarkdownSource | None = None,
    ) -> None:
        self.root = root if isinstance(root, Path) else Path(root)
        self.db = db
        # A local vectors/ beside memory.db or markdown costs its own copies only when it cannot be
        # read (workspace_vectors.py), one open_store found no Chroma directory in (a file, a folder
        # it cannot list) too; alone, or a server, its failures are the store's.
        others = db is not None or markdown is not None
        if vectors is None and others:
            fault = unreadable_folder(self.root)
            vectors = WorkspaceVectors.unreadable(self.root / VECTORS_DIR, fault) if fault else None
        elif others and vectors is not None and hasattr(vectors, "files"):  # (a local ChromaSource)
            vectors = vectors if isinstance(vectors, WorkspaceVectors) else WorkspaceVectors(vectors.root, vectors)
        self.vectors = vectors
        self.markdown = markdown
        if isinstance(vectors, WorkspaceVectors) and vectors.fault and not (db or (markdown and markdown.files())):
            raise UnreadableStoreError(vectors.fault)  # nothing else to read: the folder's own message
        self.parts: list[Any] = [p for p in (db, vectors, markdown) if p is not None]
        self.kind = self.parts[0].kind
        if vectors is not None:
            vectors.keep_writes_inside(self.root)
        self.refresh_copies()

    @property
    def kinds(self) -> list[Kind]:
        return [p.kind for p in self.parts]

    def close(self) -> None:
        for part in self.parts:
            part.close()

    def refresh_copies(self) -> None:
        """Vector and markdown copies of memory.db memories are not listed twice."""
        if self.db is None:
            return
        if self.vectors is not None:
            self.vectors.hide_mirrors()
        if self.markdown is not None:
            self.markdown.set_mirrors(set(self.db.memories_with_markdown_copies()))

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        if record_id is not None:
            return self.part_for(self.canonical_id(record_id)).capabilities()
        caps = [p.capabilities() for p in self.parts]
        return Capabilities(
            read_only=all(c.read_only for c in caps),
            read_only_reason="; ".join(c.read_only_reason for c in caps if c.read_only_reason),
            editable_fields=tuple(dict.fromkeys(f for c in caps for f in c.editable_fields)),
            can_promote=any(c.can_promote for c in caps),
            can_soft_delete=any(c.can_soft_delete for c in caps),
            can_reinforce=any(c.can_reinforce for c in caps),
            keyword_search=any(c.keyword_search for c in caps),
            vector_search=any(c.vector_search for c in caps),
            sessions=self.db is not None,
            scratchpad=self.db is not None,
            graph=self.db is not None,
            reembed=any(c.reembed for c in caps),
        )

    def change_token(self) -> str:
        return "|".join(p.change_token() for p in self.parts)

    def problems(self) -> list[str]:
        return [p for part in self.parts for p in part.problems()]

    def describe(self) -> dict[str, Any]:
        """What `info` shows of the workspace beyond the counts."""
        out: dict[str, Any] = {}
        if self.db is not None:
            out["schema_version"] = self.db.schema_version
            out["tables"] = self.db.table_counts()
        if self.vectors is not None:
            out["collections"] = [
                {"name": n, "count": self.vectors.record_count(n), **self.vectors.embedding_function_info(n)}
                for n in self.vectors.collections()
            ]
        if self.markdown is not None:
            out["markdown_files"] = self.markdown.files()
        return out

    # -- reading ---------------------------------------------------------------------------

    def count(self, query: MemoryQuery) -> int:
        return sum(p.count(query) for p in self.parts)

    seeks = True
    orders_by_effective_salience = True  # each part does, or merged_page sorts its memories

    def page(self, query: MemoryQuery, limit: int, offset: int = 0, after: Memory | None = None) -> list[Memory]:
        return merged_page(self.parts, query, limit, offset, after)

    def get(self, memory_id: str) -> Memory | None:
        memory_id = self.canonical_id(memory_id)
        return self.part_for(memory_id).get(memory_id) if self.owns(memory_id) else None

    def revisions(self, ids: Sequence[str]) -> dict[str, str]:
        """The revision of each memory of ids, each part asked for its own ids at once."""
        wanted: dict[int, list[str]] = {}
        for memory_id in ids:
            for n, part in enumerate(self.parts):
                if part.owns(memory_id):
                    wanted.setdefault(n, []).append(memory_id)
                    break
        return {k: v for n, some in wanted.items() for k, v in revisions_of(self.parts[n], some).items()}

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return summed(p.counts_by(column, query) for p in self.parts)

    def counts_by_columns(self, columns: Sequence[str], query: MemoryQuery) -> dict[str, dict[str, int]]:
        per_part = [counts_by_columns(p, columns, query) for p in self.parts]
        return {column: summed(counts[column] for counts in per_part) for column in columns}

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        return summed(p.bin_counts(query, bin_format, group_by) for p in self.parts)

    def keyword_lists(self, text: str, query: MemoryQuery, k: int) -> dict[str, list[Memory]]:
        """One ranked list per part: FTS5 ranks are not comparable with term counts."""
        return {p.label: p.keyword_search(text, query, k) for p in self.parts}

    def keyword_search(self, text: str, query: MemoryQuery, k: int) -> list[Memory]:
        return [m for ranked in self.keyword_lists(text, query, k).values() for m in ranked][:k]

    # -- ids and copies --------------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return any(p.owns(record_id) for p in self.parts)

    def part_for(self, record_id: str) -> Any:
        for part in self.parts:
            if part.owns(record_id):
                return part
        raise NotFoundError(f"No memory {record_id} in {self.root} (no store holds that kind).")

    def canonical_id(self, record_id: str) -> str:
        """The memory a copy belongs to: a mirror vector or markdown block names its memory.db row."""
        if self.db is None or not record_id.startswith(("vec:", "md:")):
            return record_id
        if self.vectors is not None and record_id.startswith(f"vec:{NATIVE_COLLECTION}:"):
            snap = self.vectors.read_record(record_id) if self.vectors.owns(record_id) else None
            if snap is not None and snap["metadata"].get(MIRROR_KEY) and self.db.read_record(snap["id"]):
                return str(snap["id"])
        if self.markdown is not None and record_id.startswith("md:"):
            block = self.markdown.block_for(record_id)
            if block is not None:
                owner = self.db.memory_with_markdown_copy(block.path, block.content)
                if owner is not None:
                    return owner
        return record_id

    def copies(self, memory_id: str) -> list[dict[str, Any]]:
        """Where a memory.db memory is also kept, and whether each copy is current."""
        row = self.db.read_record(memory_id) if self.db is not None and self.db.owns(memory_id) else None
        if row is None:
            return []
        out: list[dict[str, Any]] = []
        vector = self._vector_copy(memory_id)
        if vector is not None:
            out.append({"kind": "chroma", "record": vector[0], "state": row["vector_state"]})
        elif (fault := self._unreadable_vector_copy(row)) is not None:
            out.append({"kind": "chroma", "record": record_id_for(NATIVE_COLLECTION, memory_id), "state": "unreadable",
                        "reason": fault})
        if row.get("md_file"):
            unreadable = (self.markdown.unreadable().get(posixpath.normpath(row["md_file"]))
                          if self.markdown is not None else None)
            block = self._markdown_copy(row) if unreadable is None else None
            if unreadable is not None:
                out.append({"kind": "markdown", "record": None, "file": row["md_file"], "state": "unreadable",
                            "reason": unreadable})
            elif block is not None:
                out.append({"kind": "markdown", "record": block.record_id, "lines": [block.line, block.end]})
            else:
                state = "missing" if self._md_file_inside(row) else "outside"
                out.append({"kind": "markdown", "record": None, "file": row["md_file"], "state": state})
        return out

    def _vector_copy(self, memory_id: str) -> tuple[str, Snapshot] | None:
        if self.vectors is None or NATIVE_COLLECTION not in self.vectors.collections():
            return None
        rid = record_id_for(NATIVE_COLLECTION, memory_id)
        snap = self.vectors.read_record(rid)
        return (rid, snap) if snap is not None else None

    def _unreadable_vector_copy(self, row: Snapshot) -> str | None:
        """Why the row's vector copy cannot be read, when it has one (its vector_state says so) and
        vectors/ cannot be read; else None."""
        fault = getattr(self.vectors, "fault", "")
        return str(fault) if fault and row.get("vector_state") not in (None, "none") else None

    def _writable_vector_copy(self, memory_id: str, row: Snapshot) -> tuple[str, Snapshot] | None:
        """The row's vector copy to plan a change to; StoreFileError, before anything is written,
        when it has one that cannot be read (a step would leave it out of step with the row)."""
        vector = self._vector_copy(memory_id)
        if vector is None and (fault := self._unreadable_vector_copy(row)) is not None:
            raise StoreFileError(f"{memory_id} has a vector copy in {VECTORS_DIR}/, which cannot be read now "
                                 f"({fault.rstrip('.')}); nothing was written.")
        return vector

    def _markdown_copy(self, row: Snapshot) -> Block | None:
        """The row's block in the file its md_file names; none when that file is outside the workspace
        (md_file is data: it never takes a read or a write elsewhere)."""
        if self.markdown is None or not self._md_file_inside(row):
            return None
        return self.markdown.find_copy(row["md_file"], row["content"])

    def _md_file_inside(self, row: Snapshot) -> bool:
        md_file = row.get("md_file")
        return isinstance(md_file, str) and inside(self.root, md_file) is not None

    # -- the write primitive ------------------------------------------------------------------

    def read_record(self, record_id: str) -> Snapshot | None:
        return self.part_for(record_id).read_record(record_id)

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        return self.part_for(record_id).write_record(record_id, expected, new)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        prepare_writes(_written_by(list(changes), self.part_for))

    # -- planning ------------------------------------------------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        part = self.part_for(memory.id)
        return self._with_copies(operation, memory.id, part, part.plan(operation, memory, fields, context), fields,
                                 context)

    def plan_many(
        self, operation: str, memories: Sequence[Memory], fields: dict[str, Any], context: PlanContext
    ) -> list[Plan]:
        """plan() of each memory; memory.db's rows read in one query."""
        db_ones = [m for m in memories if self.db is not None and self.part_for(m.id) is self.db]
        if not db_ones or self.db is None or operation in (PROMOTE, PURGE):
            return [self.plan(operation, m, fields, context) for m in memories]
        planned = dict(zip((m.id for m in db_ones), self.db.plan_many(operation, db_ones, fields, context), strict=True))
        return [
            self._with_copies(operation, m.id, self.db, planned[m.id], fields, context) if m.id in planned
            else self.plan(operation, m, fields, context)
            for m in memories
        ]

    def plan_rows(self, operation: str, ids: Sequence[str], context: PlanContext) -> list[tuple[RowHead, Plan]] | None:
        """A bulk step on memory.db rows planned from the rows alone (see NativeChanges.plan_rows),
        with their copies' changes; None where it does not apply (an id that names a copy)."""
        if self.db is None or not all(self.part_for(i) is self.db for i in ids):
            return None
        planned = self.db.plan_rows(operation, ids, context)
        if planned is None:
            return None
        if self.vectors is None and self.markdown is None:  # no copies: each row's change alone
            for _head, plan in planned:
                _written_by(plan.changes, lambda _record: self.db)
            return planned
        return [(head, self._with_copies(operation, head.id, self.db, plan, {}, context)) for head, plan in planned]

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """get() of each id held here (a copy's id finds its memory), memory.db's in one query."""
        canonical = {memory_id: self.canonical_id(memory_id) for memory_id in memory_ids}
        rows = [c for c in canonical.values() if self.db is not None and self.db.owns(c)]
        found = self.db.get_many(rows) if self.db is not None and rows else {}
        out = {}
        for memory_id, wanted in canonical.items():
            memory = found.get(wanted) if wanted in found or wanted in rows else self.get(memory_id)
            if memory is not None:
                out[memory_id] = memory
        return out

    def _with_copies(
        self, operation: str, memory_id: str, part: Any, plan: Plan, fields: dict[str, Any], context: PlanContext
    ) -> Plan:
        """plan, its changes naming their writer, with the changes to the memory's vector and
        markdown copies where it is a memory.db memory."""
        _written_by(plan.changes, lambda _record: part)
        if part is not self.db or not plan.changes:
            return plan
        # the memory's row as planned from; a promotion leaves it as it is and plans its copy
        row = next((c.before for c in plan.changes if c.record == memory_id), None) or self.db.read_record(memory_id)
        assert row is not None
        vector = self._writable_vector_copy(memory_id, row)
        block = self._markdown_copy(row)
        own: Any = plan.changes[0]  # this memory's row change (a promotion's: the copy's)
        if operation == EDIT:
            plan.changes += self._edit_copies(own.after, vector, block, "content" in fields, context)
        elif operation in (DELETE, RESTORE, REINFORCE):
            if vector is not None:
                changes = {k: own.after[k] for k in ("status", "updated_at", "access_count", "last_accessed")}
                plan.changes.append(Change(vector[0], vector[1], with_metadata(vector[1], **changes), self.vectors))
            if operation == DELETE and block is not None:
                plan.changes.append(Change(block.record_id, block.snapshot(), None, self.markdown))
        elif operation == PURGE:
            if vector is not None:
                plan.changes.append(Change(vector[0], vector[1], None, self.vectors))
            if block is not None:
                plan.changes.append(Change(block.record_id, block.snapshot(), None, self.markdown))
        elif operation == REEMBED and vector is not None:
            new_vector = copy.deepcopy(vector[1])
            new_vector["document"] = row["content"]
            new_vector["metadata"].pop(STALE_KEY, None)
            plan.changes.append(Change(vector[0], vector[1], new_vector, self.vectors))
        elif operation == PROMOTE:
            plan.changes += self._promote_copies(plan, row, vector, block)
        return plan

    def _edit_copies(
        self,
        new_row: Snapshot,
        vector: tuple[str, Snapshot] | None,
        block: Block | None,
        content_changed: bool,
        context: PlanContext,
    ) -> list[Change]:
        changes = []
        if vector is not None:
            rid, vsnap = vector
            new_vector = copy.deepcopy(vsnap)
            new_vector["document"] = new_row["content"]
            stale = bool(vsnap["metadata"].get(STALE_KEY))
            new_vector["metadata"] = memory_metadata(new_row)
            if content_changed:
                embedding = context.embed(new_row["content"])
                if embedding is None:
                    stale = True
                else:
                    new_vector["embedding"], stale = embedding, False
            if stale:
                new_vector["metadata"][STALE_KEY] = True
            new_row["vector_state"] = "stale" if stale else "fresh"
            changes.append(Change(rid, vsnap, new_vector, self.vectors))
        if block is not None and content_changed:
            markdown = self.markdown
            assert markdown is not None
            changes += _written_by(markdown.plan_edit(block.record_id, block.snapshot(), new_row["content"]).changes,
                                   lambda _record: markdown)
        return changes

    def _promote_copies(
        self, plan: Plan, row: Snapshot, vector: tuple[str, Snapshot] | None, block: Block | None
    ) -> list[Change]:
        """The promoted row's own copies: a daily-log entry is copied into MEMORY.md (the entry
        stays, as the original row does) and the vector is mirrored under the new id."""
        promoted = plan.changes[0].after
        assert promoted is not None
        changes = []
        promoted["md_file"] = None
        if block is not None and daily_date(block.path) is not None:
            markdown = self.markdown
            assert markdown is not None
            added = markdown.plan_add_to_memory_file(row["content"])
            if added.changes:
                changes += _written_by(added.changes, lambda _record: markdown)
                promoted["md_file"] = MEMORY_FILE
            else:
                plan.notes.append(f"{MEMORY_FILE} already held it; no second bullet was written.")
        if vector is not None:
            promoted_vector = copy.deepcopy(vector[1])
            promoted_vector["id"] = promoted["id"]
            promoted_vector["metadata"] = {**memory_metadata(promoted), MIRROR_KEY: True}
            changes.append(Change(record_id_for(NATIVE_COLLECTION, promoted["id"]), None, promoted_vector, self.vectors))
        return changes

    def stale_ids(self) -> list[str]:
        """Memories whose vector no longer matches their text."""
        ids = self.db.stale_vector_ids() if self.db is not None else []
        return ids + (self.vectors.stale_record_ids() if self.vectors is not None else [])

    # -- its copies compared and repaired (copies/) ------------------------------------------------

    def check_copies(
        self,
        embedder: Embedder | None = None,
        progress: Progress | None = None,
        *,
        default_embedder: Callable[[], Embedder | None] = lambda: None,
    ) -> Report:
        """Every memory row against its vector record, markdown bullet and full-text entry: what
        differs, by kind (copies/check.py). embedder: what recomputes vectors to find stale ones
        (default_embedder() when none is given, asked only where there are vectors)."""
        from .copies.check import check_copies

        return check_copies(self, embedder, progress, default_embedder=default_embedder)

    def plan_repairs(self, report: Report, kinds: Sequence[str], embedder: Embedder | None) -> list[RepairPlan]:
        """The safe repairs of report's findings of these kinds, planned against the copies as they
        are now: one plan per memory, each change naming the part that writes it
        (copies/repair.py). embedder: what embeds the vectors to add or re-embed."""
        from .copies.repair import plan_repairs

        return plan_repairs(self, report, kinds, embedder)

    # -- what agents write (not audited: the agent is the owner) --------------------------------

    def add_memory(self, content: str, *, embedder: Embedder | None = None, **fields: Any) -> str:
        """One memory.db row, and its vector copy when the workspace keeps vectors and an
        embedder runs here (else the row says it has none)."""
        if self.db is None:
            raise NotFoundError(f"{self.root} has no memory.db to add memories to.")
        mirror = self.vectors is not None and not getattr(self.vectors, "fault", "") and embedder is not None
        row = self.db.memory_row(content, **{**fields, "vector_state": "fresh" if mirror else "none"})
        self.db.insert_memory_rows([row])
        if mirror:
            assert self.vectors is not None and embedder is not None
            self.vectors.add_records(
                NATIVE_COLLECTION, [row["id"]], [content], [memory_metadata(row)], embedder.embed([content])
            )
        return str(row["id"])

    def add_memory_rows(self, rows: Sequence[dict[str, Any]], embedder: Embedder | None) -> None:
        """Bulk insert of memory_row() rows (import, demo), with their vector copies: the vectors
        first, so that a process killed in between leaves no row without its vector (a re-run of
        an import adds the rows, whose ids it derives from its keys, and finds their vectors there)."""
        if self.db is None:
            raise NotFoundError(f"{self.root} has no memory.db to add memories to.")
        if rows and self.vectors is not None and embedder is not None:
            self.vectors.add_records(
                NATIVE_COLLECTION,
                [r["id"] for r in rows],
                [r["content"] for r in rows],
                [memory_metadata(r) for r in rows],
                embedder.embed([r["content"] for r in rows]),
            )
        self.db.insert_memory_rows(rows)
        self.refresh_copies()

    # -- sessions, scratchpad, graph ------------------------------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        return self.db.sessions(channels) if self.db is not None else []

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        return self.db.turns(session_id, limit, offset) if self.db is not None else []

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        return self.db.turn_bin_counts(bin_format, since, until) if self.db is not None else {}

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return self.db.scratch_entries(session_id) if self.db is not None else []

    # A scratchpad key is a memory.db row: its record id routes to the db part like a memory's.
    scratch_note = ""

    def scratch_record(self, session_id: str, key: str) -> str:
        return self._scratch_db().scratch_record(session_id, key)

    def is_scratch_record(self, record_id: str) -> bool:
        return self.db is not None and self.db.is_scratch_record(record_id)

    def scratch_snapshot(self, current: Snapshot | None, session_id: str, key: str, value: Any, now: str) -> Snapshot:
        return self._scratch_db().scratch_snapshot(current, session_id, key, value, now)

    def scratch_entry(self, snapshot: Snapshot) -> ScratchEntry:
        return self._scratch_db().scratch_entry(snapshot)

    def _scratch_db(self) -> NativeDb:
        if self.db is None:
            raise UnsupportedError(f"{self.root} has no memory.db, so no scratchpad to write.")
        return self.db

    def entities(self, channels: Sequence[str] = ()) -> list[Entity]:
        return self.db.entities(channels) if self.db is not None else []

    def entity_graph(self) -> NativeDb | None:
        return self.db

    def relations(
        self, types: Sequence[str] = (), channels: Sequence[str] = (), touching: str | None = None
    ) -> list[Relation]:
        return self.db.relations(types, channels, touching) if self.db is not None else []

    def promotion_candidates(self, thresholds: PromotionThresholds, limit: int) -> list[Memory]:
        return self.db.promotion_candidates(thresholds, limit) if self.db is not None else []

    def memories_about(self, entity_id: str, limit: int = 50) -> list[Memory]:
        return self.db.memories_about(entity_id, limit) if self.db is not None else []


def _written_by(changes: list[Change], writer_of: Callable[[str], Any]) -> list[Change]:
    """changes, each naming its writer (writer_of(record) where the planner named none)."""
    for change in changes:
        if change.writer is None:
            change.writer = writer_of(change.record)
    return changes
