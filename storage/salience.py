"""Decay: how memories, entities and inferred facts fade when nobody reads them (seed 002, DESIGN).

A memory's salience, continuously:
    effective(t) = min(1, salience * rate ** days_since_access(t) * (1 + boost * ln(1 + access_count)))
    defaults: rate 0.95/day (half-life ~13.5 days), boost 0.1, cleanup threshold 0.1 for
    memories not accessed in 30 days.
An entity's salience, by seed 002's daily job (entities not accessed in 24 h lose 5%):
    salience * rate ** whole_days_since_access(t), rate 0.95; cleanup deletes entities below
    0.1 not accessed in 30 days.
An inferred fact's confidence, by its weekly job (slower):
    confidence * rate ** whole_weeks_since_access(t), rate 0.95, for facts whose certainty is
    "inferred" or "uncertain" (seed 002's calibration: 0.70 and 0.50; explicit 0.95, implied 0.85).
Every parameter is a per-store setting.

That model is Mnemoscope's own, for the salience Mnemoscope's store keeps. A store another system
wrote is shown as that system holds it: a format declares whose salience its memories carry
(declare_salience), keyed by a memory's SourceRef.format (else its kind). OWNERS_DECAY: the owner's
score, decayed already by its own formula (the five-layer agent's decay_score), is shown as it is,
once, never decayed again, with no crossing date or cleanup call of Mnemoscope's; NOT_KEPT: the
owner keeps none (workspace markdown: SOUL.md, AGENTS.md, MEMORY.md, a daily log...), so its
memories have no effective salience, are never at risk nor cleanup candidates, and show none.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from .model import Entity, Memory
from .timeutil import as_utc

# Whose salience a memory carries.
MNEMOSCOPE_DECAY = "mnemoscope"  # a stored salience SalienceModel decays (Mnemoscope's own store; the default)
OWNERS_DECAY = "owner"  # the owner's score, decayed by its own formula already: shown as it is, once
NOT_KEPT = "not kept"  # the owner keeps no salience: absent, never at risk nor a cleanup candidate


@dataclass(frozen=True)
class SalienceKept:
    """Whose salience the memories of one store format carry, and what the owner calls it."""

    decay: str = MNEMOSCOPE_DECAY
    what: str = ""

    @property
    def decayed_here(self) -> bool:
        """Whether Mnemoscope's SalienceModel decays it (else it is shown as stored, or not at all)."""
        return self.decay == MNEMOSCOPE_DECAY

    @property
    def kept(self) -> bool:
        return self.decay != NOT_KEPT

    def describe(self) -> str:
        if self.decay == OWNERS_DECAY:
            return f"{self.what or 'the owner’s score'}: shown as the owner keeps it, not decayed again"
        if self.decay == NOT_KEPT:
            return f"no salience ({self.what or 'its owner'} keeps none)"
        return ""


_MNEMOSCOPES = SalienceKept()
_NONE_KEPT = SalienceKept(NOT_KEPT)
_DECLARED: dict[str, SalienceKept] = {}


def declare_salience(store_format: str, decay: str, what: str = "") -> SalienceKept:
    """Declare whose salience the memories of store_format (a SourceRef.format, or a kind's value
    for a source that names no format) carry: MNEMOSCOPE_DECAY, OWNERS_DECAY or NOT_KEPT."""
    if decay not in (MNEMOSCOPE_DECAY, OWNERS_DECAY, NOT_KEPT):
        raise ValueError(f"unknown salience decay {decay!r}")
    kept = _DECLARED[store_format] = SalienceKept(decay, what)
    return kept


def salience_kept(memory: Memory) -> SalienceKept:
    """Whose salience memory carries (Mnemoscope's, unless its format declared otherwise; none
    where the memory holds none)."""
    declared = _DECLARED.get(memory.source.format or memory.source.kind.value, _MNEMOSCOPES)
    return _NONE_KEPT if memory.salience is None and declared.kept else declared


def shown_salience(memory: Memory) -> float | None:
    """The memory's stored salience, None where its owner keeps none."""
    return memory.salience if salience_kept(memory).kept else None


