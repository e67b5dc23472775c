"""Export a store (JSONL, markdown) and import any store into a native workspace."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import StoreError, UnsupportedError
from .formats import mnemoscope_export
from .lazy_page import LazyPage
from .model import OPTIONAL_FIELDS, Layer, Memory
from .opening import create_workspace, detect, finish_creation, open_store
from .query import MemoryQuery, Order
from .store import MemoryStore

if TYPE_CHECKING:
    from .credentials import Credentials

PAGE = 1000
EXPORT_PAGE = 5000  # rows per read of an export (a few MB held at a time)
IMPORT_BATCH = 5000  # memories per transaction of an import: a progress tick and a cancel point
ALL_STATUSES = MemoryQuery(statuses=(), order=Order.CREATED)

Progress = Callable[[int, int], None]

FIELDS_NOT_KEPT = "fields_not_kept"  # metadata: which of them an imported memory's source did not keep


def iter_memories(store: MemoryStore, query: MemoryQuery = ALL_STATUSES) -> Iterator[Memory]:
    """Every memory, fetched a page at a time (each page sought from the last one's last memory:
    as fast at the millionth as at the first)."""
    last: Memory | None = None
    while True:
        page = store.page(query, limit=PAGE, after=last)
        yield from page
        if len(page) < PAGE:
            return
        last = page[-1]


def iter_memory_dicts(store: MemoryStore, query: MemoryQuery = ALL_STATUSES) -> Iterator[dict[str, Any]]:
    """Every memory's to_dict(), a page at a time; rows a page can give as dicts directly
    (memory.db's) are not decoded into memories first."""
    last: Memory | None = None
    while True:
        page = store.page(query, limit=EXPORT_PAGE, after=last)
        yield from page.dicts() if isinstance(page, LazyPage) else (memory.to_dict() for memory in page)
        if len(page) < EXPORT_PAGE:
            return
        last = page[-1]


def export_jsonl(store: MemoryStore, out: TextIO, query: MemoryQuery = ALL_STATUSES) -> int:
    n = 0
    dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode
    write = out.write
    for memory in iter_memory_dicts(store, query):
        write(dumps(memory))
        write("\n")
        n += 1
    return n


def export_markdown(store: MemoryStore, out: TextIO, query: MemoryQuery = MemoryQuery(order=Order.CREATED)) -> int:
    """Active memories as a readable document: one section per channel, then layer. Each section
    is read by its own query and written as it is read: nothing is held but a page."""
    counts = store.counts(query)
    out.write(f"# Memory export of {store.root.name}\n")
    n = 0
    for channel in sorted(counts["channels"]):
        heading = f"\n## {channel}\n"
        for layer in sorted(counts["layers"]):
            section = dataclasses.replace(query, channels=(channel,), layers=(Layer(layer),))
            memories = iter_memories(store, section)
            first = next(memories, None)
            if first is None:
                continue
            out.write(f"{heading}\n### {layer}\n\n")
            heading = ""
            n += _markdown_items(itertools.chain((first,), memories), out)
    return n


EXPORT_FORMATS = ("jsonl", "csv", "markdown")
CSV_FIELDS = ("id", "channel", "layer", "status", "content", "created_at", "updated_at", "last_accessed",
              "access_count", "salience", "confidence", "tags")


def export_store(store: MemoryStore, out: TextIO, fmt: str, query: MemoryQuery) -> int:
    """The query's memories in fmt, written to out as they are read (a page at a time)."""
    if fmt == "markdown":
        return export_markdown(store, out, query)
    if fmt == "jsonl":
        return export_jsonl(store, out, query)
    if fmt == "csv":
        return _csv_of(iter_memory_dicts(store, query), out)
    raise UnsupportedError(f"Unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}.")


def export_memories(memories: Iterable[Memory], out: TextIO, fmt: str, title: str) -> int:
    """Given memories (a selection, a search's hits) as JSONL (the format 'mnemoscope import'
    reads back), CSV (one row each, CSV_FIELDS) or markdown (as export_markdown lays it out)."""
    if fmt == "jsonl":
        return export_jsonl_of(memories, out)
    if fmt == "csv":
        return _csv_of((memory.to_dict() for memory in memories), out)
    if fmt == "markdown":
        return _markdown_of(memories, out, title)
    raise UnsupportedError(f"Unknown export format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}.")


def export_jsonl_of(memories: Iterable[Memory], out: TextIO) -> int:
    n = 0
    dumps = json.JSONEncoder(ensure_ascii=False, default=str).encode
    write = out.write
    for memory in memories:
        write(dumps(memory.to_dict()))
        write("\n")
        n += 1
    return n


def _csv_of(memories: Iterable[dict[str, Any]], out: TextIO) -> int:
    """Memories given as their to_dict(), one CSV row each (CSV_FIELDS; tags joined by ';')."""
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    n = 0
    for row in memories:
        row["tags"] = ";".join(row["tags"])
        writer.writerow(row)
        n += 1
    return n


def _markdown_of(memories: Iterable[Memory], out: TextIO, title: str) -> int:
    """The memories under a heading per channel, then per layer, each with its id and date."""
    grouped: dict[str, dict[str, list[Memory]]] = {}
    for memory in memories:
        grouped.setdefault(memory.channel, {}).setdefault(memory.layer.value, []).append(memory)
    out.write(f"# Memory export of {title}\n")
    n = 0
    for channel in sorted(grouped):
        out.write(f"\n## {channel}\n")
        for layer in sorted(grouped[channel]):
            out.write(f"\n### {layer}\n\n")
            n += _markdown_items(grouped[channel][layer], out)
    return n


def _markdown_items(memories: Iterable[Memory], out: TextIO) -> int:
    n = 0
    for memory in memories:
        body = memory.content.replace("\n", "\n  ")
        out.write(f"- {body} <!-- {memory.id} {memory.created_at:%Y-%m-%d} -->\n")
        n += 1
    return n


@dataclass
class ImportSummary:
    imported: int = 0
    already_present: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    sessions: int = 0
    entities: int = 0
    relations: int = 0

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "imported": self.imported,
            "already_present": self.already_present,
            "skipped": self.skipped,
            "sessions": self.sessions,
            "entities": self.entities,
            "relations": self.relations,
        }


