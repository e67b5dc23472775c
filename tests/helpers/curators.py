"""Curators at work at once on one workspace (tests/storage/reliability/test_concurrent_curators.py):
API curators (Curator in their own processes), command-line curators (`mnemoscope` runs), and an
agent that adds memories through the API and bumps access counts as its retrieval does.

Each curator picks from memories of its own and from memories every curator shares, and tells
apart the outcomes a person may meet (done; a conflict with another writer on the same memory;
nothing to do) from failures (any other error)."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mnemoscope.storage import ConflictError, Curator, NothingToDoError, StoreError, open_store

# What a step may meet when another curator got to its memory first: a conflict (changed since
# read), the memory already gone (deleted, or a step that made it undone), nothing to do.
EXPECTED = ("changed since", "another writer", "meanwhile", "nothing to", "does not exist", "no memory", "is deleted",
            "already", "not active")


def expected(message: str) -> bool:
    return any(text in message.lower() for text in EXPECTED)


def api_curator(root: str, own: list[str], shared: list[str], seconds: float, seed: int, started: Any,
                results: Any) -> None:
    rng = random.Random(seed)
    done, met, failed = 0, 0, []
    try:
        with open_store(root) as store:
            curator = Curator(store)
            started.wait(60)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                op = rng.choice(("edit", "edit", "delete", "restore", "undo", "redo", "reinforce"))
                memory_id = rng.choice(shared if rng.random() < 0.3 else own)
                try:
                    if op == "edit":
                        curator.edit(memory_id, content=f"api {seed} text {rng.randrange(10**9)}")
                    elif op in ("undo", "redo"):
                        getattr(curator, op)()
                    else:
                        getattr(curator, op)([memory_id])
                    done += 1
                except (ConflictError, NothingToDoError) as exc:
                    met += 1
                    if not expected(str(exc)):
                        failed.append(f"{op} {memory_id}: {exc}")
                except StoreError as exc:
                    (failed.append(f"{op} {memory_id}: {type(exc).__name__}: {exc}") if not expected(str(exc))
                     else None)
                    met += expected(str(exc))
    except BaseException as exc:
        failed.append(f"crashed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    results.put({"who": f"api {seed}", "done": done, "met": met, "failed": failed})


def cli_curator(root: str, own: list[str], shared: list[str], seconds: float, seed: int, started: Any,
                results: Any) -> None:
    exe = str(Path(sys.executable).parent / "mnemoscope")
    rng = random.Random(seed)
    done, met, failed = 0, 0, []
    try:
        started.wait(60)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            op = rng.choice(("edit", "rm", "undo"))
            memory_id = rng.choice(shared if rng.random() < 0.3 else own)
            argv = {"edit": ["edit", root, memory_id, "--content", f"cli {seed} text {rng.randrange(10**9)}"],
                    "rm": ["rm", root, memory_id], "undo": ["undo", root]}[op]
            run = subprocess.run([exe, *argv], capture_output=True, text=True, timeout=300)
            if run.returncode == 0:
                done += 1
            elif expected(run.stderr):
                met += 1
            else:
                failed.append(f"{' '.join(argv[:1] + argv[2:3])}: exit {run.returncode}: {run.stderr.strip()[:400]}")
    except BaseException as exc:  # reported: a curator that dies unheard would leave the test waiting
        failed.append(f"cli curator crashed: {type(exc).__name__}: {exc}")
    results.put({"who": f"cli {seed}", "done": done, "met": met, "failed": failed})


def agent(root: str, bumped: list[str], seconds: float, rate: float, started: Any, results: Any) -> None:
    """Adds memories (with their vectors) through the API and bumps access counts with its own
    SQLite connection, rate times a second each."""
    rng = random.Random(11)
    added, bumps, failed = 0, 0, []
    con = sqlite3.connect(Path(root) / "memory.db", timeout=10.0, isolation_level=None)
    try:
        with open_store(root) as store:
            started.wait(60)
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                tick = time.monotonic()
                try:
                    store.add_memories([store.memory_row(f"agent learned fact {added}", channel="agent")])
                    added += 1
                    con.execute("UPDATE memories SET access_count = coalesce(access_count, 0) + 1, "
                                "last_accessed = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = ?",
                                (rng.choice(bumped),))
                    bumps += 1
                except (StoreError, sqlite3.Error) as exc:
                    failed.append(f"agent: {type(exc).__name__}: {exc}")
                time.sleep(max(0.0, 1 / rate - (time.monotonic() - tick)))
    except BaseException as exc:
        failed.append(f"agent crashed: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    finally:
        con.close()
    results.put({"who": "agent", "done": added, "met": bumps, "failed": failed})


@dataclass
class Run:
    """Curator processes at work, the queue their reports come in, and the event that started
    them (held here: a process unpickles it as it starts, after started_beside has returned)."""

    processes: list[Any]
    results: Any
    started: Any


def started_beside(root: str, ids: list[str], seconds: float, roles: list[str]) -> Run:
    """The curator processes roles names ("api", "cli", "agent"), started together; each gets 8
    memories of its own (ids[6 + k::4], for up to four curators) and shares ids[:6] with the others.
    Their reports come in the run's queue, one each."""
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["helpers.curators", "chromadb"])
    started, results = ctx.Event(), ctx.Queue()
    shared, own = ids[:6], [ids[6 + k::4][:8] for k in range(4)]
    targets = {"api": api_curator, "cli": cli_curator}
    processes = []
    for n, role in enumerate(roles):
        args = ((root, ids, seconds, 20.0, started, results) if role == "agent"
                else (root, own[n], shared, seconds, n + 1, started, results))
        processes.append(ctx.Process(target=agent if role == "agent" else targets[role], args=args))
    for process in processes:
        process.start()
    started.set()
    return Run(processes, results, started)


