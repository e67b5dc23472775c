"""Curation on the native memory.db against the SQL a person writes for the same state change.

Rows: a writable open (which reads no page of rows: see storage/native/db/intact.py) against a
connect and the two reads a person's writer makes, again right after an agent's write (an open
of a file unchanged since this process read its journal asks it nothing), and, with the first
page, against a read-only open; `rm ID` then `undo` as the CLI runs them (open, step, close)
against a connect, the row's before-image read, one UPDATE, the journal rows, commit; a bulk
delete and its undo against a temp table of the ids and one UPDATE plus the journal rows. Every
pair is timed interleaved. Each test works on a copy of the cached store (cached stores are
shared). Sizes: open, rm and undo at 100k and 1M with MNEMOSCOPE_BENCH_SCALE=full (10k and 100k
otherwise); the bulk step 10k of 100k (2k of 20k).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench import native_store
from bench.harness import FULL, Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage import Curator, MemoryQuery, open_store
from mnemoscope.storage.model import Status
from mnemoscope.storage.native.db.sqlite_source import SETTLED_NS

pytestmark = pytest.mark.bench
SIZES = sizes(full=[100_000, 1_000_000], ci=[10_000, 100_000])
BULK, BULK_STORE = (10_000, 100_000) if FULL else (2_000, 20_000)
PAGE = 100
NOW = "2026-11-27T12:00:00+00:00"


def _row(operation: str, size: int, project: float, baseline: str, base: float, limit: float, **kw: float) -> Row:
    return record(Row("curation", operation, size, project, baseline, base, limit, **kw))


@contextlib.contextmanager
def _copy(size: int, tmp_path: Path) -> Iterator[Path]:
    """A private copy of the cached store of size memories, opened once for writing."""
    source = cached_store("native", size, native_store.VERSION, native_store.build)
    target = tmp_path / "store"
    shutil.copytree(source, target)
    open_store(target).close()
    yield target
    shutil.rmtree(target, ignore_errors=True)


@pytest.mark.parametrize("size", SIZES, ids=lambda n: f"{n // 1000}k")
def test_writable_open(size: int, tmp_path: Path) -> None:
    with _copy(size, tmp_path) as path:
        db = path / "memory.db"
        time.sleep(SETTLED_NS / 1e9)  # a store at rest: its copy's last write a clock tick ago

        def writable() -> None:
            open_store(path).close()

        def by_hand() -> None:  # ready to write: ours, at our version, no step left unfinished
            con = sqlite3.connect(db)
            assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            assert con.execute("SELECT count(*) FROM audit WHERE state = 'pending'").fetchone() == (0,)
            con.close()

        def writable_page() -> None:
            with open_store(path) as store:
                assert len(store.page(MemoryQuery(), PAGE)) == PAGE

        def read_only_page() -> None:
            with open_store(path, read_only=True) as store:
                assert len(store.page(MemoryQuery(), PAGE)) == PAGE

        project_s, baseline_s = paired_medians_s(writable, by_hand)
        rows = [_row("writable open", size, project_s,
                     "sqlite3 connect + schema version + unfinished steps", baseline_s, 1.5, guard=3.0)]
        # An open of a file this process has not seen in its present state (an agent wrote a row
        # just before) reads its journal again: each side opens right after another program's write.
        project_s, baseline_s = _after_a_write(db, writable, by_hand)
        rows.append(_row("writable open after an agent's write", size, project_s,
                         "sqlite3 connect + schema version + unfinished steps", baseline_s, 1.5, guard=3.0))
        project_s, baseline_s = paired_medians_s(writable_page, read_only_page)
        rows.append(_row(f"writable open + first page of {PAGE}", size, project_s, "read-only open + first page",
                         baseline_s, 1.5, guard=3.0))
        assert all(row.bounded for row in rows)


def _after_a_write(db: Path, project: Callable[[], object], baseline: Callable[[], object],
                   repeat: int = 31) -> tuple[float, float]:
    """The median seconds of project and of baseline, each run right after an agent's write of
    one row (not timed), the side that goes first swapped every round."""
    def agent_writes() -> None:
        with contextlib.closing(sqlite3.connect(db)) as con, con:
            con.execute("UPDATE memories SET access_count = access_count + 1 WHERE rowid = 1")

    project_times: list[float] = []
    baseline_times: list[float] = []
    sides = [(project, project_times), (baseline, baseline_times)]
    for n in range(repeat):
        for fn, times in sides if n % 2 == 0 else sides[::-1]:
            agent_writes()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    return statistics.median(project_times), statistics.median(baseline_times)


def _person_deletes(db: Path, memory_id: str) -> int:
    """rm ID as a person writes it in SQL: the before-image, one UPDATE, the journal rows."""
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        cursor = con.execute("SELECT * FROM memories WHERE id = ?", (memory_id,))
        names = [d[0] for d in cursor.description]
        before = dict(zip(names, cursor.fetchone(), strict=True))
        con.execute("UPDATE memories SET status = 'deleted', updated_at = ? WHERE id = ?", (NOW, memory_id))
        seq = _journal(con, "delete", [memory_id], [{"record": memory_id, "before": before}])
        con.execute("COMMIT")
        return seq
    finally:
        con.close()


def _person_undoes(db: Path, seq: int) -> None:
    """undo as a person writes it: the entry's before-images put back, the entry marked undone."""
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        (raw,) = con.execute("SELECT changes FROM audit_changes WHERE seq = ?", (seq,)).fetchone()
        befores = [c["before"] for c in json.loads(raw)]
        _put_back(con, befores)
        _journal(con, "undo", [b["id"] for b in befores], [])
        con.execute("UPDATE audit SET state = 'log' WHERE seq = ?", (seq,))
        con.execute("COMMIT")
    finally:
        con.close()


