"""An agent writing memories at a steady rate, in a process of its own: what the window must keep
up with while a person edits (tests/bench/test_agent_editing_heartbeat_bench.py).

It runs as an agent embedding memory.db does: its own SQLite connection, one INSERT and one
commit per memory, on a schedule of `rate` rows a second (a late row is written at once, the
schedule is kept, not shifted). A spawned process: nothing of the test's Qt or open store
crosses into it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

COLUMNS = ("id", "layer", "channel", "content", "created_at", "updated_at", "last_accessed", "access_count",
           "salience", "confidence", "conversations", "tags", "metadata", "status", "derived_from", "vector_state")
TOPICS = ("deploy", "invoice", "latency", "retry", "budget", "postgres", "kubernetes", "customer")


def agent_row(n: int, when: str) -> tuple[Any, ...]:
    """The n-th memory the agent writes (memory.db's own columns, as the native store keeps them)."""
    return (f"agent-{n:07d}", "episodic", "_global", f"agent note {n}: the user asked about {TOPICS[n % 8]} again",
            when, when, when, 0, 0.5, 0.9, 1, "[]", "{}", "active", "[]", "none")


def write_rows(root: str, rate: float, seconds: float, started: Any, results: Any) -> None:
    """INSERT `rate` memories a second into root/memory.db for `seconds`; put {"written", "late_s",
    "locked"} on results (late_s: the most a row was written behind its schedule; locked: INSERTs
    that met a lock past the busy timeout and were tried again)."""
    from datetime import datetime, timezone

    con = sqlite3.connect(Path(root) / "memory.db", timeout=10.0, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    sql = f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
    started.set()
    start = time.monotonic()
    written = locked = 0
    late = 0.0
    while True:
        due = start + written / rate
        now = time.monotonic()
        if due - start >= seconds:
            break
        if due > now:
            time.sleep(due - now)
        late = max(late, time.monotonic() - due)
        when = datetime.now(timezone.utc).isoformat()
        try:
            con.execute(sql, agent_row(written, when))
        except sqlite3.OperationalError:  # "database is locked": an agent tries again
            locked += 1
            continue
        written += 1
    con.close()
    results.put({"written": written, "late_s": round(late, 3), "locked": locked})
