"""The labelled findings corpus (tests/storage/findings/corpus.jsonl) and how the scanner scores on it.

Each line is one memory's text with the category a scan must find in it (secret, injection,
hidden) or null for a benign look-alike, the family it belongs to ("kind": prose-credential,
role-tag, benign-link, ...), a note, optionally the other categories a finding may also have
there without counting as a false positive ("also": an exfiltration link is a link too), and
the split. The first 306 items were all written before the rules were tuned; "holdout" ones (every
fourth of a kind) were not looked at while tuning (scored once: 72 of 73 right; the one false alarm,
base64 of a settings blob called a random key, was then fixed). "fresh" items (53) were written
after the rules were tuned and scored once before any change: recall 0.83, precision 0.96 (missed:
four paraphrased or French injections, a password that "became" one; a "note for the agent team"
taken for a note to a model); the rules were then widened where those showed a gap, and one (an
instruction to hide what the agent did from a person named) is still missed.

Only the three attack categories are scored: link (an off-list host, low) and pii (an email
address, low) are reported for the owner to see, and a benign link is expected to show as one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemoscope.storage.findings import scan_text

CORPUS = Path(__file__).resolve().parents[1] / "storage" / "findings" / "corpus.jsonl"
SCORED = ("secret", "injection", "hidden")


@dataclass(frozen=True)
class Item:
    index: int
    kind: str
    category: str | None
    text: str
    note: str
    also: tuple[str, ...]
    split: str

    def allowed(self) -> set[str]:
        return {c for c in (self.category, *self.also) if c}


def load(path: Path = CORPUS) -> list[Item]:
    items = []
    for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if line.strip():
            data = json.loads(line)
            items.append(Item(index, data["kind"], data["category"], data["text"], data.get("note", ""),
                              tuple(data.get("also", ())), data.get("split", "tune")))
    return items


@dataclass
class Score:
    tp: Counter[str] = field(default_factory=Counter)
    fn: Counter[str] = field(default_factory=Counter)
    fp: Counter[str] = field(default_factory=Counter)
    misses: list[tuple[Item, set[str]]] = field(default_factory=list)  # an attack not found as its category
    false_alarms: list[tuple[Item, set[str], list[str]]] = field(default_factory=list)  # + the rules that fired
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind: [right, of]

    def recall(self, category: str | None = None) -> float:
        tp, fn = self._sum(self.tp, category), self._sum(self.fn, category)
        return tp / (tp + fn) if tp + fn else 1.0

    def precision(self, category: str | None = None) -> float:
        tp, fp = self._sum(self.tp, category), self._sum(self.fp, category)
        return tp / (tp + fp) if tp + fp else 1.0

    @staticmethod
    def _sum(counts: Counter[str], category: str | None) -> int:
        return counts[category] if category else sum(counts.values())

    def failures(self) -> int:
        return len(self.misses) + len(self.false_alarms)

    def table(self) -> str:
        rows = [f"{'':12} {'recall':>7} {'precision':>9} {'tp':>4} {'fn':>4} {'fp':>4}"]
        for category in (*SCORED, None):
            rows.append(f"{category or 'overall':12} {self.recall(category):7.3f} {self.precision(category):9.3f} "
                        f"{self._sum(self.tp, category):4} {self._sum(self.fn, category):4} "
                        f"{self._sum(self.fp, category):4}")
        rows.append("per kind (attacks found as their category / benign items with no unexpected finding):")
        rows += [f"  {kind:26} {right:3}/{of:<3}" for kind, (right, of) in sorted(self.by_kind.items())]
        return "\n".join(rows)


def score(items: Iterable[Item]) -> Score:
    out = Score()
    for item in items:
        findings = scan_text(f"corpus-{item.index}", item.text)
        found = {f.category for f in findings} & set(SCORED)
        if item.category:
            (out.tp if item.category in found else out.fn)[item.category] += 1
            if item.category not in found:
                out.misses.append((item, found))
        unexpected = found - item.allowed()
        for category in unexpected:
            out.fp[category] += 1
        if unexpected:
            out.false_alarms.append((item, unexpected, sorted({f.rule for f in findings if f.category in unexpected})))
        right = (item.category in found if item.category else True) and not unexpected
        tally = out.by_kind.setdefault(item.kind, [0, 0])
        tally[0] += right
        tally[1] += 1
    return out


def report(result: Score) -> dict[str, Any]:
    """The figures as JSON (for a reliability report)."""
    return {
        "overall": {"recall": round(result.recall(), 4), "precision": round(result.precision(), 4)},
        "categories": {c: {"recall": round(result.recall(c), 4), "precision": round(result.precision(c), 4),
                           "tp": result.tp[c], "fn": result.fn[c], "fp": result.fp[c]} for c in SCORED},
        "kinds": {kind: {"right": right, "of": of} for kind, (right, of) in sorted(result.by_kind.items())},
        "misses": [{"index": i.index, "kind": i.kind, "expected": i.category, "found": sorted(found), "text": i.text}
                   for i, found in result.misses],
        "false_alarms": [{"index": i.index, "kind": i.kind, "found": sorted(found), "rules": rules, "text": i.text}
                         for i, found, rules in result.false_alarms],
    }
