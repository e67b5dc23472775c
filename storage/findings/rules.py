"""The findings rules: data shipped in the package (rules.json, versioned), compiled once.

A rule set is also compiled into one prefilter (RuleSet.may_match): the needles of every rule
in one pattern over the lowered text, the patterns of the rules without needles in another
over the text. Most memories match neither, and cost those two passes instead of a pass per rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

SEVERITIES = ("high", "medium", "low")
RULES_FILE = "rules.json"


def severity_rank(severity: str) -> int:
    """0 for high, 1 medium, 2 low: lower is worse."""
    return SEVERITIES.index(severity)


@dataclass(frozen=True)
class Rule:
    id: str
    category: str  # secret, injection, hidden, link, pii
    severity: str
    title: str
    pattern: re.Pattern[str]
    group: int = 0  # the capture group that is the finding's span
    min_entropy: float | None = None  # bits per character the match must reach
    needs_digit: bool = False
    # A weak rule (entropy, email) yields to any other finding over the same characters.
    yields: bool = False
    # The span is a link's host: only hosts off the store's allow-list are findings.
    external_link: bool = False
    # Lower-case texts one of which the lowered content must hold for the pattern to run: a
    # substring test is far cheaper than a regex pass, and most memories hold none.
    needles: tuple[str, ...] = ()
    # The pattern matches only text holding a non-ASCII character: ASCII text skips it.
    non_ascii: bool = False

    def may_match(self, lowered: str) -> bool:
        return not self.needles or any(n in lowered for n in self.needles)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        if data["severity"] not in SEVERITIES:
            raise ValueError(f"rule {data['id']}: severity must be one of {', '.join(SEVERITIES)}")
        return cls(
            id=data["id"], category=data["category"], severity=data["severity"], title=data["title"],
            pattern=re.compile(data["pattern"]), group=int(data.get("group", 0)),
            min_entropy=data.get("min_entropy"), needs_digit=bool(data.get("needs_digit", False)),
            yields=bool(data.get("yields", False)), external_link=bool(data.get("external_link", False)),
            needles=tuple(n.lower() for n in data.get("needles", ())),
            non_ascii=bool(data.get("non_ascii", False)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "category": self.category, "severity": self.severity, "title": self.title}


@dataclass(frozen=True)
class RuleSet:
    version: int
    rules: tuple[Rule, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "rules": [r.to_dict() for r in self.rules]}

    def may_match(self, content: str, lowered: str) -> bool:
        """False when no rule can match content (lowered: content.lower()): then none need run."""
        return self._prefilter.may_match(content, lowered)

    @cached_property
    def _prefilter(self) -> _Prefilter:
        return _Prefilter(self.rules)


class _Prefilter:
    """Whether any of the rules may match a text, in (at most) two regex passes: True wherever
    one of them would match (a rule's needle is in the lowered text, or a rule without needles
    matches), and seldom elsewhere."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        rules = tuple(rules)
        needles = [n for r in rules for n in r.needles]
        self._needles = re.compile(_trie(needles)) if needles else None
        bare = [r for r in rules if not r.needles]
        self._ascii = _any_of(r.pattern for r in bare if not r.non_ascii)
        self._any = _any_of(r.pattern for r in bare)

    def may_match(self, content: str, lowered: str) -> bool:
        if self._needles is not None and self._needles.search(lowered):
            return True
        return any(p.search(content) for p in (self._ascii if content.isascii() else self._any))


def _trie(words: Iterable[str]) -> str:
    """A pattern matching any of words, branching on one character at a time: Python's regex
    engine tries the alternatives of a flat list one by one at every position."""
    branches: dict[str, list[str]] = {}
    for word in set(words):
        if not word:
            return ""  # an empty word is in every text
        branches.setdefault(word[0], []).append(word[1:])
    alternatives = []
    for first, tails in sorted(branches.items()):
        rest = _trie(tails)
        alternatives.append(re.escape(first) + (f"(?:{rest})" if "|" in rest else rest))
    return "|".join(alternatives)


_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_BACKREFERENCE = re.compile(r"\\[1-9]|\(\?P=")


def _any_of(patterns: Iterable[re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    """Patterns that together match where any of patterns does: one alternation of those that
    can be joined (flags scoped to their own part; no back-reference, whose group number would
    change), the others as they are."""
    joined, alone = [], []
    for pattern in patterns:
        text = pattern.pattern
        flags = _GLOBAL_FLAGS.match(text)
        part = f"(?{flags.group(1)}:{text[flags.end():]})" if flags else f"(?:{text})"
        if _BACKREFERENCE.search(text) or "#" in text and "x" in (flags.group(1) if flags else ""):
            alone.append(pattern)  # (a verbose pattern's comment would swallow the closing parenthesis)
        else:
            joined.append(part)
    return ((re.compile("|".join(joined)),) if joined else ()) + tuple(alone)


def rules_from_json(text: str) -> RuleSet:
    data = json.loads(text)
    return RuleSet(int(data["version"]), tuple(Rule.from_dict(r) for r in data["rules"]))


@cache
def default_rules() -> RuleSet:
    """The rules shipped with this version of Mnemoscope."""
    text = resources.files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8")
    return rules_from_json(text)
