"""The first rows of a page in "Salience now" order, found without computing it for every row.

The table sorts by the key of effective salience (query.effective_salience_key), which in SQL is
``ln(max(salience, e)) + days(last_accessed) x c + ln(1 + boost x ln(1 + access_count))`` with
``c = -ln(rate) >= 0``: it grows with the stored salience, with the last access and with the
access count. No index holds it (an index on ``ln`` would break every program whose SQLite has no
math functions), so ordering the whole store by it reads every row: 0.8-0.9 s at 1M.

Fagin's threshold algorithm over two indexes, as lowest_salience.py does for the weakest: take
the k first rows in stored-salience order and the k first in last-access order (the same
direction), order those candidates by the key and keep the first n. A row that is in neither
list has a salience and a last access no further ahead than the k-th's, so its key is at most
(descending; at least, ascending) the bound made of those two and of the access term's extreme:
0 ascending (an access count is >= 0), and the largest access count's term descending (one scan
of that column, a fifth of ordering the store). When the n-th candidate is strictly past the
bound, no other row can come before it: the rows are the whole-store query's. Else k grows, and
past LAST_ROUND the caller orders the whole store.

Assumes what the native tables hold: salience, last_accessed and access_count NOT NULL, and
last_accessed written in one ISO form, so that its text order is its time order (as
lowest_salience.py does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from ...query import SMALLEST_SALIENCE
from ...timeutil import as_utc, parse_time

FIRST_ROUND = 1000  # candidates per index in the first round (at least 4 x n); x10 each round after
LAST_ROUND = 50_000
MOST_ROWS = 5_000  # pages reaching further down order the whole store
MARGIN = 1e-9  # the bound, computed in Python, must beat the database's key by this much (relative)
KEY = "salience_now_key"
LISTS = ("salience", "last_accessed")  # the indexed columns whose heads are the candidates

Fetch = Callable[[str, Sequence[Any]], tuple[list[str], list[Any]]]


def first_rows(
    fetch: Fetch, where: str, params: Sequence[Any], key_sql: str, *, descending: bool, n: int,
    rate: float, boost: float,
) -> tuple[list[str], list[Any]] | None:
    """The column names and the first n rows of ``SELECT * FROM memories{where} ORDER BY key,
    id`` (both descending with descending), or None when the candidates cannot prove them (the
    caller orders the whole store). fetch(sql, params): names and rows of a query."""
    if not (0.0 < rate <= 1.0 and boost >= 0.0) or not 0 < n <= MOST_ROWS:
        return None
    direction = "DESC" if descending else "ASC"
    access_term: float | None = 0.0 if not descending else None
    k = max(FIRST_ROUND, 4 * n)
    while k <= LAST_ROUND:
        lists = " UNION ".join(
            f"SELECT id FROM (SELECT id FROM memories{where} ORDER BY {column} {direction}, id {direction} LIMIT {k}) AS l{i}"
            for i, column in enumerate(LISTS)
        )
        names, rows = fetch(
            f"SELECT *, {key_sql} AS {KEY} FROM memories WHERE id IN ({lists}) "
            f"ORDER BY {key_sql} {direction}, id {direction} LIMIT {n}",
            [*params, *params],
        )
        kth = [_kth(fetch, where, params, column, direction, k) for column in LISTS]
        if kth[0] is None or kth[1] is None:  # a list holds every row the query keeps: all were candidates
            return _without_key(names, rows)
        if access_term is None:
            access_term = _access_term(fetch, where, params, boost)
        bound = _bound(kth[0], kth[1], -math.log(rate), access_term)
        last = rows[-1][-1] if len(rows) == n else None
        if bound is not None and last is not None:
            margin = MARGIN * max(1.0, abs(bound))
            if (last > bound + margin) if descending else (last < bound - margin):
                return _without_key(names, rows)
        k *= 10
    return None


def _kth(fetch: Fetch, where: str, params: Sequence[Any], column: str, direction: str, k: int) -> Any:
    """The column's value in the k-th row of its list (None: the list holds fewer rows)."""
    rows = fetch(f"SELECT {column} FROM memories{where} ORDER BY {column} {direction}, id {direction} "
                 f"LIMIT 1 OFFSET {k - 1}", params)[1]
    return rows[0][0] if rows else None


def _access_term(fetch: Fetch, where: str, params: Sequence[Any], boost: float) -> float:
    """The access term of the largest access count the query keeps (0 when there is none)."""
    rows = fetch(f"SELECT max(access_count) FROM memories{where}", params)[1]
    most = rows[0][0] if rows and isinstance(rows[0][0], (int, float)) else 0
    return math.log(1.0 + boost * math.log(1.0 + max(most, 0)))


def _bound(salience: Any, accessed: Any, c: float, access_term: float) -> float | None:
    """The key of a row at the k-th salience and the k-th last access with access_term: none
    outside the candidates is further ahead. None when a value cannot be read."""
    last = accessed if isinstance(accessed, datetime) else parse_time(accessed)
    if last is None or not isinstance(salience, (int, float)) or math.isnan(salience):
        return None
    days = as_utc(last).timestamp() / 86400.0
    return math.log(max(float(salience), SMALLEST_SALIENCE)) + days * c + access_term


def _without_key(names: list[str], rows: list[Any]) -> tuple[list[str], list[Any]]:
    return names[:-1], [row[:-1] for row in rows]
