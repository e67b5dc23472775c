"""check(store): every copy of every memory compared, store-wide.

Native workspace: memory rows against their vector copies, markdown bullets and FTS5
entries; foreign formats through their own ``consistency_checks()`` (see ConsistencyChecks).
Rows are read in pages and vectors a page at a time; progress(done, total) ticks per page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from ..consistency_report import Finding, Report
from ..embedders.base import Embedder
from ..native.chroma.records import NATIVE_COLLECTION
from ..native.copies.markdown import MarkdownCheck
from ..native.copies.rows import row_count
from ..native.copies.vectors import VectorCheck
from ..native.db.fts import differing_entries, fts_record, has_fts

Progress = Callable[[int, int], None]


@runtime_checkable
class ConsistencyChecks(Protocol):
    """A foreign format that can compare its own indexes and copies (mem0's history.db against
    its vectors, ...): one Finding per record, of kinds it registers (report.register_kind)."""

    def consistency_checks(self) -> list[Finding]: ...


def check(store: Any, *, embedder: Embedder | None = None, progress: Progress | None = None) -> Report:
    """Compare every copy of every memory of store. embedder: what recomputes vectors to find
    stale ones (default: the store's own, if one runs here; without one, only vectors marked
    stale are found)."""
    report = Report(location=store.location)
    tick = _Ticker(progress)
    workspace = store._workspace
    if workspace is not None and workspace.db is not None:
        _check_native(store, workspace, embedder, report, tick)
    for source in store.foreign:
        if isinstance(source, ConsistencyChecks):
            report.extend(source.consistency_checks())
    tick.finish()
    return report


def _check_native(store: Any, workspace: Any, embedder: Embedder | None, report: Report, tick: _Ticker) -> None:
    db = workspace.db
    rows = row_count(db)
    report.checked["memory rows"] = rows
    vectors = workspace.vectors
    has_vectors = vectors is not None and NATIVE_COLLECTION in vectors.collections()
    if has_vectors and not hasattr(vectors, "files"):  # a Chroma server: its records are not read page-wise yet
        report.skipped.append("vectors: a Chroma server's collection is not compared yet")
        has_vectors = False
    markdown = workspace.markdown
    tick.total = rows * (1 + int(has_vectors)) + 1
    vector_check = None
    if has_vectors:
        embedder = embedder if embedder is not None else store.embedder()
        if embedder is None:
            report.skipped.append("stale vectors: no embedder runs here, so only vectors marked stale are found")
        vector_check = VectorCheck(db, vectors, embedder)
        report.extend(vector_check.rows(tick.add))
        report.extend(vector_check.records())
        report.checked["vectors"] = vectors.record_count(NATIVE_COLLECTION)
    if markdown is not None:
        markdown_check = MarkdownCheck(db, markdown, workspace.root)
        report.extend(markdown_check.rows())
        if vector_check is not None:
            report.extend(markdown_check.orphans_of(vector_check.orphan_texts))
        report.checked["markdown blocks"] = markdown_check.checked_blocks
    tick.add(rows)
    with db.errors(), db.engine.connect() as conn:
        if has_fts(conn):
            for rowid, memory_id, kind in differing_entries(conn):
                where = f"memory {memory_id}" if memory_id else "a row no longer in memory.db"
                detail = f"{memory_id} is not in the full-text index" if kind == "missing-fts" else f"indexed text differs from {where}"
                report.add(Finding(kind, fts_record(rowid), detail, memory_id, "memory.db"))
        else:
            report.skipped.append("full-text index: memory.db keeps none here (not SQLite)")
    tick.add(1)


class _Ticker:
    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.done = 0
        self.total = 0

    def add(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)
