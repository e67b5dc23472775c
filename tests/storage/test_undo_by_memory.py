"""Undo and redo with several curators on one store (two opens here; processes alike: the journal
is shared, each open remembers its own steps): a curator's Undo takes back its own last step
when another's later steps touched other memories, goes in the store's order when they touched
the same one, and an open that made no step undoes the store's newest, as the command line
does. A step two curators undo at once is undone once."""

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


def test_a_curators_undo_under_anothers_later_change_of_the_same_memory_goes_in_the_stores_order(
        demo_path: Path) -> None:
    x, _y = _two_rows(demo_path)
    with open_store(demo_path) as a, open_store(demo_path) as b:
        before = a.get(x).content
        Curator(a).edit(x, content="a's edit of x")
        Curator(b).edit(x, content="b's edit of x")
        assert a.next_steps()[0].seq == b.next_steps()[0].seq  # b's, the newest: a's own is under it
        Curator(a).undo()
        assert a.get(x).content == "a's edit of x"
        Curator(a).undo()
        assert a.get(x).content == before


@pytest.mark.parametrize("mirrored", [False, True], ids=["one transaction", "several copies"])
def test_a_step_two_curators_undo_at_once_is_undone_once(demo_path: Path, mirrored: bool) -> None:
    """Both read the same step to undo; one undoes it, the other's undo then refuses (the
    entry is no longer done), and a reinforce's count is taken back once, not twice."""
    from mnemoscope.storage.journal.log import UNDONE
    from mnemoscope.storage.source import Change

    memory_id = _two_rows(demo_path)[0]  # (every demo memory has a vector copy)
    if not mirrored:
        with open_store(demo_path) as store:
            row = store.memory_row("a fact kept in memory.db alone", vector_state="none")
            store._workspace.db.insert_memory_rows([row])
            memory_id = row["id"]
    with open_store(demo_path) as a, open_store(demo_path) as b:
        start = a.get(memory_id).access_count or 0
        Curator(a).reinforce([memory_id])
        entry, changes = b._journal.step_to(UNDONE)  # b read it first
        Curator(a).undo()
        with pytest.raises(ConflictError, match="undid step"):
            Curator(b)._replay("undo", entry, [Change(c.record, c.after, c.before) for c in reversed(changes)])
        assert b.get(memory_id).access_count == start
        assert [e.operation for e in b.history(limit=3)][:2] == ["undo", "reinforce"]
