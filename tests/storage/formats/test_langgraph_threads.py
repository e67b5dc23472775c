"""SqliteSaver's threads read per thread (langgraph_threads.py), on files SqliteSaver itself writes:
every thread and namespace listed from the key's index, one thread read without the others, an
agent's next step seen on the next read, a broken checkpoint named, not hidden."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helpers.owners import require, run_owner
from mnemoscope.storage.opening import open_store

require("langgraph.checkpoint.sqlite")
require("langchain_core")

THREADS = """
import sqlite3
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.base import empty_checkpoint
from langchain_core.messages import AIMessage, HumanMessage
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
for thread, ns, steps in spec:
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}
    messages = []
    for step in range(steps):
        messages.append((HumanMessage if step % 2 == 0 else AIMessage)(f"{thread} {ns} says {step}"))
        cp = empty_checkpoint()
        cp["channel_values"] = {"messages": list(messages), "step": step}
        cp["channel_versions"] = {"messages": step + 1, "step": step + 1}
        config = saver.put(config, cp, {"source": "loop", "step": step}, cp["channel_versions"])
print(json.dumps("ok"))
"""


def write_threads(db: Path, spec: list[tuple[str, str, int]]) -> None:
    run_owner(THREADS, db=str(db), spec=spec)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "checkpoints.sqlite"
    write_threads(path, [("t-b", "", 3), ("t-a", "", 5), ("t-a", "sub", 2), ("a/b", "", 1)])
    return path


def test_every_thread_and_namespace_is_a_session_with_its_latest_messages(db: Path) -> None:
    with open_store(db) as store:
        sessions = store.sessions()
        assert [(s.id, s.channel, s.title, s.turn_count) for s in sessions] == [
            ("a/b", "a/b", "thread a/b (1 checkpoints)", 1),
            ("t-a", "t-a", "thread t-a (5 checkpoints)", 5),
            ("t-a/sub", "t-a", "thread t-a (2 checkpoints)", 2),
            ("t-b", "t-b", "thread t-b (3 checkpoints)", 3),
        ]
        assert [s.id for s in store.sessions(("t-a",))] == ["t-a", "t-a/sub"]
        assert [t.content for t in store.turns("t-a/sub")] == ["t-a sub says 0", "t-a sub says 1"]
        assert [(t.index, t.role) for t in store.turns("t-a", limit=2, offset=3)] == [(3, "assistant"), (4, "user")]
        assert [t.content for t in store.turns("a/b")] == ["a/b  says 0"]
        assert store.turns("t-c") == [] and store.turns("t-a/none") == []
        assert [(e.session_id, e.key, e.value) for e in store.scratch_entries("t-b")] == [("t-b", "step", "2")]
        assert len(store.scratch_entries()) == 4


def test_one_thread_is_read_without_listing_the_others(db: Path) -> None:
    """A thread's turns: its latest checkpoint and whether writes are pending on it, no GROUP BY
    over every thread, no count or first checkpoint of its own (the list's title needs those)."""
    from helpers.file_calls import sql_statements

    with open_store(db) as store:
        [source] = [s for s in store._sources if getattr(s, "threads", None) is not None]
        with sql_statements() as statements:
            assert [t.content for t in store.turns("t-b")][-1] == "t-b  says 2"
        assert source.threads._keys is None
        [latest] = [s for _db, s in statements if s.startswith("SELECT")]
        assert "FROM checkpoints AS c WHERE c.thread_id = 't-b'" in latest and "EXISTS (SELECT 1 FROM writes" in latest
        assert "count(" not in latest and latest.endswith("ORDER BY c.checkpoint_id DESC LIMIT 1")
        assert {s.id: s.title for s in store.sessions()}["t-b"] == "thread t-b (3 checkpoints)"


def test_an_agents_next_step_is_seen_on_the_next_read(db: Path) -> None:
    with open_store(db) as store:
        assert len(store.turns("t-b")) == 3 and len(store.sessions()) == 4
        write_threads(db, [("t-b", "", 4), ("t-new", "", 1)])  # t-b's put again: 4 more steps
        assert len(store.turns("t-b")) == 4
        assert [s.id for s in store.sessions()][-1] == "t-new"
        assert {s.id: s.title for s in store.sessions()}["t-b"] == "thread t-b (7 checkpoints)"


def test_an_unreadable_checkpoint_is_a_problem_not_a_session(db: Path) -> None:
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "UPDATE checkpoints SET checkpoint = x'c1' WHERE thread_id = 't-b' AND checkpoint_id = "
            "(SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 't-b')"
        )
    con.close()
    with open_store(db) as store:
        assert [s.id for s in store.sessions()] == ["a/b", "t-a", "t-a/sub"]
        assert store.turns("t-b") == []
        assert any(p.startswith("LangGraph: thread t-b: checkpoint not readable") for p in store.problems())
