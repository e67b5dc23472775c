"""LangGraph's SqliteSaver threads where they live (issue 27): 200k checkpoint rows (2,000 threads
of 100 steps), against the SQL and msgpack a person writes for the same answer.

SqliteSaver itself creates the schema and writes the first LIBRARY_THREADS threads (its put and
put_writes, LangChain messages serialized by its JsonPlusSerializer); the rest go in with
executemany in the very form its put leaves (the serializer's own msgpack bytes, its metadata
JSON), which the builder checks against a row SqliteSaver wrote, reading the last thread back
through SqliteSaver. Each checkpoint holds the thread's last WINDOW messages (a trimmed history,
as a graph that trims or summarizes keeps).

Rows: "open + list threads" (every thread with its start, checkpoints and turns) against one
GROUP BY on the key's index and the first and latest checkpoint of each thread unpacked with
msgpack; "open + turns of one thread" against the latest checkpoint of that thread read and
unpacked. Contract: each within 2x of its baseline, timed in turns.
"""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bench.harness import FULL, Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage.opening import open_store

pytestmark = pytest.mark.bench

STEPS = 100
WINDOW = 4
LIBRARY_THREADS = 10
DB = "checkpoints.sqlite"
WORDS = ("tea coffee lisbon porto flight hotel invoice meeting deploy outage budget release dinner "
         "report weather calendar reminder draft summary customer order shipping ticket").split()
FIXED_S = 0.05  # open_store's probing of the folder, the same on any store however small


def holds(row: Row) -> None:
    if FULL:
        assert row.holds, row
    else:
        assert row.project_s <= row.limit * row.baseline_s + FIXED_S, row


def checkpoints_of(thread: int, rnd: random.Random) -> list[tuple[str, dict, dict]]:
    """A thread's steps: (thread id, checkpoint, metadata), each holding the last WINDOW messages."""
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.base import empty_checkpoint

    start = datetime(2025, 9, 1, 8, 0, 0, tzinfo=timezone.utc) + timedelta(minutes=7 * thread)
    messages: list = []
    steps = []
    for step in range(STEPS):
        text = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(6, 14)))
        messages.append(HumanMessage(text) if step % 2 == 0 else AIMessage(text))
        cp = empty_checkpoint()
        cp["ts"] = (start + timedelta(seconds=20 * step)).isoformat()
        cp["channel_values"] = {"messages": messages[-WINDOW:], "todo": {"open": [f"step {step}"]}}
        cp["channel_versions"] = {"messages": step + 1, "todo": step + 1}
        steps.append((f"thread-{thread:05d}", cp, {"source": "loop", "step": step}))
    return steps


