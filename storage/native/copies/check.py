"""check_copies(workspace): every memory row of a native workspace against its copies: its vector
record (vectors.py), its markdown bullet (markdown.py) and its FTS5 entry.

Rows are read in pages and vectors a page at a time; progress(done, total) ticks per page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ...consistency_report import Finding, Progress, Report
from ...embedders.base import Embedder
from ..chroma.records import NATIVE_COLLECTION
from ..db.fts import differing_entries, fts_record, has_fts
from ..workspace_vectors import READ_FAILURES, UNREADABLE_VECTORS, VECTORS_DIR, WorkspaceVectors
from .markdown import MarkdownCheck
from .rows import row_count
from .vectors import VectorCheck

if TYPE_CHECKING:
    from ..db.tables import NativeDb
    from ..workspace import NativeWorkspace


def check_copies(
    workspace: NativeWorkspace,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    *,
    default_embedder: Callable[[], Embedder | None] = lambda: None,
) -> Report:
    """What differs between the workspace's memory rows and their copies (nothing to compare
    without memory.db). embedder: what recomputes vectors to find stale ones; default_embedder()
    when none is given, asked only where there are vectors to compare (without either, only
    vectors marked stale are found)."""
    report = Report(location=str(workspace.root))
    if workspace.markdown is not None:
        for rel, reason in workspace.markdown.unreadable().items():
            report.add(Finding("unreadable-file", f"md:{rel}", reason, source="markdown"))
    db = workspace.db
    if db is None:
        return report
    tick = _Ticker(progress)
    rows = row_count(db)
    report.checked["memory rows"] = rows
    vectors = workspace.vectors
    has_vectors = vectors is not None and NATIVE_COLLECTION in vectors.collections()
    if has_vectors and not hasattr(vectors, "files"):  # a Chroma server: its records are not read page-wise yet
        report.skipped.append("vectors: a Chroma server's collection is not compared yet")
        has_vectors = False
    tick.total = rows * (1 + int(has_vectors)) + 1
    vector_check = None
    if has_vectors:
        assert vectors is not None
        embedder = embedder if embedder is not None else default_embedder()
        if embedder is None:
            report.skipped.append("stale vectors: no embedder runs here, so only vectors marked stale are found")
        try:  # its files read here, past the part's own reads: a damaged one costs the vectors' findings
            vector_check = VectorCheck(db, vectors, embedder)
            report.extend(list(vector_check.rows(tick.add)) + list(vector_check.records()))
            report.checked["vectors"] = vectors.record_count(NATIVE_COLLECTION)
        except READ_FAILURES as exc:
            if not isinstance(vectors, WorkspaceVectors):
                raise
            vectors.lose(exc)
            vector_check = None
    if isinstance(vectors, WorkspaceVectors) and vectors.fault:
        report.add(Finding(UNREADABLE_VECTORS.id, VECTORS_DIR, vectors.fault, source=VECTORS_DIR))
    if workspace.markdown is not None:
        markdown_check = MarkdownCheck(db, workspace.markdown, workspace.root)
        report.extend(markdown_check.rows())
        if vector_check is not None:
            report.extend(markdown_check.orphans_of(vector_check.orphan_texts))
        report.checked["markdown blocks"] = markdown_check.checked_blocks
    tick.add(rows)
    _check_fts(db, report)
    tick.add(1)
    return report


def _check_fts(db: NativeDb, report: Report) -> None:
    """memory.db's full-text index against its rows (SQLite keeps one, PostgreSQL none)."""
    with db.errors(), db.engine.connect() as conn:
        if not has_fts(conn):
            report.skipped.append("full-text index: memory.db keeps none here (not SQLite)")
            return
        for rowid, memory_id, kind in differing_entries(conn):
            where = f"memory {memory_id}" if memory_id else "a row no longer in memory.db"
            detail = f"{memory_id} is not in the full-text index" if kind == "missing-fts" else f"indexed text differs from {where}"
            report.add(Finding(kind, fts_record(rowid), detail, memory_id, "memory.db"))


class _Ticker:
    def __init__(self, progress: Progress | None) -> None:
        self.progress = progress
        self.done = 0
        self.total = 0

    def add(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)
