"""The window as one of four curators at once (issue 29): while an API curator, two command-line
curators and an agent (adding memories, bumping access counts) work on the same workspace, the
window edits, deletes, restores and undoes through its own session (worker threads, as its
actions do). No step of any of them fails but as a conflict on the same memory; `check` then
finds every copy in agreement, and every journaled step undoes, newest first, without a refusal.
MNEMOSCOPE_CURATORS_SECONDS sets how long they work (default 10; the contract's size: 180)."""

from __future__ import annotations

import os
import random
import sqlite3
import time
from pathlib import Path

from helpers import curators
from helpers.windows import open_window

SECONDS = float(os.environ.get("MNEMOSCOPE_CURATORS_SECONDS", "10"))


def test_the_window_curates_beside_three_curator_processes_and_an_agent(qtbot, demo_path: Path, tmp_path: Path) -> None:
    con = sqlite3.connect(demo_path / "memory.db")
    ids = [r[0] for r in con.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id")]
    con.close()
    shared, own = ids[:6], ids[6 + 3::4][:8]  # the window's: what started_beside leaves to a fourth curator
    win = open_window(qtbot, demo_path, tmp_path)
    session = win.session
    outcomes: list[tuple[str, object]] = []
    session.curated.connect(lambda outcome: outcomes.append(("done", outcome)))
    session.conflicted.connect(lambda conflict: outcomes.append(("conflict", conflict)))
    session.error.connect(lambda exc: outcomes.append(("error", exc)))

    run = curators.started_beside(str(demo_path), ids, SECONDS, ["api", "cli", "cli", "agent"])
    rng = random.Random(5)
    window_failed: list[str] = []
    steps = met = 0
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        memory_id = rng.choice(shared if rng.random() < 0.3 else own)
        op = rng.choice(("edit", "edit", "delete", "restore", "undo"))
        seen = len(outcomes)
        if op == "edit":
            memory = session.store.get(memory_id)
            session.edit(memory, {"content": f"window text {rng.randrange(10**9)}"})
        elif op == "undo":
            session.curate("undo")
        else:
            session.curate(op, [memory_id])
        qtbot.waitUntil(lambda seen=seen: len(outcomes) > seen, timeout=120_000)  # the step's own answer
        kind, value = outcomes[-1]
        if kind == "done":
            steps += 1
        elif kind == "conflict" or curators.expected(str(value)):
            met += 1
        else:
            window_failed.append(f"{op} {memory_id}: {type(value).__name__}: {value}")
    reports = curators.reports_of(run, SECONDS)
    win.close()
    failed = window_failed + [f for r in reports for f in r["failed"]]
    twice = curators.replayed_twice(str(demo_path))
    check, undone, refusals = curators.check_and_undo_everything(str(demo_path))
    print(f"\nwindow among curators for {SECONDS:g} s: window {steps} steps, {met} met another's change; "
          f"processes {sum(r['done'] for r in reports if r['who'] != 'agent')} steps; {len(failed)} failed; "
          f"check exit {check.returncode}; {undone} undone, {len(refusals)} refused")
    assert not failed, failed[:5]
    assert not twice, f"steps undone (or redone) twice in a row: {twice}"
    assert steps > 3
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr
    assert not refusals, refusals
