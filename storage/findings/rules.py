"""The findings rules: data shipped in the package (rules.json, versioned), compiled once.

A rule set is also compiled into one prefilter (RuleSet.may_match, RuleSet.active): the needles
of every rule in one pattern over the lowered text, the patterns of the rules without needles in
another over the text. Most memories match neither, and cost those two passes instead of a pass per
rule; the others run only the rules whose needles they hold.

Besides its pattern a rule may name a context check (checks.py) its matches must pass, and a decoder
(decoding.py) whose text is scanned for instructions: an encoded or invisible payload that decodes
to a prompt injection is reported as one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import Any

from .checks import CHECKS
from .decoding import DECODERS

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
    # A context check the match must pass (checks.CHECKS): what a pattern cannot say cheaply.
    check: str = ""
    # A decoder (decoding.DECODERS) whose text is scanned for instructions: decoded_only, the
    # match is a finding only when it decodes to one; else an instruction in it is also reported
    # as decoded_as (a rule id), over the same span.
    decode: str = ""
    decoded_only: bool = False
    decoded_as: str = ""
    # The pattern is written in lower case and runs over the lowered content (a regex that ignores
    # case is several times slower); over the content, ignoring case, where lowering changed its length.
    lowered: bool = False

    def may_match(self, lowered: str) -> bool:
        return not self.needles or any(n in lowered for n in self.needles)

    @cached_property
    def case_blind(self) -> re.Pattern[str]:
        """The pattern ignoring case, for content whose lowered text is of another length."""
        return re.compile(self.pattern.pattern, self.pattern.flags | re.IGNORECASE)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rule:
        if data["severity"] not in SEVERITIES:
            raise ValueError(f"rule {data['id']}: severity must be one of {', '.join(SEVERITIES)}")
        if data.get("check", "") not in ("", *CHECKS):
            raise ValueError(f"rule {data['id']}: no check named {data['check']!r}")
        if data.get("decode", "") not in ("", *DECODERS):
            raise ValueError(f"rule {data['id']}: no decoder named {data['decode']!r}")
        if data.get("lowered") and not data.get("needles"):
            raise ValueError(f"rule {data['id']}: a lowered pattern needs needles (the prefilter runs bare ones over the content)")
        return cls(
            id=data["id"], category=data["category"], severity=data["severity"], title=data["title"],
            pattern=re.compile(data["pattern"]), group=int(data.get("group", 0)),
            min_entropy=data.get("min_entropy"), needs_digit=bool(data.get("needs_digit", False)),
            yields=bool(data.get("yields", False)), external_link=bool(data.get("external_link", False)),
            needles=tuple(n.lower() for n in data.get("needles", ())),
            non_ascii=bool(data.get("non_ascii", False)), check=data.get("check", ""),
            decode=data.get("decode", ""), decoded_only=bool(data.get("decoded_only", False)),
            decoded_as=data.get("decoded_as", ""), lowered=bool(data.get("lowered", False)),
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

    def active(self, content: str, lowered: str) -> list[Rule]:
        """The rules that may match content, in their order (none, for most texts)."""
        indices = self._prefilter.active(content, lowered)
        return [r for i, r in enumerate(self.rules) if i in indices] if indices else []

    @cached_property
    def _prefilter(self) -> _Prefilter:
        return _Prefilter(self.rules)

    @cached_property
    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    @cached_property
    def instructions(self) -> RuleSet:
        """The rules a decoded payload is scanned with: those that find instructions."""
        return RuleSet(self.version, tuple(r for r in self.rules if r.category == "injection"))


class _Prefilter:
    """Which rules may match a text, in (at most) two regex passes: one over the lowered text for
    every rule's needles, one of the patterns of the rules without needles over the text. Most
    memories match neither and cost those two passes instead of a pass per rule.

    A needle that begins with an ASCII letter or digit is looked for where a word begins only (its
    rule's pattern begins a word there): most positions of a text are inside a word and are passed
    over at once. Needles of other scripts are left out of the pass over an ASCII text."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        rules = tuple(rules)
        needles = {n for r in rules for n in r.needles}
        self._all = _needle_patterns(needles)
        self._ascii_only = _needle_patterns({n for n in needles if n.isascii()})
        # Each needle, as the longest one found at a position: the rules one of whose needles begins it.
        self._implies = {
            found: frozenset(i for i, r in enumerate(rules) if any(found.startswith(n) for n in r.needles))
            for found in needles
        }
        self._bare = frozenset(i for i, r in enumerate(rules) if not r.needles)
        self._bare_ascii = frozenset(i for i in self._bare if not rules[i].non_ascii)
        bare = [r for r in rules if not r.needles]
        self._ascii = _any_of(r.pattern for r in bare if not r.non_ascii)
        self._any = _any_of(r.pattern for r in bare)

    def may_match(self, content: str, lowered: str) -> bool:
        ascii_only = lowered.isascii()
        needles = self._ascii_only if ascii_only else self._all
        if needles is not None and needles[0].search(_single_spaced(lowered, ascii_only)):
            return True
        return self._bare_may_match(content, ascii_only)

    def active(self, content: str, lowered: str) -> frozenset[int]:
        """The indices of the rules that may match content: those with a needle in it, and those
        without needles when one of their patterns matches."""
        ascii_only = lowered.isascii()
        needles = self._ascii_only if ascii_only else self._all
        spaced = _single_spaced(lowered, ascii_only)
        found: set[int] = set()
        if needles is not None and needles[0].search(spaced):  # most texts hold none: one quick pass
            for match in needles[1].finditer(spaced):
                found.update(self._implies[match.group(1)])
        content_ascii = ascii_only and content.isascii()
        if self._bare and any(p.search(content) for p in (self._ascii if content_ascii else self._any)):
            found.update(self._bare_ascii if content_ascii else self._bare)
        return frozenset(found) if found else _NONE

    def _bare_may_match(self, content: str, ascii_lowered: bool) -> bool:
        return any(p.search(content) for p in (self._ascii if ascii_lowered and content.isascii() else self._any))


_NONE: frozenset[int] = frozenset()


def _single_spaced(lowered: str, ascii_only: bool) -> str:
    """lowered with each run of white space one space: a needle of two words is found however
    the words are spaced (a pattern allows any white space between them)."""
    if ascii_only and lowered.isprintable() and "  " not in lowered:  # (line breaks and tabs are not printable)
        return lowered
    return " ".join(lowered.split())


def _needle_patterns(needles: set[str]) -> tuple[re.Pattern[str], re.Pattern[str]] | None:
    """A search for any of the needles, and a scan that finds the longest needle at each position
    (group 1); a needle beginning with an ASCII letter or digit only where a word begins. Each
    part looks at the next character first: most positions begin no needle."""
    if not needles:
        return None
    words = [n for n in needles if n[:1].isascii() and n[:1].isalnum()]
    others = [n for n in needles if n not in words]
    parts = [(words, r"\b"), ([n for n in others if n[:1].isascii()], ""), ([n for n in others if not n[:1].isascii()], "")]
    gated = [(f"(?=[{re.escape(''.join(sorted({n[0] for n in group})))}]){anchor}", group) for group, anchor in parts if group]
    shortest = "|".join(f"{gate}(?:{_trie(group)})" for gate, group in gated)
    longest = "|".join(f"{gate}(?:{_trie(group, longest=True)})" for gate, group in gated)
    return re.compile(shortest), re.compile(f"(?=({longest}))")


def _trie(words: Iterable[str], longest: bool = False) -> str:
    """A pattern matching any of words, branching on one character at a time: Python's regex
    engine tries the alternatives of a flat list one by one at every position. A word that begins
    another is matched as the shorter one (enough to say one is there), or with longest, as the
    longer one where both are."""
    branches: dict[str, list[str]] = {}
    ends = False
    for word in set(words):
        if not word:
            if not longest:
                return ""  # an empty word is in every text
            ends = True
            continue
        branches.setdefault(word[0], []).append(word[1:])
    alternatives = []
    for first, tails in sorted(branches.items()):
        rest = _trie(tails, longest)
        alternatives.append(re.escape(first) + (f"(?:{rest})" if "|" in rest else rest))
    joined = "|".join(alternatives)
    return f"(?:{joined})?" if ends and joined else joined


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
    joined = list(dict.fromkeys(joined))  # two rules may share a pattern (a token one checks, one decodes)
    return ((re.compile("|".join(joined)),) if joined else ()) + tuple(alone)


def rules_from_json(text: str) -> RuleSet:
    data = json.loads(text)
    return RuleSet(int(data["version"]), tuple(Rule.from_dict(r) for r in data["rules"]))


@cache
def default_rules() -> RuleSet:
    """The rules shipped with this version of Mnemoscope."""
    text = resources.files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8")
    return rules_from_json(text)
