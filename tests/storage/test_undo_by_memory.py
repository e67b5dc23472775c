"""Undo and redo with several curators on one store (two opens here; processes alike: the journal
is shared, each open remembers its own steps): a curator's Undo takes back its own last step
when another's later steps touched other memories, refuses as a conflict when they touched the
same one, and an open that made no step undoes the store's newest, as the command line does."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import ConflictError, Curator, open_store


def _two_rows(root: Path) -> tuple[str, str]:
    con = sqlite3.connect(root / "memory.db")
    try:
        first, second = (r[0] for r in con.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id LIMIT 2"))
    finally:
        con.close()
    return first, second


def test_each_curator_undoes_its_own_step_past_anothers_on_other_memories(demo_path: Path) -> None:
    x, y = _two_rows(demo_path)
    with open_store(demo_path) as a, open_store(demo_path) as b:
        x_before, y_before = a.get(x).content, a.get(y).content
        Curator(a).edit(x, content="a's edit of x")
        Curator(b).edit(y, content="b's edit of y")
        assert a.next_steps()[0].targets == (x,) and b.next_steps()[0].targets == (y,)
        Curator(a).undo()
        assert a.get(x).content == x_before and a.get(y).content == "b's edit of y"
        assert a.next_steps()[1].targets == (x,)  # a's redo is its own undone edit
        Curator(a).redo()
        assert a.get(x).content == "a's edit of x"
        Curator(b).undo()
        assert b.get(y).content == y_before and b.get(x).content == "a's edit of x"
    with open_store(demo_path) as fresh:  # made no step: the store's newest, as `mnemoscope undo`
        assert fresh.next_steps()[0].targets == (x,)


def test_a_curators_undo_over_anothers_later_change_of_the_same_memory_is_a_conflict(demo_path: Path) -> None:
    x, _y = _two_rows(demo_path)
    with open_store(demo_path) as a, open_store(demo_path) as b:
        Curator(a).edit(x, content="a's edit of x")
        Curator(b).edit(x, content="b's edit of x")
        with pytest.raises(ConflictError, match="changed since"):
            Curator(a).undo()
        assert a.get(x).content == "b's edit of x"
        Curator(b).undo()
        Curator(a).undo()
        assert a.get(x).content not in ("a's edit of x", "b's edit of x")