class ImportCancelled(StoreError):
    """Stopped between batches; what was imported stays, and a re-run continues."""


def import_store(
    src: Path | str, dest: Path | str, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
    *, vectors: str | None = None, credentials: Credentials | None = None,
) -> ImportSummary:
    """Copy every memory of src into the native workspace dest, with provenance. dest may be a
    server's URL (a PostgreSQL database, vectors on a Chroma server): its store is created
    there if it has none yet.

    Re-running is idempotent: each memory carries an import key (source path and
    original id) and keys already in dest are skipped.
    """
    src, dest = _resolved(src), _resolved(dest)
    if src == dest:
        raise UnsupportedError("Source and destination are the same store.")
    source = open_store(src, read_only=True, credentials=credentials)
    try:
        if isinstance(dest, str) or vectors:
            target = create_workspace(dest, vectors=vectors, credentials=credentials)
        else:
            target = _open_destination(dest)
        try:
            return _copy(source, target, progress, cancelled or (lambda: False))
        finally:
            target.close()
    finally:
        source.close()


def _resolved(target: Path | str) -> Path | str:
    """A path made absolute; a server's URL as it is."""
    return target if isinstance(target, str) and "://" in target else Path(target).expanduser().resolve()


def _open_destination(dest: Path) -> MemoryStore:
    if dest.is_dir():
        finish_creation(dest)  # (a run killed while it created dest)
    if dest.exists() and detect(dest):
        target = open_store(dest)
        if not target.has_memory_db:
            target.close()
            raise UnsupportedError(f"{dest} has no memory.db; import needs a native workspace (or a new folder).")
        return target
    return create_workspace(dest)


def _copy(
    source: MemoryStore, target: MemoryStore, progress: Progress | None, cancelled: Callable[[], bool]
) -> ImportSummary:
    sqlite = target
    summary = ImportSummary()
    total = source.count(ALL_STATUSES)
    origin = source.location
    vectors = bool(target.vector_sources()) and target.embedder() is not None
    done = 0
    batch: list[Memory] = []

    def flush() -> None:
        keys = [_import_key(origin, m) for m in batch]
        present = sqlite.existing_values("import_key", keys)
        taken = sqlite.existing_values("id", [m.id for m in batch])
        rows = []
        for memory, key in zip(batch, keys, strict=False):
            if key in present:
                summary.already_present += 1
                continue
            if not memory.content.strip():
                summary.skip("empty content")
                continue
            rows.append(_row(sqlite, memory, key, origin, keep_id=memory.id not in taken, vectors=vectors))
        if rows:
            target.add_memories(rows, batch=len(rows))
        summary.imported += len(rows)
        batch.clear()

    for memory in iter_memories(source):
        batch.append(memory)
        done += 1
        if len(batch) >= IMPORT_BATCH:
            flush()
            if progress:
                progress(done, total)
            if cancelled():
                target.refresh_copies()
                raise ImportCancelled(
                    f"Import cancelled after {summary.imported} new memories ({done} of {total} read); "
                    "run it again to continue — nothing is imported twice."
                )
    flush()
    if progress:
        progress(done, total)
    _copy_structure(source, target, summary)
    target.refresh_copies()
    return summary


