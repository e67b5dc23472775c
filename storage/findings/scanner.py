"""Scanning text for findings: each rule's matches, with a span, a fingerprint and a masked excerpt."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .rules import Rule, RuleSet, default_rules, severity_rank

EXCERPT_CONTEXT = 24  # characters shown either side of a match
SHOWN_SECRET_CHARS = 4


@dataclass(frozen=True)
class Finding:
    """One rule's match in one memory: [start, end) are offsets into its content."""

    fingerprint: str
    rule: str
    category: str
    severity: str
    title: str
    memory_id: str
    start: int
    end: int
    excerpt: str  # secrets masked, invisible characters spelled out
    accepted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint, "rule": self.rule, "category": self.category,
            "severity": self.severity, "title": self.title, "memory_id": self.memory_id,
            "start": self.start, "end": self.end, "excerpt": self.excerpt, "accepted": self.accepted,
        }


def fingerprint(rule_id: str, memory_id: str, matched: str) -> str:
    """Stable across edits elsewhere in the memory: no offsets, only what matched where."""
    digest = hashlib.sha256("\0".join((rule_id, memory_id, matched)).encode("utf-8")).hexdigest()
    return digest[:16]


def shannon_entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def mask(secret: str) -> str:
    """What a report shows of a secret: its first few characters."""
    return secret[:SHOWN_SECRET_CHARS] + "…"


def host_allowed(host: str, allowed_hosts: Iterable[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == a or host.endswith("." + a) for a in (h.lower().strip(".") for h in allowed_hosts) if a)


def scan_text(
    memory_id: str, content: str, rules: RuleSet | None = None, allowed_hosts: Iterable[str] = ()
) -> list[Finding]:
    """Every finding in one memory's content, worst first, then in reading order."""
    rules = rules or default_rules()
    allowed = tuple(allowed_hosts)
    lowered = content.lower()
    if not rules.may_match(content, lowered):
        return []
    raw: list[tuple[Rule, int, int]] = []
    for rule in rules.rules:
        if not rule.may_match(lowered):
            continue
        for match in rule.pattern.finditer(content):
            start, end = match.span(rule.group)
            if start < 0 or start == end or not _qualifies(rule, match.group(rule.group), allowed):
                continue
            raw.append((rule, start, end))
    strong = [(s, e) for r, s, e in raw if not r.yields]
    kept = [(r, s, e) for r, s, e in raw if not (r.yields and any(s < e2 and s2 < e for s2, e2 in strong))]
    secrets = [(s, e) for r, s, e in kept if r.category == "secret"]
    found = [
        Finding(
            fingerprint(rule.id, memory_id, content[start:end]), rule.id, rule.category, rule.severity, rule.title,
            memory_id, start, end, excerpt(content, start, end, secrets),
        )
        for rule, start, end in kept
    ]
    return sorted(found, key=lambda f: (severity_rank(f.severity), f.start, f.rule))


def _qualifies(rule: Rule, matched: str, allowed_hosts: tuple[str, ...]) -> bool:
    if rule.needs_digit and not (any(c.isdigit() for c in matched) and any(c.isalpha() for c in matched)):
        return False
    if rule.min_entropy is not None and shannon_entropy(matched) < rule.min_entropy:
        return False
    if rule.external_link:
        host = urlsplit(matched if "://" in matched else f"//{matched}").hostname or matched
        return not host_allowed(host, allowed_hosts)
    return True


def excerpt(content: str, start: int, end: int, secret_spans: Iterable[tuple[int, int]] = ()) -> str:
    """The match with some context, every secret in it masked and invisible characters spelled out."""
    lo, hi = max(0, start - EXCERPT_CONTEXT), min(len(content), end + EXCERPT_CONTEXT)
    spans = sorted({(s, e) for s, e in secret_spans if s < hi and lo < e})
    # A secret cut by the window's edge is shown whole (masked), never from its middle.
    lo, hi = min([lo, *(s for s, _e in spans)]), max([hi, *(e for _s, e in spans)])
    parts, at = [], lo
    for s, e in spans:
        if s < at:  # overlaps the secret just masked: its rest stays hidden too
            at = max(at, e)
            continue
        parts += [_visible(content[at:s]), mask(content[s:e])]
        at = e
    parts.append(_visible(content[at:hi]))
    text = " ".join("".join(parts).split())
    return ("…" if lo else "") + text + ("…" if hi < len(content) else "")


def _visible(text: str) -> str:
    return "".join(f"<U+{ord(c):04X}>" if _invisible(c) else c for c in text)


def _invisible(char: str) -> bool:
    code = ord(char)
    return (
        0x200B <= code <= 0x200D or code in (0x2060, 0xFEFF) or 0x202A <= code <= 0x202E
        or 0x2066 <= code <= 0x2069 or 0xE0000 <= code <= 0xE007F
    )
