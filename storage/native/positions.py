"""Remembered positions, so that a deep page seeks instead of counting rows.

OFFSET 900000 makes SQLite step over 900,000 index entries on every page; a seek (the rows after
a known (order value, id)) starts where it is asked to. Positions remembers the key of every
STEP-th row of a query, found as far as a page asks (each one SQLite's own OFFSET STEP-1 from
the one before, so reaching row 900,000 once costs what one OFFSET 900000 costs); a page at
offset n then seeks past the remembered row before n and skips fewer than STEP more. They are
forgotten when the file changes (its change token), and only a few queries' are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Select
from sqlalchemy.engine import Connection

STEP = 1000
KEPT_QUERIES = 8

Key = tuple[Any, str]  # (order value as stored, id)


@dataclass
class _Known:
    token: str
    keys: list[Key] = field(default_factory=list)  # keys[i]: the row at position (i + 1) * STEP - 1
    complete: bool = False  # the query has fewer than (len(keys) + 1) * STEP rows


class Positions:
    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token
        self._known: OrderedDict[Any, _Known] = OrderedDict()
        self._lock = threading.Lock()

    def nearest(
        self, conn: Connection, query: Any, offset: int, keys_after: Callable[[Key | None], Select[Any]]
    ) -> tuple[Key | None, int]:
        """(the remembered key before offset, how many rows past it offset is). keys_after(key)
        selects (order value, id) of the query's rows after key (all when None), in its order."""
        passed = offset // STEP
        if passed == 0:
            return None, offset
        known = self._entry(query)
        with self._lock:
            keys, complete = list(known.keys), known.complete
        while len(keys) < passed and not complete:
            found = conn.execute(keys_after(keys[-1] if keys else None).limit(1).offset(STEP - 1)).first()
            if found is None:
                complete = True
            else:
                keys.append((found[0], found[1]))
        with self._lock:
            if len(keys) > len(known.keys):
                known.keys, known.complete = keys, complete
        passed = min(passed, len(keys))
        return (keys[passed - 1], offset - passed * STEP) if passed else (None, offset)

    def _entry(self, query: Any) -> _Known:
        token = self._token()
        with self._lock:
            known = self._known.get(query)
            if known is None or known.token != token:
                known = self._known[query] = _Known(token)
            self._known.move_to_end(query)
            while len(self._known) > KEPT_QUERIES:
                self._known.popitem(last=False)
            return known
