"""check(store): every copy of every memory compared, store-wide.

The store asks each of its sources to compare its own copies (MemoryStore.consistency_checks):
the native workspace its memory rows against their vector copies, markdown bullets and FTS5
entries (native/copies/), a foreign format its own indexes (ConsistencyChecks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..consistency_report import Progress, Report
    from ..embedders.base import Embedder
    from ..store import MemoryStore


def check(store: MemoryStore, *, embedder: Embedder | None = None, progress: Progress | None = None) -> Report:
    """Compare every copy of every memory of store. embedder: what recomputes vectors to find
    stale ones (default: the store's own, if one runs here; without one, only vectors marked
    stale are found). progress(done, total) ticks as rows are read and ends at its total."""
    from ..consistency_report import Finding, Report
    from ..recovery import unfinished_steps

    report = Report()
    for entry in unfinished_steps(store):  # first: the copies' findings may show what it half did
        targets = ", ".join(entry.targets[:5]) + (" …" if len(entry.targets) > 5 else "")
        report.add(Finding("unfinished-step", f"step #{entry.seq}",
                           f"{entry.operation} of {targets}, started {entry.at:%Y-%m-%d %H:%M:%S}, never finished"))
    found = store.consistency_checks(embedder=embedder, progress=progress)
    report.location = found.location
    report.merge(found)
    return report