def reports_of(run: Run, seconds: float) -> list[dict[str, Any]]:
    """One report per process; a process that died without one is reported as failed."""
    import queue

    processes, results = run.processes, run.results
    reports: list[dict[str, Any]] = []
    deadline = time.monotonic() + seconds + 600
    while len(reports) < len(processes) and time.monotonic() < deadline:
        try:
            reports.append(results.get(timeout=5))
        except queue.Empty:
            if not any(p.is_alive() for p in processes):
                break
    for process in processes:
        process.join(60)
    missing = len(processes) - len(reports)
    if missing:
        reports.append({"who": "lost", "done": 0, "met": 0,
                        "failed": [f"{missing} curator process(es) ended without a report (exit codes "
                                   f"{[p.exitcode for p in processes]})"]})
    return reports


def check_and_undo_everything(root: str) -> tuple[subprocess.CompletedProcess[str], int, list[str]]:
    """`mnemoscope check` of the store, then every journaled step undone, newest first, by an open
    that made none (the store's order): the check, how many were undone, and the refusal if one came."""
    exe = str(Path(sys.executable).parent / "mnemoscope")
    check = subprocess.run([exe, "check", root], capture_output=True, text=True)
    undone, refusals = 0, []
    with open_store(root) as store:
        curator = Curator(store)
        while store._journal.next_to_undo() is not None:
            try:
                curator.undo()
                undone += 1
            except Exception as exc:  # noqa: BLE001 (counted: the contract is none)
                refusals.append(f"{type(exc).__name__}: {exc}")
                break
    return check, undone, refusals


def replayed_twice(root: str) -> list[int]:
    """Steps the journal says were undone twice in a row (or redone twice): each step's undo and
    redo entries must alternate, starting with an undo."""
    import json

    con = sqlite3.connect(Path(root) / "memory.db")
    try:
        rows = con.execute("SELECT operation, details FROM audit WHERE operation IN ('undo', 'redo') AND state = 'log' "
                           "ORDER BY seq").fetchall()  # (not a replay that failed and was put back)
    finally:
        con.close()
    last: dict[int, str] = {}
    twice = []
    for operation, details in rows:
        step = json.loads(details).get("step")
        if last.get(step, "redo") == operation:
            twice.append(step)
        last[step] = operation
    return twice
