"""What a caller asks of a store: filters and an order, run where the data lives."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from .model import Kind, Layer, Status


class Order(str, enum.Enum):
    RECENT = "recent"  # updated_at, newest first
    CREATED = "created"  # created_at, newest first
    SALIENCE = "salience"  # stored salience, highest first
    ACCESSED = "accessed"  # last_accessed, newest first


@dataclass(frozen=True)
class MemoryQuery:
    channels: tuple[str, ...] = ()
    layers: tuple[Layer, ...] = ()
    kinds: tuple[Kind, ...] = ()
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    since: datetime | None = None  # created_at >= since
    until: datetime | None = None  # created_at < until
    contains: str | None = None  # case-insensitive substring of content
    order: Order = Order.RECENT
    descending: bool = True

    def wants_kind(self, kind: Kind) -> bool:
        return not self.kinds or kind in self.kinds


def sort_key(order: Order):
    """The Python-side key matching each Order, for merging pages of several stores."""
    if order is Order.CREATED:
        return lambda m: (m.created_at, m.id)
    if order is Order.SALIENCE:
        return lambda m: (m.salience, m.id)
    if order is Order.ACCESSED:
        return lambda m: (m.last_accessed, m.id)
    return lambda m: (m.updated_at, m.id)
