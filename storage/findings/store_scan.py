"""Scanning a store: its memories a page at a time, accepted findings marked from the baseline."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError, NothingToDoError
from ..lazy_page import page_texts
from ..model import Memory, Status
from ..query import MemoryQuery
from ..source import Change
from .baseline import allowed_hosts, record_id
from .rules import SEVERITIES, RuleSet, default_rules, severity_rank
from .scanner import Finding, scan_text

if TYPE_CHECKING:
    from ..store import MemoryStore

PAGE = 500
# A deleted memory is out of sight (purge removes it for good); archived ones are still read by agents.
SCANNED_STATUSES = (Status.ACTIVE, Status.ARCHIVED)


@dataclass
class ScanReport:
    rules_version: int
    scanned: int
    findings: list[Finding] = field(default_factory=list)  # accepted ones included, marked

    def shown(self, *, include_accepted: bool = False, severity: str = "low") -> list[Finding]:
        """The findings at or above severity; accepted ones only when asked for."""
        limit = severity_rank(severity)
        return [f for f in self.findings
                if severity_rank(f.severity) <= limit and (include_accepted or not f.accepted)]

    def to_dict(self, *, include_accepted: bool = False, severity: str = "low") -> dict[str, Any]:
        shown = self.shown(include_accepted=include_accepted, severity=severity)
        return {
            "rules_version": self.rules_version,
            "scanned": self.scanned,
            "threshold": severity,
            "counts": {s: sum(1 for f in shown if f.severity == s and not f.accepted) for s in SEVERITIES},
            "accepted_hidden": 0 if include_accepted else sum(1 for f in self.findings if f.accepted),
            "findings": [f.to_dict() for f in shown],
        }


def accepted_fingerprints(store: MemoryStore) -> frozenset[str]:
    return frozenset(store.findings_baseline.accepted())


def memory_findings(
    memory: Memory, accepted: Iterable[str] = (), hosts: Iterable[str] = (), rules: RuleSet | None = None
) -> list[Finding]:
    """One memory's findings, those in the baseline marked accepted."""
    return _marked(scan_text(memory.id, memory.content, rules, hosts), frozenset(accepted))


def _marked(found: list[Finding], accepted: frozenset[str]) -> list[Finding]:
    return [replace(f, accepted=True) if f.fingerprint in accepted else f for f in found]


def scan_store(
    store: MemoryStore,
    *,
    rules: RuleSet | None = None,
    memory_ids: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> ScanReport:
    """Every finding in the store's active and archived memories (or in memory_ids only)."""
    rules = rules or default_rules()
    accepted, hosts = accepted_fingerprints(store), allowed_hosts(store)
    report = ScanReport(rules.version, 0)
    for texts, total in _texts(store, memory_ids):
        if cancelled is not None and cancelled():
            break
        for memory_id, content in texts:
            found = scan_text(memory_id, content, rules, hosts)
            if found:
                report.findings += _marked(found, accepted)
        report.scanned += len(texts)
        if progress is not None:
            progress(report.scanned, total)
    report.findings.sort(key=lambda f: (severity_rank(f.severity), f.memory_id, f.start, f.rule))
    return report


def _texts(store: MemoryStore, memory_ids: Sequence[str] | None) -> Iterable[tuple[list[tuple[str, str]], int]]:
    """Pages of (id, content): a page's rows are read as they are, no memory built from them."""
    if memory_ids is not None:
        yield [(m.id, m.content) for m in map(store.get, memory_ids)], len(memory_ids)
        return
    query = MemoryQuery(statuses=SCANNED_STATUSES)
    total = store.count(query)
    last: Memory | None = None
    while True:
        page = store.page(query, PAGE, 0, last)
        if not page:
            return
        yield page_texts(page), total
        last = page[-1]


def find_findings(store: MemoryStore, fingerprints: Sequence[str], memory_ids: Sequence[str] | None = None) -> list[Finding]:
    """The findings these fingerprints name (in the memories named, else the whole store)."""
    by_print = {f.fingerprint: f for f in scan_store(store, memory_ids=memory_ids).findings}
    missing = [p for p in fingerprints if p not in by_print]
    if missing:
        raise NotFoundError(f"No finding {', '.join(missing)} in {store.location} (scan again: the memory may have changed).")
    return [by_print[p] for p in dict.fromkeys(fingerprints)]


def acceptance_changes(store: MemoryStore, findings: Sequence[Finding], now: str) -> list[tuple[Finding, Change]]:
    """The baseline records that accept these findings (those already accepted are left out)."""
    baseline = store.findings_baseline.accepted()
    out = []
    for finding in findings:
        if finding.fingerprint in baseline:
            continue
        entry = {"rule": finding.rule, "memory_id": finding.memory_id, "severity": finding.severity,
                 "excerpt": finding.excerpt, "accepted_at": now}
        out.append((finding, Change(record_id(finding.fingerprint), None, entry)))
    if not out:
        raise NothingToDoError("Those findings are already in the baseline; nothing changed.")
    return out
