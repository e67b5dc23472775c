"""Which kinds of a consistency report a repair takes: those asked for by name, or every kind found
that "repair everything" repairs. The repairs themselves are planned by the source that owns the
copies (MemoryStore.plan_repairs: the native workspace's, native/copies/repair.py) and applied
by Curator.repair as one undoable step."""

from __future__ import annotations

from collections.abc import Iterable

from ..consistency_report import KINDS, Report
from ..errors import UnsupportedError


def repair_kinds(report: Report, kinds: Iterable[str] | None) -> list[str]:
    """The kinds to repair: those asked for (refused when a kind has no safe repair), or every
    repairable kind the report found."""
    if kinds is None:
        return report.repairable_kinds()
    chosen = list(dict.fromkeys(kinds))
    for kind in chosen:
        if kind not in KINDS:
            raise UnsupportedError(f"No finding kind {kind!r} (kinds: {', '.join(KINDS)}).")
        if not KINDS[kind].repairable:
            raise UnsupportedError(f"{kind} is not repaired automatically: {KINDS[kind].advice}.")
    return chosen
