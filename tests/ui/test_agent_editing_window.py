"""While an agent writes into the store and a person edits in the window (issue 29), the UI thread
reads and writes nothing of the store itself: the edit dialog's content comes with the row, what
the selection allows and every reload after the agent's writes come from workers.

The scenario of bench/agent_person.py for a few seconds on a small store (the bench runs it for
15 s, 60 s at full size, and measures the UI thread's gaps): an agent process INSERTing 20
memories a second into memory.db while a person selects, edits in the edit dialog and saves,
searches, switches tabs and undoes. A profile hook on the UI thread records every call into
storage code that touches a file or a database (helpers/heartbeat.py's STORAGE_IO): there must
be none, whatever the machine's load; and the agent's last row reaches the table.
"""

from __future__ import annotations

from pathlib import Path

from bench.agent_person import ROUND, build_store, run

SECONDS = 6.0


def test_no_storage_call_on_the_ui_thread_while_an_agent_writes_and_a_person_edits(qtbot, tmp_path: Path) -> None:
    root = build_store(tmp_path / "store", 1_000)
    beat, person, written = run(qtbot, root, tmp_path, SECONDS, hook=True)
    assert written["written"] >= 20 * SECONDS
    assert all(person.done[name] for name in ROUND)  # each step asked for and answered
    assert set(person.outcomes) <= {"edit", "undo", "conflict", "busy"}, person.outcomes
    assert beat.storage_calls == {}, f"storage I/O ran on the UI thread: {beat.storage_calls}"
