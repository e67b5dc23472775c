"""The memories of least effective salience, found without computing it for every row.

Effective salience is ``min(1, salience x rate ^ days idle x boost)``, boost >= 1. A row that is
neither among the k of least stored salience (the (status, salience, id) index) nor among the k
least recently accessed (the (status, last_accessed, id) index) has salience >= the k-th's and
has been idle no longer than the k-th oldest, so its effective salience is at least
``bound = s_k x rate ^ idle_k``. Take the weakest ``limit`` of those 2k candidates, effective
salience computed by the database (the expression the whole-store query orders by); if the last
of them is below ``bound``, no row outside the candidates can take its place: the answer is the
whole-store query's. Otherwise k grows, and past ``LAST_ROUND`` the whole store is ordered (the
old way). This is Fagin's threshold algorithm over two sorted lists.

Assumes what the native tables hold: a salience >= 0 and an access count >= 0 (NOT NULL columns),
and last_accessed written in one ISO form, so that its text order is its time order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...model import Status
from ...sqlite_engine import AnyConnection as Connection
from ...timeutil import as_utc, parse_time
from . import schema

if TYPE_CHECKING:
    from sqlalchemy import Select

FIRST_ROUND = 500  # candidates per index in the first round; x10 each round after
LAST_ROUND = 50_000
MARGIN = 1e-9  # the bound, computed in Python, must beat the database's value by this much (relative)


def lowest_rows(
    conn: Connection, effective: Any, rate: float, boost: float, at: datetime, limit: int,
    first_round: int = FIRST_ROUND,
) -> tuple[list[Any], int]:
    """The active rows of least effective salience, weakest first (then by id), as the whole-store
    ``ORDER BY effective, id LIMIT limit`` returns them, and the number of candidates it took
    (0: the whole store was ordered). effective: the database's expression for it."""
    from sqlalchemy import select

    if limit <= 0:
        return [], 0
    m = schema.memories.c
    active = m.status == Status.ACTIVE.value
    if 0.0 < rate <= 1.0 and boost >= 0.0:
        k = max(first_round, limit)
        while k <= LAST_ROUND:
            rows, kth = _round(conn, effective, active, limit, k)
            if kth is None:  # fewer than k active rows: every one was a candidate
                return rows, k
            weakest = rows[-1]._mapping["effective"] if len(rows) == limit else None
            if weakest is not None and weakest < 1.0 and _bound(kth, rate, at) > weakest * (1 + MARGIN):
                return rows, k
            k *= 10
    whole = select(schema.memories, effective.label("effective")).where(active).order_by(effective.asc(), m.id)
    return list(conn.execute(whole.limit(limit))), 0


def _round(conn: Connection, effective: Any, active: Any, limit: int, k: int) -> tuple[list[Any], tuple[Any, Any] | None]:
    from sqlalchemy import select, union

    m = schema.memories.c
    by_salience = select(m.id).where(active).order_by(m.salience, m.id).limit(k).subquery()
    by_access = select(m.id).where(active).order_by(m.last_accessed, m.id).limit(k).subquery()
    candidates = union(select(by_salience.c.id), select(by_access.c.id)).subquery()
    stmt = (select(schema.memories, effective.label("effective"))
            .where(m.id.in_(select(candidates.c.id))).order_by(effective.asc(), m.id).limit(limit))
    rows = list(conn.execute(stmt))
    kth_salience = conn.execute(_kth(m.salience, active, k)).scalar()
    kth_accessed = conn.execute(_kth(m.last_accessed, active, k)).scalar()
    if kth_salience is None or kth_accessed is None:
        return rows, None
    return rows, (kth_salience, kth_accessed)


def _kth(column: Any, active: Any, k: int) -> Select[Any]:
    from sqlalchemy import select

    return select(column).where(active).order_by(column, schema.memories.c.id).offset(k - 1).limit(1)


def _bound(kth: tuple[Any, Any], rate: float, at: datetime) -> float:
    """The least effective salience a row outside the candidates can have (its boost >= 1)."""
    salience, accessed = kth
    last = parse_time(accessed)
    if last is None or not isinstance(salience, (int, float)) or math.isnan(salience):
        return -math.inf
    days = max((as_utc(at) - as_utc(last)).total_seconds() / 86400.0, 0.0)
    return float(salience) * rate ** days


def memories_of(rows: Sequence[Any], decode: Callable[[dict[str, Any]], Any]) -> list[Any]:
    """The rows as memories (the effective column dropped)."""
    return [decode({k: v for k, v in row._mapping.items() if k != "effective"}) for row in rows]
