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


HOT_JOURNAL = "never finished (a hot"


def read_only_before_recovery(root: str) -> str | None:
    """What read-only commands make of the store the kill left, before any writable open: with a
    step pending, `ls` and `show` refuse (exit 2, one line naming it) and `check` exits 1 naming
    it; with none, `check` finds the copies in agreement. None when so, else what was wrong. No
    file but SQLite's -shm may change."""
    import contextlib
    import io
    import sqlite3

    from mnemoscope.app.cli import main

    uri = (Path(root) / "memory.db").as_uri() + "?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as con:
        pending = [seq for (seq,) in con.execute("SELECT seq FROM audit WHERE state = 'pending'")]
        [memory_id] = con.execute("SELECT id FROM memories ORDER BY id LIMIT 1").fetchone()
    before = _hashes(Path(root))

    def command(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
        return code, out.getvalue(), err.getvalue()

    wrong = []
    for argv in (("ls", root, "--read-only"), ("show", root, memory_id, "--read-only")):
        code, _out, err = command(*argv)
        one_line = code == 2 and len(err.strip().splitlines()) == 1
        refused = one_line and (f"step #{pending[0]} (" in err or HOT_JOURNAL in err) if pending else None
        if (pending and not refused) or (not pending and code != 0):
            wrong.append(f"{argv[0]}: exit {code} {err.strip()[:300]}")
    code, out, err = command("check", root)
    # (a kill inside chromadb's own write leaves chroma.sqlite3 a hot journal only a writer may roll
    # back: a read-only check then stops at it, in one line, before it can name the step)
    hot = code == 2 and HOT_JOURNAL in err
    if pending and not (code == 1 and f"step #{pending[0]}" in out) and not hot:
        wrong.append(f"check with step #{pending[0]} pending: exit {code} {(out + err).strip()[:400]}")
    if not pending and code != 0:
        wrong.append(f"check with no step pending: exit {code} {(out + err).strip()[:400]}")
    if _hashes(Path(root)) != before:
        wrong.append("a read-only command changed a file")
    return "; ".join(wrong) or None


def _hashes(root: Path) -> dict[str, bytes]:
    import hashlib

    return {str(p): hashlib.sha256(p.read_bytes()).digest() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.name.endswith("-shm")}


def check_after_kill(root: str, initial: dict[str, Any], results: Any) -> None:
    """Read-only commands first (read_only_before_recovery), then reopen (recovery runs) and undo
    every step the journal holds: the store must come back to exactly what it was before the
    curator started. A torn step, or a step missing from the journal, makes that impossible."""
    try:
        seen = read_only_before_recovery(root)
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
        results.put({"ok": same and seen is None, "undone": steps, "redone": redone, "recovered": recovered,
                     "read_only": seen})
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