def _format_of(memory: Memory) -> str:
    return memory.source.format or memory.source.kind.value


def _import_key(origin: str, memory: Memory) -> str:
    return f"{_format_of(memory)}:{origin}#{memory.id}"


def _row(sqlite: Any, memory: Memory, key: str, origin: str, keep_id: bool, vectors: bool) -> dict[str, Any]:
    metadata = dict(memory.metadata)
    restored = memory.source.format == mnemoscope_export.FORMAT  # our own export, read back
    if restored:
        # A restore, not a new import: the memory comes back as it was exported, its provenance too.
        imported_from = memory.provenance.imported_from
        was_row = mnemoscope_export.was_memory_db_row(memory)
        metadata.pop("exported_source", None)
    else:
        imported_from = f"{_format_of(memory)}:{origin}#{memory.id}"
        was_row = memory.source.kind.value in ("sqlite", "postgresql") and not memory.source.format
        metadata["import"] = {
            "format": _format_of(memory),
            "path": origin,
            "original_id": memory.id,
            "location": memory.source.location,
        }
    metadata.pop("md_file", None)
    metadata.pop("vector_state", None)
    not_kept = [name for name in OPTIONAL_FIELDS if getattr(memory, name) is None]
    if not_kept:  # memory.db starts them as it starts a new memory's, and says they were not the source's
        metadata[FIELDS_NOT_KEPT] = not_kept
    # Only memory.db memories keep their id; other tools' ids (lg:…, oai:…) get a native one, the
    # same at every run (a re-run of a killed import finds the vectors the killed run added).
    native_id = was_row and keep_id
    return sqlite.memory_row(
        memory.content,
        memory_id=memory.id if native_id else f"m-{hashlib.sha256(key.encode()).hexdigest()[:12]}",
        layer=memory.layer,
        channel=memory.channel,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
        last_accessed=memory.last_accessed,
        access_count=memory.access_count,
        salience=memory.salience,
        confidence=memory.confidence,
        conversations=memory.conversations,
        tags=memory.tags,
        metadata=metadata,
        derived_from=memory.provenance.derived_from,
        promoted_from=memory.provenance.promoted_from,
        imported_from=imported_from,
        import_key=key,
        status=memory.status,
        vector_state="fresh" if vectors else "none",
    )


def _copy_structure(source: MemoryStore, target: MemoryStore, summary: ImportSummary) -> None:
    """Sessions, turns, scratchpad, entities and relations that dest lacks (by id).

    Sessions whose messages a format already gave as memories come without their
    turns, so no message lands twice."""
    dst = target
    have_sessions = {s.id for s in dst.sessions()}
    for session in source.sessions():
        if session.id in have_sessions:
            summary.skip("session id already in the destination")
            continue
        dst.add_session(session.id, channel=session.channel, title=session.title,
                        user_id=session.user_id, started_at=session.started_at)
        if not source.turns_are_memories(session.id):
            turns = source.turns(session.id, limit=10**9)
            dst.add_turns(session.id, [(t.role, t.content, t.timestamp) for t in turns])
        for entry in source.scratch_entries(session.id):
            dst.set_scratch(session.id, entry.key, entry.value, entry.updated_at)
        have_sessions.add(session.id)
        summary.sessions += 1
    src = source
    have_entities = {e.id for e in dst.entities()}
    for entity in src.entities():
        if entity.id not in have_entities:
            dst.add_entity(entity)
            summary.entities += 1
    have_relations = {r.id for r in dst.relations()}
    for relation in src.relations():
        if relation.id not in have_relations:
            dst.add_relation(relation)
            summary.relations += 1


def check_export_target(out: Path) -> None:
    if out.exists() and out.is_dir():
        raise StoreError(f"{out} is a folder; give a file to export to.")
