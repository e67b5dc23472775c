"""Scanning text for findings: each rule's matches, with a span, a fingerprint and a masked excerpt."""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .checks import CHECKS
from .decoding import DECODERS
from .rules import Rule, RuleSet, default_rules, severity_rank

EXCERPT_CONTEXT = 24  # characters shown either side of a match
SHOWN_SECRET_CHARS = 4
SPELLED_RUN = 4  # invisible characters spelled out in a row; the rest are counted


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
    lowered = content.lower()
    raw = _matches(rules, content, lowered, tuple(allowed_hosts), 0)
    if not raw:
        return []
    strong = [(s, e) for r, s, e, _d in raw if not r.yields]
    kept, seen = [], set()
    for rule, start, end, decoded in raw:
        if rule.yields and any(start < e2 and s2 < end for s2, e2 in strong):
            continue
        if (rule.category, start, end) in seen:  # two rules of a kind over the same text: the first says it
            continue
        seen.add((rule.category, start, end))
        kept.append((rule, start, end, decoded))
    secrets = [(s, e) for r, s, e, _d in kept if r.category == "secret"]
    found = [
        Finding(
            fingerprint(rule.id, memory_id, content[start:end]), rule.id, rule.category, rule.severity, rule.title,
            memory_id, start, end, excerpt(content, start, end, secrets) + _decoded_note(decoded),
        )
        for rule, start, end, decoded in kept
    ]
    return sorted(found, key=lambda f: (severity_rank(f.severity), f.start, f.rule))


MAX_DEPTH = 2  # an encoded payload inside an encoded payload is decoded; one more level is not
DECODED_SHOWN = 60


def _matches(
    rules: RuleSet, content: str, lowered: str, allowed: tuple[str, ...], depth: int
) -> list[tuple[Rule, int, int, str]]:
    """Each rule's qualifying matches as (rule, start, end, the text it decodes to or "")."""
    active = rules.active(content, lowered)
    if not active:  # most texts
        return []
    raw: list[tuple[Rule, int, int, str]] = []
    found: dict[tuple[str, bool], list[re.Match[str]]] = {}  # two rules may share a pattern: it runs once
    same_length = len(lowered) == len(content)
    for rule in active:
        over_lowered = rule.lowered and same_length
        key = (rule.pattern.pattern, over_lowered)
        if key not in found:
            pattern = rule.case_blind if rule.lowered and not same_length else rule.pattern
            found[key] = list(pattern.finditer(lowered if over_lowered else content))
        for match in found[key]:
            start, end = match.span(rule.group)
            if start < 0 or start == end or not _qualifies(rule, content, start, end, allowed):
                continue
            if not rule.decode:
                raw.append((rule, start, end, ""))
                continue
            decoded = DECODERS[rule.decode](content[start:end]) if depth < MAX_DEPTH else None
            instruction = decoded if decoded is not None and _holds_instruction(rules, decoded, depth + 1) else ""
            if rule.decoded_only:  # a token that is a finding only for what it says decoded
                if instruction:
                    raw.append((rule, start, end, instruction))
                continue
            raw.append((rule, start, end, ""))
            also = rules.by_id.get(rule.decoded_as) if instruction else None
            if also is not None:  # hidden characters that spell an instruction: both
                raw.append((also, start, end, instruction))
    return raw


def _holds_instruction(rules: RuleSet, text: str, depth: int) -> bool:
    """Whether decoded text asks the model for something (an injection rule finds it)."""
    return bool(_matches(rules.instructions, text, text.lower(), (), depth))


def _decoded_note(decoded: str) -> str:
    if not decoded:
        return ""
    shown = " ".join(decoded.split())
    shown = shown[:DECODED_SHOWN] + ("…" if len(shown) > DECODED_SHOWN else "")
    return f" (decodes to: {_visible(shown)})"


def _qualifies(rule: Rule, content: str, start: int, end: int, allowed_hosts: tuple[str, ...]) -> bool:
    matched = content[start:end]
    if rule.needs_digit and not (any(c.isdigit() for c in matched) and any(c.isalpha() for c in matched)):
        return False
    if rule.min_entropy is not None and shannon_entropy(matched) < rule.min_entropy:
        return False
    if rule.check and not CHECKS[rule.check](content, start, end):
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
    """text with invisible characters spelled out (a long run: its first few and how many more)."""
    out, run = [], []
    for c in [*text, ""]:
        if c and _invisible(c):
            run.append(c)
            continue
        shown = [f"<U+{ord(r):04X}>" for r in run[:SPELLED_RUN]]
        out += shown + ([f"<+{len(run) - SPELLED_RUN} more>"] if len(run) > SPELLED_RUN else []) + [c]
        run = []
    return "".join(out)


def _invisible(char: str) -> bool:
    code = ord(char)
    return (
        0x200B <= code <= 0x200D or 0x2060 <= code <= 0x2064 or code in (0x180E, 0xFEFF) or 0x202A <= code <= 0x202E
        or 0x2066 <= code <= 0x2069 or 0xE0000 <= code <= 0xE007F or 0xFE00 <= code <= 0xFE0D
        or 0xE0100 <= code <= 0xE01EF
    )
