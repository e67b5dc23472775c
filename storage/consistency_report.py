"""What a consistency check found: findings grouped by kind, with counts.

Each kind has a stable id (what `--repair` takes and JSON carries), a title a person
reads, a severity, and either a repair (a safe one-step fix, Curator.repair) or advice
(which copy is right is a person's call).

The vocabulary every layer shares: the native workspace (NativeWorkspace.check_copies) and the
foreign formats (ConsistencyChecks) report findings of the kinds listed here or registered
(register_kind); MemoryStore.consistency_checks gathers them into one Report. It imports nothing
of the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

ERROR, WARNING = "error", "warning"
Progress = Callable[[int, int], None]  # progress(done, total) of a check


@dataclass(frozen=True)
class FindingKind:
    id: str
    title: str
    severity: str
    repair: str = ""  # what the repair does ("" when no repair is safe)
    advice: str = ""  # what a person can do instead
    # False: the repair takes a side a person has to choose, so it runs only when asked for by
    # name (--repair KIND, the dialog's button), never as part of "repair everything".
    by_default: bool = True

    @property
    def repairable(self) -> bool:
        return bool(self.repair)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.id, "title": self.title, "severity": self.severity,
                "repairable": self.repairable, "repair": self.repair, "advice": self.advice,
                "by_default": self.by_default}


KINDS: dict[str, FindingKind] = {k.id: k for k in (
    FindingKind("unfinished-step", "Curation step interrupted and not yet undone", ERROR,
                advice="a process died in the middle of the step, so its copies are half-changed; open the store "
                       "for writing once (e.g. check --repair-all): the open undoes what the step had written"),
    FindingKind("missing-vector", "Memory with no vector", ERROR,
                repair="embed the memory's text with the store's embedder and add its vector"),
    FindingKind("orphan-vector", "Vector whose memory is gone", WARNING,
                repair="delete the vector record"),
    FindingKind("vector-dimension", "Vector of the wrong length", ERROR,
                advice="the collection holds vectors of another model; re-create the vectors with the "
                       "embedder the store records (a new collection), or set the store's embedder to that model"),
    FindingKind("stale-vector", "Vector that no longer matches its text", WARNING,
                repair="re-embed the memory's current text with the store's embedder"),
    FindingKind("vector-metadata-mismatch", "Vector metadata differs from the memory", WARNING,
                repair="write the vector's status, channel, text and other metadata again from the memory row"),
    FindingKind("unreadable-file", "Workspace file that cannot be read", ERROR,
                advice="save it as UTF-8 (or let this user read it): until then its entries are not listed and "
                       "a step that would write it is refused"),
    FindingKind("missing-bullet", "Markdown bullet missing", WARNING,
                repair="append the memory as a bullet to the file its row names"),
    FindingKind("orphan-bullet", "Markdown bullet whose memory is gone", WARNING,
                advice="the bullet may be worth keeping as a memory of its own; delete it in the window "
                       "if it should go"),
    FindingKind("text-mismatch", "Markdown bullet and memory say different things", WARNING,
                repair="write the memory's text into its markdown bullet (the bullet's text stays in the "
                       "journal: undo brings it back)",
                advice="which text is right is your call: repair it to keep the memory's text, or edit the "
                       "memory to the bullet's text (an edit reaches every copy)",
                by_default=False),
    FindingKind("stale-fts", "Full-text index entry out of date", WARNING,
                repair="index the memory's current text again (or drop the entry of a row that is gone)"),
    FindingKind("missing-fts", "Memory missing from the full-text index", WARNING,
                repair="index the memory's text"),
    # Other tools' search indexes of their markdown (OpenClaw, AgenticX): theirs to rebuild.
    FindingKind("index-file-gone", "Indexed file is gone; its chunks are still in the index", WARNING,
                advice="the owning tool drops them when it next re-indexes; until then their text is shown as "
                       "deleted memories, so nothing is lost"),
    FindingKind("index-file-changed", "Indexed file changed since it was indexed", WARNING,
                advice="the owning tool's search still finds the old text; let it re-index (its next sync)"),
    FindingKind("index-chunks-unlisted", "Index chunks of a file the index does not list", WARNING,
                advice="the index was written halfway; let the owning tool re-index"),
    FindingKind("index-fts-dangling", "Full-text entries whose row is gone", WARNING,
                advice="the owning tool's keyword search may return rows that no longer exist; let it rebuild "
                       "its full-text index"),
)}


def register_kind(kind: FindingKind) -> FindingKind:
    """A kind a foreign format reports (through its consistency_checks())."""
    return KINDS.setdefault(kind.id, kind)


@dataclass(frozen=True)
class Finding:
    kind: str
    record: str  # the record the finding is about (a row id, vec:…, md:…, fts:…)
    detail: str
    memory_id: str | None = None  # the memory.db row it belongs to, when there is one
    source: str = ""  # the part or format that holds the record

    def to_dict(self) -> dict[str, Any]:
        return {"record": self.record, "memory_id": self.memory_id, "detail": self.detail, "source": self.source}


@dataclass
class Report:
    """Findings by kind. Items of one kind keep the order they were found in."""

    location: str = ""
    checked: dict[str, int] = field(default_factory=dict)  # what was compared: rows, vectors, bullets…
    skipped: list[str] = field(default_factory=list)  # checks that could not run here, and why
    by_kind: dict[str, list[Finding]] = field(default_factory=dict)

    def add(self, finding: Finding) -> None:
        self.by_kind.setdefault(finding.kind, []).append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        for finding in findings:
            self.add(finding)

    def merge(self, part: Report) -> None:
        """Take in the report of one part of the store: its findings, what it compared and what
        it could not check."""
        self.extend(part)
        self.checked.update(part.checked)
        self.skipped.extend(part.skipped)

    @property
    def clean(self) -> bool:
        return not any(self.by_kind.values())

    @property
    def total(self) -> int:
        return sum(len(items) for items in self.by_kind.values())

    def counts(self) -> dict[str, int]:
        return {kind: len(items) for kind, items in self.by_kind.items() if items}

    def kinds(self) -> list[FindingKind]:
        return [KINDS[kind] for kind, items in self.by_kind.items() if items]

    def repairable_kinds(self) -> list[str]:
        """The kinds found that "repair everything" repairs (not those that take a side)."""
        return [kind.id for kind in self.kinds() if kind.repairable and kind.by_default]

    def items(self, kind: str) -> list[Finding]:
        return list(self.by_kind.get(kind, []))

    def __iter__(self) -> Iterator[Finding]:
        for items in self.by_kind.values():
            yield from items

    def to_dict(self) -> dict[str, Any]:
        return {
            "location": self.location,
            "clean": self.clean,
            "total": self.total,
            "checked": self.checked,
            "skipped": self.skipped,
            "counts": self.counts(),
            "kinds": [
                {**kind.to_dict(), "count": len(self.by_kind[kind.id]),
                 "items": [f.to_dict() for f in self.by_kind[kind.id]]}
                for kind in self.kinds()
            ],
        }


@runtime_checkable
class ConsistencyChecks(Protocol):
    """A foreign format that can compare its own indexes and copies (mem0's history.db against
    its vectors, ...): one Finding per record, of kinds it registers (register_kind). It may
    also say what it compared (consistency_checked() -> {what: how many}), for the report."""

    def consistency_checks(self) -> list[Finding]: ...
