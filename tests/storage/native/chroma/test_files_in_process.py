"""Reading a Chroma directory while chromadb's client writes it, in one process.

chromadb's client carries its own SQLite; a read with Python's while the client writes must not
meet a half-written page ("database disk image is malformed"). A thread pages and searches the
demo without pause while the main thread edits, deletes and undoes memories whose vector copies
the curator writes through the client. (The failure was seen in the window's keyboard undo test,
1 run in ~4 before files.directory_lock; this stress has not reproduced it without the
lock in 6 runs: it guards the property, it does not prove the fix.)"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from mnemoscope.storage import Curator, MemoryQuery, open_store
from mnemoscope.storage.views.search import search

SECONDS = 4.0


def test_reads_during_the_clients_writes_never_fail(demo_path: Path) -> None:
    failures: list[BaseException] = []
    reads = 0
    stop = threading.Event()
    with open_store(demo_path) as store:
        # memory.db memories with a vector copy: each edit, delete and undo writes that copy too
        vectors = [m for m in store.page(MemoryQuery(), 500) if m.metadata.get("vector_state") == "fresh"]
        assert len(vectors) >= 3

        def read() -> None:
            nonlocal reads
            while not stop.is_set():
                try:
                    store.page(MemoryQuery(), 100)
                    store.counts()
                    search(store, "deploy friday", mode="hybrid", k=20)
                    store.copies(vectors[reads % len(vectors)].id)
                    reads += 1
                except BaseException as exc:  # noqa: BLE001 - every failure is the finding
                    failures.append(exc)
                    return

        reader = threading.Thread(target=read)
        reader.start()
        curator = Curator(store)
        steps = 0
        deadline = time.monotonic() + SECONDS
        try:
            while time.monotonic() < deadline and not failures:
                target = vectors[steps % len(vectors)]
                curator.edit(target.id, content=f"{target.content} (edit {steps})")
                curator.delete([target.id])
                curator.undo()
                curator.undo()
                steps += 1
        finally:
            stop.set()
            reader.join()
    assert not failures, f"a read failed after {reads} reads and {steps} edit/delete/undo rounds: {failures[0]!r}"
    assert steps >= 1 and reads >= 1
