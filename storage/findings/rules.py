"""The findings rules: data shipped in the package (rules.json, versioned), compiled once."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
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
        )

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "category": self.category, "severity": self.severity, "title": self.title}


@dataclass(frozen=True)
class RuleSet:
    version: int
    rules: tuple[Rule, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "rules": [r.to_dict() for r in self.rules]}


def rules_from_json(text: str) -> RuleSet:
    data = json.loads(text)
    return RuleSet(int(data["version"]), tuple(Rule.from_dict(r) for r in data["rules"]))


@cache
def default_rules() -> RuleSet:
    """The rules shipped with this version of Mnemoscope."""
    text = resources.files(__package__).joinpath(RULES_FILE).read_text(encoding="utf-8")
    return rules_from_json(text)