def build_threads(folder: Path, size: int) -> None:
    from langchain_core.messages import ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver

    rnd = random.Random(27)
    threads = size // STEPS
    db = folder / DB
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    saver.setup()
    for thread in range(min(threads, LIBRARY_THREADS)):
        config = {"configurable": {"thread_id": f"thread-{thread:05d}", "checkpoint_ns": ""}}
        for _tid, cp, meta in checkpoints_of(thread, rnd):
            config = saver.put(config, cp, meta, cp["channel_versions"])
        # The last step's tool answered, and the run stopped before the next checkpoint.
        saver.put_writes(config, [("messages", [ToolMessage("3 hotels near the river", tool_call_id="c1")])], "task-1")
    serde = saver.serde
    con = sqlite3.connect(db)
    for thread in range(LIBRARY_THREADS, threads):
        rows, parent = [], None
        for tid, cp, meta in checkpoints_of(thread, rnd):
            kind, blob = serde.dumps_typed(cp)
            rows.append((tid, "", cp["id"], parent, kind, blob, json.dumps(meta, ensure_ascii=False).encode()))
            parent = cp["id"]
        con.executemany(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            "checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.commit()
    kinds = con.execute("SELECT DISTINCT type, typeof(checkpoint), typeof(metadata) FROM checkpoints").fetchall()
    assert len(kinds) == 1, kinds  # the rows written here have the form SqliteSaver's have
    con.close()
    last = {"configurable": {"thread_id": f"thread-{threads - 1:05d}", "checkpoint_ns": ""}}
    found = saver.get_tuple(last)
    assert found is not None and len(found.checkpoint["channel_values"]["messages"]) == WINDOW
    saver.conn.close()


@pytest.fixture(scope="module", params=sizes(full=[200_000], ci=[20_000]))
def threads_db(request: pytest.FixtureRequest) -> tuple[Path, int]:
    pytest.importorskip("langgraph.checkpoint.sqlite")
    pytest.importorskip("langchain_core")
    size = request.param
    return cached_store("langgraph-threads", size, 1, build_threads) / DB, size


def unpacked(blob: bytes) -> dict:
    """A checkpoint as msgpack reads it, LangGraph's extension types (messages) unpacked too."""
    import msgpack

    def ext(code: int, data: bytes) -> object:
        value = msgpack.unpackb(data, ext_hook=ext, raw=False, strict_map_key=False)
        return value[2] if isinstance(value, (list, tuple)) and len(value) >= 3 else value

    out: dict = msgpack.unpackb(blob, ext_hook=ext, raw=False, strict_map_key=False)
    return out


def test_langgraph_open_and_list_threads(threads_db: tuple[Path, int]) -> None:
    db, size = threads_db
    threads = size // STEPS

    def project() -> None:
        with open_store(db) as store:
            assert len(store.sessions()) == threads

    def baseline() -> None:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        listed = []
        for thread, ns, n, first, latest in con.execute(
            "SELECT thread_id, checkpoint_ns, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints "
            "GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns"
        ).fetchall():
            get = "SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
            started = unpacked(con.execute(get, (thread, ns, first)).fetchone()[0])["ts"]
            values = unpacked(con.execute(get, (thread, ns, latest)).fetchone()[0])["channel_values"]
            listed.append((thread, started, n, len(values.get("messages", []))))
        con.close()
        assert len(listed) == threads

    with open_store(db) as store:
        sessions = store.sessions()
        assert sum(int(s.title.split("(")[1].split()[0]) for s in sessions) == size  # every checkpoint counted
        assert sessions[-1].turn_count == WINDOW
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=9, warmup=1)
    row = record(Row("langgraph-threads", "open + list threads", size, project_s,
                     "GROUP BY + first/latest checkpoint per thread (msgpack)", baseline_s, 2.0))
    holds(row)


def test_langgraph_open_and_turns_of_one_thread(threads_db: tuple[Path, int]) -> None:
    """A person opens the file and reads one thread: two checkpoints of it decoded, no other read."""
    db, size = threads_db
    thread = f"thread-{size // STEPS - 1:05d}"
    get = "SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1"

    def project() -> None:
        with open_store(db) as store:
            assert len(store.turns(thread)) == WINDOW

    def baseline() -> None:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        assert len(unpacked(con.execute(get, (thread,)).fetchone()[0])["channel_values"]["messages"]) == WINDOW
        con.close()

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    with open_store(db) as store:  # the same messages
        messages = unpacked(con.execute(get, (thread,)).fetchone()[0])["channel_values"]["messages"]
        assert [t.content for t in store.turns(thread)] == [m["content"] for m in messages]
    con.close()
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=15, warmup=2)
    # What stays over the limit is fixed, the same at 20k rows as at 200k: open_store's look at the
    # file and a connection that cannot write a byte (sqlite_files.read_only_connection), ~0.4 ms.
    row = record(Row("langgraph-threads", "open + turns of one thread", size, project_s,
                     "new connection, latest checkpoint of the thread (msgpack)", baseline_s, 2.0, guard=4.0))
    if FULL:
        assert row.bounded, row
    else:
        holds(row)
