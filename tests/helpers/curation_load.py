"""Processes for the reliability suite: a curator that never stops (to be killed), and a checker.

They run in their own processes (multiprocessing forkserver: chromadb imported once, no client
shared across a fork), against real stores in temp folders."""

from __future__ import annotations

import random
import traceback
from pathlib import Path
from typing import Any

from helpers.store_state import state_of

from mnemoscope.storage import Curator, Kind, MemoryQuery, StoreError, open_store

OPERATIONS = ("edit", "edit_markdown", "promote", "delete", "delete_many", "restore", "reinforce", "undo", "redo")


def curate_forever(root: str, seed: int, started: Any) -> None:
    """Random curation steps over every kind of memory until killed."""
    rng = random.Random(seed)
    with open_store(root) as store:
        curator = Curator(store)
        started.set()
        while True:
            op = rng.choice(OPERATIONS)
            try:
                _step(store, curator, op, rng)
            except StoreError:
                pass


def _step(store: Any, curator: Curator, op: str, rng: random.Random) -> None:
    if op in ("undo", "redo"):
        getattr(curator, op)()
        return
    kinds = (Kind.MARKDOWN,) if op == "edit_markdown" else ()
    statuses = () if op == "restore" else None
    query = MemoryQuery(kinds=kinds) if statuses is None else MemoryQuery(kinds=kinds, statuses=statuses)
    memories = store.page(query, limit=60, offset=rng.randrange(0, 20))
    if not memories:
        return
    chosen = rng.sample(memories, min(len(memories), rng.randint(2, 4) if op == "delete_many" else 1))
    ids = [m.id for m in chosen]
    if op in ("edit", "edit_markdown"):
        curator.edit(ids[0], content=f"{chosen[0].content.split(' [')[0]} [rev {rng.randrange(10**6)}]")
    elif op == "promote":
        curator.promote(ids)
    elif op in ("delete", "delete_many"):
        curator.delete(ids)
    elif op == "restore":
        curator.restore(ids)
    else:
        curator.reinforce(ids)


def check_after_kill(root: str, initial: dict[str, Any], results: Any) -> None:
    """Reopen (recovery runs), then undo every step the journal holds: the store must come back
    to exactly what it was before the curator started. A torn step, or a step missing from the
    journal, makes that impossible."""
    try:
        with open_store(root) as store:
            recovered = list(store.recovered)
            curator = Curator(store)
            steps = 0
            while store._journal.next_to_undo() is not None:
                curator.undo()
                steps += 1
            same = state_of(Path(root)) == initial
            redone = 0
            while store._journal.next_to_redo() is not None:
                curator.redo()
                redone += 1
        results.put({"ok": same, "undone": steps, "redone": redone, "recovered": recovered})
    except BaseException as exc:  # reported, not raised: the parent counts it as a torn state
        results.put({"ok": False, "error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()})



def agent_writes(
    root: str, ids: list[str], daily: str, seconds: float, started: Any, results: Any, pause: float = 0.004
) -> None:
    """An agent at work: appends notes to a daily log (as agents do: open, append, close),
    updates memory.db rows with its own connection, and adds vectors to the workspace's Chroma
    collection with its own chromadb client, as fast as it can for `seconds`."""
    import sqlite3
    import time

    import chromadb
    from chromadb.config import Settings

    rng = random.Random(7)
    appended, updated, vectors = [], [], []
    con = sqlite3.connect(Path(root) / "memory.db", timeout=10.0, isolation_level=None)
    client = chromadb.PersistentClient(path=str(Path(root) / "vectors"), settings=Settings(anonymized_telemetry=False))
    collection = client.get_collection("memories", embedding_function=None)
    dimension = len(collection.get(limit=1, include=["embeddings"])["embeddings"][0])
    started.set()
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
        line = f"- agent note {n}\n"
        with open(Path(root) / daily, "a", encoding="utf-8") as handle:
            handle.write(line)
        appended.append(line)
        memory_id = rng.choice(ids)
        value = f"agent value {n}"
        con.execute("UPDATE memories SET content = ? WHERE id = ?", (value, memory_id))
        updated.append((memory_id, value))
        if n % 4 == 0:
            record_id = f"agent-{n}"
            collection.add(
                ids=[record_id], documents=[f"agent fact {n}"], metadatas=[{"channel": "agent"}],
                embeddings=[[rng.random() for _ in range(dimension)]],
            )
            vectors.append(record_id)
        time.sleep(pause)
    con.close()
    results.put({"appended": appended, "updated": updated, "vectors": vectors})
