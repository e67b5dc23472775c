"""Remembered positions, so that a page near one already read seeks instead of counting rows.

OFFSET 900000 makes SQLite step over 900,000 index entries on every page; a seek (the rows
after a known (order value, id)) starts where it is asked to. Every page read teaches where its
rows stand: the row just before it and its last row are remembered by position, per query. A
later page at offset n seeks past the nearest remembered row at or before n and skips only the
rows between (the next page, the page above, a scrollbar dragged back near where it was), so
only the first jump to a far place pays what OFFSET pays. Positions are forgotten when the file
changes (its change token), and only a few queries' are kept.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KEPT_QUERIES = 8
KEPT_POSITIONS = 4096  # per query; the oldest learnt go first

Key = tuple[Any, str]  # (order value as stored, id)


@dataclass
class _Known:
    token: str
    positions: list[int] = field(default_factory=list)  # sorted
    keys: dict[int, Key] = field(default_factory=dict)  # position -> key of the row there
    learnt: list[int] = field(default_factory=list)  # positions in the order they were learnt


class Positions:
    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token
        self._known: OrderedDict[Any, _Known] = OrderedDict()
        self._lock = threading.Lock()

    def nearest(self, query: Any, offset: int) -> tuple[str, Key | None, int]:
        """(the file's change token now, the key of the nearest remembered row before offset,
        how many rows after it offset is); the key is None when none is remembered."""
        token = self._token()
        with self._lock:
            known = self._entry(query, token)
            at = bisect.bisect_left(known.positions, offset) - 1
            if at < 0:
                return token, None, offset
            position = known.positions[at]
            return token, known.keys[position], offset - position - 1

    def learn(self, query: Any, token: str, position: int, key: Key) -> None:
        """The row at position (0-based, in the query's order) has key, read after the file had
        change token token (as nearest gave it): if the file changed since, the next nearest
        sees another token and forgets it."""
        with self._lock:
            known = self._entry(query, token)
            if position in known.keys:
                return
            bisect.insort(known.positions, position)
            known.keys[position] = key
            known.learnt.append(position)
            if len(known.learnt) > KEPT_POSITIONS:
                oldest = known.learnt.pop(0)
                known.positions.remove(oldest)
                del known.keys[oldest]

    def _entry(self, query: Any, token: str) -> _Known:
        known = self._known.get(query)
        if known is None or known.token != token:
            known = self._known[query] = _Known(token)
        self._known.move_to_end(query)
        while len(self._known) > KEPT_QUERIES:
            self._known.popitem(last=False)
        return known
