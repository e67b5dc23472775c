"""Four curators at once on one workspace while an agent writes: two through the API (Curator in
their own processes) and two through the command line, editing, deleting, restoring, undoing
and redoing memories of their own and memories they all share, with an agent adding memories
(and their vectors) and bumping access counts meanwhile.

No step fails but for what a person may meet when another curator got to the same memory first
(a conflict, a memory already gone, nothing to do); `check` then finds every copy in agreement;
and every step the journal holds is undone, newest first, without one refusal, which brings every
memory the curators touched back to what it was. MNEMOSCOPE_CURATORS_SECONDS sets how long they
work (default 20; the contract's size: 180)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from helpers import curators
from mnemoscope.storage import MemoryQuery, Status, open_store

pytestmark = pytest.mark.reliability
SECONDS = float(os.environ.get("MNEMOSCOPE_CURATORS_SECONDS", "20"))


def _state(root: Path, ids: list[str]) -> dict[str, tuple]:
    with open_store(root, read_only=True) as store:
        every = {m.id: m for m in store.page(MemoryQuery(statuses=tuple(Status)), limit=100_000)}
    return {i: (every[i].content, every[i].status, every[i].channel) if i in every else None for i in ids}


def test_four_curators_and_an_agent_at_once_fail_nothing_and_undo_to_the_start(demo_path: Path, capsys) -> None:
    con = sqlite3.connect(demo_path / "memory.db")
    ids = [r[0] for r in con.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id")]
    con.close()
    assert len(ids) >= 30
    initial = _state(demo_path, ids)
    run = curators.started_beside(str(demo_path), ids, SECONDS, ["api", "api", "cli", "cli", "agent"])
    reports = curators.reports_of(run, SECONDS)
    failed = [f for r in reports for f in r["failed"]]
    steps = sum(r["done"] for r in reports if r["who"] != "agent")
    twice = curators.replayed_twice(str(demo_path))
    check, undone, refusals = curators.check_and_undo_everything(str(demo_path))
    back = _state(demo_path, ids)
    differ = {i: (initial[i], back[i]) for i in ids if initial[i] != back[i]}
    with capsys.disabled():
        print(f"\nreliability: 4 curators and an agent for {SECONDS:g} s: {steps} steps done, "
              f"{sum(r['met'] for r in reports if r['who'] != 'agent')} met another curator's change, "
              f"{len(failed)} failed; agent added {sum(r['done'] for r in reports if r['who'] == 'agent')}; "
              f"check exit {check.returncode}; {undone} steps undone, {len(refusals)} refused, "
              f"{len(differ)} memories not back")
    assert not failed, failed[:5]
    assert not twice, f"steps undone (or redone) twice in a row: {twice}"
    assert steps > 20
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr
    assert not refusals, refusals
    assert not differ, list(differ.items())[:3]
