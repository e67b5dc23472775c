"""Salience decay: how a memory fades when nobody reads it (seed 002, DESIGN).

effective(t) = min(1, salience * rate ** days_since_access(t) * (1 + boost * ln(1 + access_count)))

Defaults: rate 0.95/day (half-life ~13.5 days), boost 0.1, cleanup threshold 0.1
for memories not accessed in 30 days. All four are per-store settings.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from .model import Memory
from .timeutil import as_utc


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

    def boost(self, access_count: int) -> float:
        return 1.0 + self.access_boost * math.log1p(max(access_count, 0))

    def effective(self, memory: Memory, at: datetime) -> float:
        days = (as_utc(at) - as_utc(memory.last_accessed)).total_seconds() / 86400.0
        return self.effective_raw(memory.salience, days, memory.access_count)

    def effective_raw(self, salience: float, days_idle: float, access_count: int) -> float:
        decay = self.decay_rate ** max(days_idle, 0.0)
        return min(1.0, max(0.0, salience * decay * self.boost(access_count)))

    def crossing_date(self, memory: Memory) -> datetime | None:
        """When effective salience falls below the cleanup threshold (None: never)."""
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
        """Sampled effective salience between two dates (past, now and projected)."""
        start, end = as_utc(start), as_utc(end)
        step = (end - start) / max(points - 1, 1)
        return [(start + step * i, self.effective(memory, start + step * i)) for i in range(points)]

    def report(self, memory: Memory, at: datetime) -> dict[str, Any]:
        crossing = self.crossing_date(memory)
        cleanup = self.cleanup_date(memory)
        return {
            "id": memory.id,
            "stored_salience": memory.salience,
            "access_count": memory.access_count,
            "last_accessed": as_utc(memory.last_accessed).isoformat(),
            "at": as_utc(at).isoformat(),
            "effective": round(self.effective(memory, at), 6),
            "crosses_threshold_at": crossing.isoformat() if crossing else None,
            "cleanup_candidate_from": cleanup.isoformat() if cleanup else None,
            "cleanup_candidate": self.is_cleanup_candidate(memory, at),
        }

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["half_life_days"] = round(self.half_life_days, 2)
        return d


@dataclass(frozen=True)
class PromotionThresholds:
    """Seed 002 defaults for project -> _global promotion."""

    confidence: float = 0.85
    access_count: int = 5
    conversations: int = 2

    def check(self, memory: Memory) -> dict[str, Any]:
        checks = {
            "confidence": (memory.confidence, self.confidence, memory.confidence >= self.confidence),
            "access_count": (
                memory.access_count,
                self.access_count,
                memory.access_count >= self.access_count,
            ),
            "conversations": (
                memory.conversations,
                self.conversations,
                memory.conversations >= self.conversations,
            ),
        }
        return {
            "thresholds": asdict(self),
            "values": {k: v[0] for k, v in checks.items()},
            "met": {k: v[2] for k, v in checks.items()},
            "all_met": all(v[2] for v in checks.values()),
        }
