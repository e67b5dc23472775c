"""positions.py: the rows a page read are remembered by position per query, so that a later page
seeks from the nearest one; all are forgotten when the file's change token moves."""

from __future__ import annotations

from mnemoscope.storage.native.db import positions
from mnemoscope.storage.native.db.positions import Positions


class Token:
    def __init__(self) -> None:
        self.value = "t1"

    def __call__(self) -> str:
        return self.value


def test_a_page_seeks_from_the_nearest_row_remembered_before_it() -> None:
    token = Token()
    known = Positions(token)
    assert known.nearest("q", 50) == ("t1", None, 50)  # nothing remembered: plain OFFSET
    known.learn("q", "t1", 9, ("2026-01-10", "m-9"))
    known.learn("q", "t1", 39, ("2026-01-40", "m-39"))
    assert known.nearest("q", 50) == ("t1", ("2026-01-40", "m-39"), 10)
    assert known.nearest("q", 40) == ("t1", ("2026-01-40", "m-39"), 0)
    assert known.nearest("q", 39) == ("t1", ("2026-01-10", "m-9"), 29)
    assert known.nearest("q", 5) == ("t1", None, 5)
    assert known.nearest("other query", 50) == ("t1", None, 50)


def test_a_change_of_the_file_forgets_every_position() -> None:
    token = Token()
    known = Positions(token)
    known.learn("q", "t1", 9, (1, "m-9"))
    token.value = "t2"
    assert known.nearest("q", 50) == ("t2", None, 50)
    known.learn("q", "t1", 9, (1, "m-9"))  # learnt from a read made before the change: dropped at the next look
    assert known.nearest("q", 50) == ("t2", None, 50)


def test_only_a_few_queries_and_positions_are_kept() -> None:
    known = Positions(lambda: "t")
    for n in range(positions.KEPT_QUERIES + 1):
        known.learn(f"q{n}", "t", 0, (n, f"m-{n}"))
    assert known.nearest("q0", 5)[1] is None  # the least recently used query went first
    assert known.nearest(f"q{positions.KEPT_QUERIES}", 5)[1] == (positions.KEPT_QUERIES, f"m-{positions.KEPT_QUERIES}")
    for position in range(positions.KEPT_POSITIONS + 1):
        known.learn("deep", "t", position, (position, f"m-{position}"))
    assert known.nearest("deep", 1) == ("t", None, 1)  # position 0, learnt first, was forgotten
    assert known.nearest("deep", 2) == ("t", (1, "m-1"), 0)