def _journal(con: sqlite3.Connection, operation: str, targets: list[str], changes: list[dict]) -> int:
    # state 'log': the person's entries are never the product's to undo
    seq = con.execute(
        "INSERT INTO audit(at, operation, targets, channel, actor, state, details) "
        "VALUES (?, ?, ?, NULL, 'user', 'log', '{}')", (NOW, operation, json.dumps(targets)),
    ).lastrowid
    con.execute("INSERT INTO audit_changes(seq, changes) VALUES (?, ?)", (seq, json.dumps(changes)))
    con.executemany("INSERT INTO audit_targets(seq, target) VALUES (?, ?)", [(seq, t) for t in targets])
    return int(seq)


def _put_back(con: sqlite3.Connection, befores: list[dict]) -> None:
    con.execute("CREATE TEMP TABLE IF NOT EXISTS restored(id TEXT PRIMARY KEY, status TEXT, updated_at TEXT)")
    con.execute("DELETE FROM temp.restored")
    con.executemany("INSERT INTO temp.restored VALUES (?, ?, ?)", [(b["id"], b["status"], b["updated_at"]) for b in befores])
    con.execute("UPDATE memories SET status = r.status, updated_at = r.updated_at FROM temp.restored r "
                "WHERE memories.id = r.id")


@pytest.mark.parametrize("size", SIZES, ids=lambda n: f"{n // 1000}k")
def test_rm_one_and_undo(size: int, tmp_path: Path) -> None:
    with _copy(size, tmp_path) as path:
        with open_store(path, read_only=True) as store:
            memory_id = store.page(MemoryQuery(), 1)[0].id

        def rm_then_undo() -> None:  # two CLI commands: `mnemoscope rm ID`, then `mnemoscope undo`
            with open_store(path) as store:
                Curator(store).delete(memory_id)
            with open_store(path) as store:
                Curator(store).undo()

        def by_hand() -> None:
            _person_undoes(path / "memory.db", _person_deletes(path / "memory.db", memory_id))

        project_s, baseline_s = paired_medians_s(rm_then_undo, by_hand, repeat=11, warmup=2)
        with open_store(path, read_only=True) as store:
            assert store.get(memory_id).status is Status.ACTIVE
        _row("rm ID + undo (open, step, close each)", size, project_s,
             "sqlite3: before-image, UPDATE, journal rows", baseline_s, 1.5, guard=3.0)
        # The contract here is absolute (issue 27: `rm ID` and `undo` under 0.3 s each at 1M): what
        # the ratio adds over a person's SQL is fixed per command (an engine, the store's open and
        # close, about 15-35 ms on the shared CI machine), and noisier than the guard.
        assert project_s < 0.6