@dataclass(frozen=True)
class SalienceModel:
    decay_rate: float = 0.95
    access_boost: float = 0.1
    cleanup_threshold: float = 0.1
    cleanup_min_idle_days: int = 30

    def __post_init__(self) -> None:
        if not 0.0 < self.decay_rate <= 1.0:
            raise ValueError(f"decay rate must be in (0, 1], got {self.decay_rate}")

    @property
    def half_life_days(self) -> float:
        if self.decay_rate >= 1.0:
            return math.inf
        return math.log(0.5) / math.log(self.decay_rate)

    def boost(self, access_count: int | None) -> float:
        """The access boost; a store that counts no accesses (None) gets none."""
        return 1.0 + self.access_boost * math.log1p(max(access_count or 0, 0))

    def effective(self, memory: Memory, at: datetime) -> float | None:
        """The memory's salience at ``at``: decayed by this model where it is Mnemoscope's to decay,
        else as stored (the owner's, decayed already); None where its store keeps no salience."""
        kept = salience_kept(memory)
        if memory.salience is None or not kept.kept:
            return None
        if not kept.decayed_here:
            return min(1.0, max(0.0, memory.salience))
        days = (as_utc(at) - as_utc(memory.last_accessed)).total_seconds() / 86400.0
        return self.effective_raw(memory.salience, days, memory.access_count)

    def effective_shown(self, memory: Memory, at: datetime) -> float | None:
        """effective(): None where the memory's owner keeps no salience."""
        return self.effective(memory, at)

    def effective_raw(self, salience: float, days_idle: float, access_count: int | None) -> float:
        decay = self.decay_rate ** max(days_idle, 0.0)
        return min(1.0, max(0.0, salience * decay * self.boost(access_count)))

    def crossing_date(self, memory: Memory) -> datetime | None:
        """When effective salience falls below the cleanup threshold (None: never, or not this
        model's to say: a salience the owner decays itself, or none)."""
        if memory.salience is None or not salience_kept(memory).decayed_here:
            return None
        start = memory.salience * self.boost(memory.access_count)
        last = as_utc(memory.last_accessed)
        if start < self.cleanup_threshold:
            return last
        if self.decay_rate >= 1.0 or start <= 0:
            return None
        days = math.log(self.cleanup_threshold / start) / math.log(self.decay_rate)
        return last + timedelta(days=days)

    def cleanup_date(self, memory: Memory) -> datetime | None:
        """When the memory becomes a cleanup candidate: below threshold and idle long enough."""
        crossing = self.crossing_date(memory)
        if crossing is None:
            return None
        idle_floor = as_utc(memory.last_accessed) + timedelta(days=self.cleanup_min_idle_days)
        return max(crossing, idle_floor)

    def is_cleanup_candidate(self, memory: Memory, at: datetime) -> bool:
        date = self.cleanup_date(memory)
        return date is not None and date <= as_utc(at)

    def curve(
        self, memory: Memory, start: datetime, end: datetime, points: int = 60
    ) -> list[tuple[datetime, float]]:
        """Sampled effective salience between two dates (past, now and projected); none where the
        salience is not this model's to decay (the owner's formula, past and future, is its own)."""
        if not salience_kept(memory).decayed_here:
            return []
        start, end = as_utc(start), as_utc(end)
        step = (end - start) / max(points - 1, 1)
        points_at = [start + step * i for i in range(points)]
        return [(t, value) for t in points_at if (value := self.effective(memory, t)) is not None]

    def report(self, memory: Memory, at: datetime) -> dict[str, Any]:
        """One memory's salience now: effective and stored (None where its owner keeps none),
        whose decay it is, and (Mnemoscope's decay only) its crossing and cleanup dates."""
        kept = salience_kept(memory)
        crossing = self.crossing_date(memory)
        cleanup = self.cleanup_date(memory)
        effective = self.effective_shown(memory, at)
        return {
            "id": memory.id,
            "stored_salience": shown_salience(memory),
            "access_count": memory.access_count,
            "last_accessed": as_utc(memory.last_accessed).isoformat(),
            "at": as_utc(at).isoformat(),
            "effective": round(effective, 6) if effective is not None else None,
            "decay": kept.decay,
            "crosses_threshold_at": crossing.isoformat() if crossing else None,
            "cleanup_candidate_from": cleanup.isoformat() if cleanup else None,
            "cleanup_candidate": self.is_cleanup_candidate(memory, at) if kept.decayed_here else None,
        }

    def formula_of(self, memory: Memory) -> str:
        """The formula the memory's salience is shown by (whose decay it is, where not this model's)."""
        kept = salience_kept(memory)
        return self.formula() if kept.decayed_here else kept.describe()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["half_life_days"] = round(self.half_life_days, 2)
        return d

    def formula(self) -> str:
        return (f"min(1, salience x {self.decay_rate:g} ^ days since last access x "
                f"(1 + {self.access_boost:g} x ln(1 + accesses)))")


