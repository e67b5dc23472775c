"""What a caller asks of a store: filters and an order, run where the data lives."""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass
from datetime import datetime

from .model import Kind, Layer, Memory, Status
from .salience import SalienceModel, salience_kept
from .timeutil import as_utc, utcnow


class Order(str, enum.Enum):
    RECENT = "recent"  # updated_at, newest first
    CREATED = "created"  # created_at, newest first
    SALIENCE = "salience"  # stored salience, highest first
    ACCESSED = "accessed"  # last_accessed, newest first
    EFFECTIVE_SALIENCE = "effective_salience"  # decayed salience (the salience view's), highest first


@dataclass(frozen=True)
class MemoryQuery:
    channels: tuple[str, ...] = ()
    layers: tuple[Layer, ...] = ()
    kinds: tuple[Kind, ...] = ()
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    since: datetime | None = None  # created_at >= since
    until: datetime | None = None  # created_at < until
    contains: str | None = None  # case-insensitive substring of content
    ids: tuple[str, ...] = ()  # only the memories of these ids (none: no such filter)
    order: Order = Order.RECENT
    descending: bool = True
    decay: SalienceModel = SalienceModel()  # the decay Order.EFFECTIVE_SALIENCE orders by

    def wants_kind(self, kind: Kind) -> bool:
        return not self.kinds or kind in self.kinds

    @functools.cached_property
    def id_set(self) -> frozenset[str]:
        """ids as a set, made once per query (a map selection holds up to ~20,000)."""
        return frozenset(self.ids)


def sort_key(order: Order, decay: SalienceModel = SalienceModel()):
    """The Python-side key matching each Order, for merging pages of several stores."""
    if order is Order.CREATED:
        return lambda m: (m.created_at, m.id)
    if order is Order.SALIENCE:
        return lambda m: (m.salience if m.salience is not None and salience_kept(m).kept else -math.inf, m.id)
    if order is Order.ACCESSED:
        return lambda m: (m.last_accessed, m.id)
    if order is Order.EFFECTIVE_SALIENCE:
        now = utcnow()
        return lambda m: (effective_salience_key(m, decay, now), m.id)
    return lambda m: (m.updated_at, m.id)


SMALLEST_SALIENCE = 1e-9  # ln(0) has no value: a salience of 0 orders as this


def effective_salience_key(memory: Memory, decay: SalienceModel, now: datetime | None = None) -> float:
    """ln of the memory's effective salience, but for a term that is the same for every memory
    at any one time: ln(salience) - days from the epoch to the last access x ln(rate) +
    ln(boost). It orders memories as effective salience does now, whenever "now" is (the cap at
    1 aside, which only makes ties), so that a database can order by it, and sources agree.
    A salience its owner decays itself is its effective value at any time: its key is ln of it
    less the common term at ``now`` (default: this moment); one its owner keeps none of, the
    lowest key there is (last, highest first)."""
    kept = salience_kept(memory)
    if memory.salience is None or not kept.kept:
        return -math.inf
    if not kept.decayed_here:
        now_days = as_utc(now or utcnow()).timestamp() / 86400.0
        return math.log(max(memory.salience, SMALLEST_SALIENCE)) - now_days * math.log(decay.decay_rate)
    days = as_utc(memory.last_accessed).timestamp() / 86400.0
    return (math.log(max(memory.salience, SMALLEST_SALIENCE)) - days * math.log(decay.decay_rate)
            + math.log(decay.boost(memory.access_count)))