def _person_bulk_deletes(db: Path, ids: list[str]) -> int:
    """A bulk delete as a person writes it: a temp table of the ids, the before-images read through
    it, one UPDATE, the journal rows."""
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.execute("BEGIN IMMEDIATE")
        con.execute("CREATE TEMP TABLE IF NOT EXISTS picked(id TEXT PRIMARY KEY)")
        con.execute("DELETE FROM temp.picked")
        con.executemany("INSERT INTO temp.picked VALUES (?)", [(i,) for i in ids])
        cursor = con.execute("SELECT m.* FROM memories m JOIN temp.picked p ON p.id = m.id")
        names = [d[0] for d in cursor.description]
        befores = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        con.execute("UPDATE memories SET status = 'deleted', updated_at = ? WHERE id IN (SELECT id FROM temp.picked)",
                    (NOW,))
        seq = _journal(con, "delete", ids, [{"record": b["id"], "before": b} for b in befores])
        con.execute("COMMIT")
        return seq
    finally:
        con.close()


def _alternating(project: list[Callable[[], object]], baseline: list[Callable[[], object]],
                 repeat: int) -> list[list[float]]:
    """The seconds of each function per round (project's, then baseline's): each side's functions
    run in turn, the side that goes first swapped every round."""
    times: list[list[float]] = [[] for _ in (*project, *baseline)]
    sides = [list(enumerate(project)), list(enumerate(baseline, len(project)))]
    for n in range(repeat):
        for side in (sides if n % 2 == 0 else sides[::-1]):
            for i, fn in side:
                start = time.perf_counter()
                fn()
                times[i].append(time.perf_counter() - start)
    return times


def test_bulk_delete_and_undo(tmp_path: Path) -> None:
    with _copy(BULK_STORE, tmp_path) as path:
        db = path / "memory.db"
        with contextlib.closing(sqlite3.connect(db)) as con:
            ids = [r[0] for r in con.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id LIMIT ?",
                                             (BULK,))]
        store = open_store(path)
        curator = Curator(store)
        seqs: list[int] = []

        def delete() -> None:
            assert len(curator.delete(ids).ids) == BULK

        def undo() -> None:
            curator.undo()

        def by_hand() -> None:
            seqs.append(_person_bulk_deletes(db, ids))

        def by_hand_undo() -> None:
            _person_undoes(db, seqs.pop())

        times = _alternating([delete, undo], [by_hand, by_hand_undo], repeat=7)
        active = store.count(MemoryQuery(ids=tuple(ids)))
        store.close()
        assert active == BULK
        delete_s, undo_s, hand_s, hand_undo_s = (statistics.median(t) for t in times)
        ratio = f"{BULK // 1000}k of {BULK_STORE // 1000}k"
        rows = [
            _row(f"bulk delete of {ratio}", BULK_STORE, delete_s, "temp table + one UPDATE + journal rows", hand_s,
                 1.5, guard=3.0),
            _row(f"undo of a bulk delete of {ratio}", BULK_STORE, undo_s, "temp table + one UPDATE + journal rows",
                 hand_undo_s, 1.5, guard=3.0),
        ]
        assert all(row.bounded for row in rows)