@dataclass(frozen=True)
class PromotionThresholds:
    """Seed 002 defaults for project -> _global promotion."""

    confidence: float = 0.85
    access_count: int = 5
    conversations: int = 2

    def check(self, memory: Memory) -> dict[str, Any]:
        """Each threshold against the memory's value; a value its store does not keep meets none."""
        checks: dict[str, tuple[float | None, float]] = {
            "confidence": (memory.confidence, self.confidence),
            "access_count": (memory.access_count, self.access_count),
            "conversations": (memory.conversations, self.conversations),
        }
        met = {k: value is not None and value >= limit for k, (value, limit) in checks.items()}
        return {
            "thresholds": asdict(self),
            "values": {k: v[0] for k, v in checks.items()},
            "met": met,
            "all_met": all(met.values()),
            "failed": [f"{k} {value:g} < {limit:g}" if value is not None else f"{k} not kept by this store"
                       for k, (value, limit) in checks.items() if not met[k]],
        }


def _idle_days(last: datetime | None, at: datetime) -> float:
    return max((as_utc(at) - as_utc(last)).total_seconds() / 86400.0, 0.0) if last is not None else 0.0


@dataclass(frozen=True)
class EntityDecay:
    """Seed 002: "Entity salience: daily decay for entities not accessed in 24h", by
    decayed = initial * rate ** days_since_access; cleanup "deletes entities with salience
    < 0.1 not accessed in 30 days". The daily job decays an entity once per whole idle day."""

    rate: float = 0.95
    cleanup_threshold: float = 0.1
    cleanup_min_idle_days: int = 30

    def effective(self, entity: Entity, at: datetime) -> float:
        return entity.salience * self.rate ** math.floor(_idle_days(entity.last_accessed, at))

    def is_cleanup_candidate(self, entity: Entity, at: datetime) -> bool:
        return (entity.last_accessed is not None and _idle_days(entity.last_accessed, at) >= self.cleanup_min_idle_days
                and self.effective(entity, at) < self.cleanup_threshold)

    def formula(self) -> str:
        return f"salience x {self.rate:g} ^ whole days since last access (once a day, after 24 h idle)"


@dataclass(frozen=True)
class InferredFactDecay:
    """Seed 002: "Fact confidence: weekly decay for inferred facts (slower decay)". A fact is
    inferred when its certainty label says so (metadata "certainty": inferred or uncertain) or,
    unlabelled, when its confidence is at most the seed's calibration of "inferred" (0.70)."""

    rate: float = 0.95
    period_days: float = 7.0
    labels: tuple[str, ...] = field(default=("inferred", "uncertain"))
    inferred_confidence: float = 0.70

    def applies(self, memory: Memory) -> bool:
        label = memory.metadata.get("certainty")
        if memory.confidence is None:
            return False
        if isinstance(label, str) and label:
            return label.lower() in self.labels
        return memory.confidence <= self.inferred_confidence

    def effective(self, memory: Memory, at: datetime) -> float | None:
        if memory.confidence is None or not self.applies(memory):
            return memory.confidence
        return memory.confidence * self.rate ** math.floor(_idle_days(memory.last_accessed, at) / self.period_days)

    def formula(self) -> str:
        return f"confidence x {self.rate:g} ^ whole weeks since last access ({self.period_days:g}-day periods)"
