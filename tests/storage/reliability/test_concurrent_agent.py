"""An agent keeps writing while a person curates: every agent write is kept, or the curation
step that met it is refused as a conflict. Nothing is overwritten silently.

The agent (its own process) appends notes to a daily log, updates memory.db rows with its
own SQLite connection and adds vectors with its own chromadb client; meanwhile this process edits and deletes bullets of the same daily log
and edits the same rows through the Curator. A trigger on the test's copy of memory.db logs
every content change as SQLite committed it: each edit the Curator made must have replaced
exactly the value its journal entry says it replaced (else it overwrote an agent write it never
saw), and every appended note must still be in the file at the end.
"""

from __future__ import annotations

import multiprocessing
import random
import sqlite3
import time
from pathlib import Path

import pytest
from helpers.curation_load import agent_writes

from mnemoscope.storage import ConflictError, Curator, Kind, MemoryQuery, StoreError, open_store

pytestmark = pytest.mark.reliability
SECONDS = 8.0


def test_an_agent_writing_meanwhile_loses_nothing(demo_path: Path, capsys) -> None:
    con = sqlite3.connect(demo_path / "memory.db")
    con.executescript(
        "CREATE TABLE change_log (seq INTEGER PRIMARY KEY, id TEXT, old TEXT, new TEXT);"
        "CREATE TRIGGER log_content AFTER UPDATE OF content ON memories "
        "BEGIN INSERT INTO change_log(id, old, new) VALUES (old.id, old.content, new.content); END;"
    )
    ids = [r[0] for r in con.execute("SELECT id FROM memories WHERE md_file IS NULL AND status = 'active' LIMIT 6")]
    con.close()
    with open_store(demo_path) as store:
        daily_blocks = [m for m in store.page(MemoryQuery(kinds=(Kind.MARKDOWN,)), limit=500) if m.source.path.startswith("memory/")]
        daily = daily_blocks[0].source.path
        ours = [m.id for m in daily_blocks if m.source.path == daily]
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["helpers.curation_load", "chromadb"])  # the same as test_sigkill: one forkserver
        started, results = ctx.Event(), ctx.Queue()
        agent = ctx.Process(target=agent_writes, args=(str(demo_path), ids, daily, SECONDS, started, results))
        agent.start()
        assert started.wait(60)
        curator, rng = Curator(store), random.Random(3)
        steps = conflicts = 0
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            attempt = steps + conflicts  # unique text per attempt
            try:
                choice = rng.random()
                if choice < 0.5:
                    curator.edit(rng.choice(ids), content=f"curator value {attempt}")
                elif choice < 0.8 and ours:
                    target = ours.pop(rng.randrange(len(ours)))
                    outcome = curator.edit(target, content=f"curated entry {attempt}")
                    ours.append(outcome.ids[0])
                elif ours:
                    curator.delete(ours.pop(rng.randrange(len(ours))))
                steps += 1
            except ConflictError:
                conflicts += 1
            except StoreError as exc:  # a lock held past the busy timeout is reported, not hidden
                assert "locked" in str(exc), exc
                conflicts += 1
        written = results.get(timeout=60)
        agent.join()

        text = (demo_path / daily).read_text()
        lost_notes = [line for line in written["appended"] if line not in text]
        con = sqlite3.connect(demo_path / "memory.db")
        log = con.execute("SELECT id, old, new FROM change_log ORDER BY seq").fetchall()
        con.close()
        believed = {}
        for entry in store._journal.history(limit=10_000):
            if entry.operation == "edit" and entry.state == "done":
                for before, after in zip(entry.before, entry.after, strict=True):
                    if before and after and "content" in before and "id" in before:
                        believed[(before["id"], after["content"])] = before["content"]
        overwritten = [
            (memory_id, old, new)
            for memory_id, old, new in log
            if new.startswith("curator value") and believed.get((memory_id, new), old) != old
        ]
        curator_edits = sum(1 for _, _, new in log if new.startswith("curator value"))
        lost_vectors = _missing_vectors(demo_path, written["vectors"])
    with capsys.disabled():
        print(
            f"\nconcurrent agent: {len(written['appended'])} appends, {len(written['updated'])} row updates "
            f"and {len(written['vectors'])} vectors by the agent; {steps} curation steps, {conflicts} refused "
            f"as conflicts; lost agent writes: {len(lost_notes) + len(overwritten) + len(lost_vectors)}"
        )
    assert curator_edits > 0 and len(written["updated"]) > 0 and written["vectors"]
    assert lost_notes == []
    assert overwritten == []
    assert lost_vectors == []


def _missing_vectors(root: Path, record_ids: list[str]) -> list[str]:
    """The agent's records that are not in Chroma at the end: record, document or vector."""
    from mnemoscope.storage.native.chroma.files import ChromaFiles

    files = ChromaFiles(root / "vectors")
    [col] = [c for c in files.collections() if c.name == "memories"]
    records = files.records(col, record_ids)
    with_vector = set(files.vectors(col).ids)
    return [r for r in record_ids if r not in records or r not in with_vector or records[r][0] is None]
