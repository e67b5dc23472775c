"""What a recall preview returns: the ranked list an agent would be given for a question, each
hit with the terms its score is made of, what the system's filters dropped and the near misses
just under the cut."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..model import Memory

NEAR_MISSES = 3  # the near misses shown under the cut


@dataclass(frozen=True)
class Term:
    """One part of a score: a signal's value, and the weight the system gives it (None: a factor
    the rest is multiplied by, such as a boost)."""

    name: str
    value: float
    weight: float | None = None

    def text(self) -> str:
        if self.weight is None:
            return f"x {self.name} {self.value:.2f}"
        return f"{self.name} {self.value:.2f} x {self.weight:g}"


@dataclass(frozen=True)
class Scored:
    """A memory with the score the system's formula gives it, and how: terms summed in order,
    "x" terms multiplying the sum so far (formula: the same as text)."""

    memory: Memory
    score: float
    terms: tuple[Term, ...]
    formula: str = ""
    # Where in the system's retrieval it was found ("tier 2: scoped to preference", "shared", ...).
    found_by: str = ""

    def explanation(self) -> str:
        if self.formula and not self.terms:  # given unscored (a goal, an injected snippet)
            return self.formula
        if self.formula:
            return f"{self.formula} = {self.score:.3f}"
        summed = [t for t in self.terms if t.weight is not None]
        factors = [t for t in self.terms if t.weight is None]
        text = " + ".join(t.text() for t in summed) or "0"
        if factors:
            text = f"({text}) " + " ".join(t.text() for t in factors)
        return f"{text} = {self.score:.3f}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.memory.id, "channel": self.memory.channel, "layer": self.memory.layer.value,
            "content": self.memory.content, "score": round(self.score, 4),
            "signals": {t.name: round(t.value, 4) for t in self.terms},
            "weights": {t.name: t.weight for t in self.terms if t.weight is not None},
            "explanation": self.explanation(), "found_by": self.found_by,
        }


@dataclass(frozen=True)
class Dropped:
    """A memory the system found for the question and left out, and why."""

    memory: Memory
    reason: str
    scored: Scored | None = None  # its score, where the system scores before it filters

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.memory.id, "channel": self.memory.channel, "content": self.memory.content,
                "reason": self.reason, "score": round(self.scored.score, 4) if self.scored else None,
                "explanation": self.scored.explanation() if self.scored else None}


@dataclass
class RecallResult:
    """The list an agent would get, by the rules of the system that owns the store."""

    system: str  # whose rules ranked it: "AgentX", "SynthOrg", ...
    rules: str  # the rules in one line
    documented_by: str  # where they are written down
    documented: bool  # False: the owner documents no retrieval rules; plain search stood in
    question: str
    scope: dict[str, str]  # who asked and where: {"as": ..., "channel": ..., "session": ...}
    hits: list[Scored]
    near_misses: list[Scored] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    signal: str = "vector"  # what measured relevance: "vector", "keyword" or "hybrid"
    embedder: str | None = None
    # Lists the system puts in front of the agent besides the ranked hits, by title.
    extra: dict[str, list[Scored]] = field(default_factory=dict)

    def explain(self, memory_id: str) -> dict[str, Any]:
        """Where memory_id stands in this recall and why: rank and score, or what dropped it."""
        for rank, hit in enumerate(self.hits, 1):
            if hit.memory.id == memory_id:
                return {"id": memory_id, "status": f"recalled at rank {rank} of {len(self.hits)}",
                        **_why(hit)}
        for rank, hit in enumerate(self.near_misses, len(self.hits) + 1):
            if hit.memory.id == memory_id:
                cut = self.hits[-1].score if self.hits else 0.0
                return {"id": memory_id, "status": f"near miss at rank {rank}: under the cut "
                        f"(the last hit scores {cut:.3f})", **_why(hit)}
        for drop in self.dropped:
            if drop.memory.id == memory_id:
                why = _why(drop.scored) if drop.scored else {"explanation": None}
                return {"id": memory_id, "status": f"dropped: {drop.reason}", **why}
        for title, given in self.extra.items():
            for hit in given:
                if hit.memory.id == memory_id:
                    return {"id": memory_id, "status": f"listed under {title}", **_why(hit)}
        return {"id": memory_id, "status": "not found for this question: no signal brought it into the "
                f"{self.system} candidates", "explanation": None}

    def to_dict(self) -> dict[str, Any]:
        return {
            "system": self.system, "rules": self.rules, "documented_by": self.documented_by,
            "documented": self.documented, "question": self.question, "scope": self.scope,
            "signal": self.signal, "embedder": self.embedder, "notices": self.notices,
            "hits": [h.to_dict() for h in self.hits],
            "near_misses": [h.to_dict() for h in self.near_misses],
            "dropped": [d.to_dict() for d in self.dropped],
            "extra": {title: [h.to_dict() for h in hits] for title, hits in self.extra.items()},
        }


def _why(scored: Scored) -> dict[str, Any]:
    return {"score": round(scored.score, 4), "explanation": scored.explanation(),
            "signals": {t.name: round(t.value, 4) for t in scored.terms}, "found_by": scored.found_by}


def ranked(scored: Sequence[Scored]) -> list[Scored]:
    """Best first; equal scores by id, so a recall is the same every time."""
    return sorted(scored, key=lambda s: (-s.score, s.memory.id))


@dataclass(frozen=True)
class Ask:
    """A question, and who asks it where (None: the system's default)."""

    question: str
    as_agent: str | None = None
    channel: str | None = None
    session: str | None = None
    k: int | None = None  # how many the agent is given (None: the system's own default)
    now: datetime | None = None  # when it is asked (None: now)

    def scope(self) -> dict[str, str]:
        return {name: value for name, value in (("as", self.as_agent), ("channel", self.channel),
                                                ("session", self.session)) if value}
