"""Import and export at size, against what a person would write with sqlite3 for the same answer.

Import: `import_store` of the cached native store into a new memory.db, against reading the same
source with sqlite3, preparing the same rows (import key, provenance, metadata) and one
executemany into the same schema; reading and preparing inside the timer for both, and the two
destinations compared row for row. Export: `mnemoscope export ... --format jsonl` against a
sqlite3 + json.dumps loop writing the same lines (the files compared byte for byte); and the
export's peak memory, in a subprocess, flat across sizes.
Sizes: 1M with MNEMOSCOPE_BENCH_SCALE=full; 20k otherwise."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench import native_store
from bench.harness import FULL, Row, cached_store, label, record, sizes
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.transfer import import_store

pytestmark = pytest.mark.bench

SIZES = sizes(full=[1_000_000], ci=[20_000])
MEMORY_COLUMNS = ("id", "layer", "channel", "content", "created_at", "updated_at", "last_accessed", "access_count",
                  "salience", "confidence", "conversations", "tags", "metadata", "status", "promoted_from",
                  "derived_from", "imported_from", "import_key", "md_file", "vector_state")


def _source(size: int) -> Path:
    return cached_store("native", size, native_store.VERSION, native_store.build)


def _alternating(project: Callable[[], object], baseline: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The smallest of repeat runs of each, taken in turns so a change of load meets both."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, taken in zip((project, baseline), times, strict=True):
            start = time.perf_counter()
            fn()
            taken.append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


# -- import --------------------------------------------------------------------------------------

def _baseline_import(source_root: Path, dest_db: Path) -> int:
    """What a person writes: the source's rows read with sqlite3, each prepared as the import keeps
    it (its key and provenance, the import's metadata), one executemany in one transaction."""
    origin = str(source_root)
    source = sqlite3.connect(f"file:{source_root / 'memory.db'}?mode=ro", uri=True)
    dest = sqlite3.connect(dest_db)
    read = ("SELECT id, layer, channel, content, created_at, updated_at, last_accessed, access_count, salience, "
            "confidence, conversations, tags, metadata, status, promoted_from, derived_from FROM memories "
            "ORDER BY created_at DESC, id DESC")

    def prepared() -> Iterator[tuple]:
        for (memory_id, layer, channel, content, created, updated, accessed, access_count, salience, confidence,
             conversations, tags, metadata, status, promoted_from, derived_from) in source.execute(read):
            key = f"sqlite:{origin}#{memory_id}"
            meta = json.loads(metadata)
            meta["import"] = {"format": "sqlite", "path": origin, "original_id": memory_id,
                              "location": f"memory.db:memories/{memory_id}"}
            yield (memory_id, layer, channel, content, created, updated, accessed, access_count, salience,
                   confidence, conversations, tags, json.dumps(meta, ensure_ascii=False, sort_keys=True), status,
                   promoted_from, derived_from, key, key, None, "none")

    with dest:
        dest.executemany(f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})", prepared())
    (n,) = dest.execute("SELECT count(*) FROM memories").fetchone()
    dest.close()
    source.close()
    return int(n)


def _rows_of(db: Path) -> Iterator[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        yield from con.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories ORDER BY id")
    finally:
        con.close()


@pytest.mark.parametrize("size", SIZES, ids=label)
def test_import_against_executemany(tmp_path: Path, size: int) -> None:
    source = _source(size)
    empty = tmp_path / "empty.db"
    SqliteSource.open(empty, create=True).close()
    runs = iter(range(100))

    def fresh(kind: str) -> Path:
        folder = tmp_path / f"{kind}-{next(runs)}"
        folder.mkdir()
        shutil.copy(empty, folder / "memory.db")
        return folder

    project_dest: list[Path] = []
    baseline_dest: list[Path] = []
    reported: list[tuple[int, int]] = []
    project_folders = [fresh("project") for _ in range(2)]
    baseline_folders = [fresh("baseline") for _ in range(2)]

    def project() -> None:
        folder = project_folders[len(project_dest)]
        summary = import_store(source, folder, progress=lambda done, total: reported.append((done, total)))
        assert summary.imported == size
        project_dest.append(folder)

    def baseline() -> None:
        folder = baseline_folders[len(baseline_dest)]
        assert _baseline_import(source.resolve(), folder / "memory.db") == size
        baseline_dest.append(folder)

    project_s, baseline_s = _alternating(project, baseline, repeat=1)
    assert reported[-1] == (size, size)
    for mine, theirs in zip(_rows_of(project_dest[0] / "memory.db"), _rows_of(baseline_dest[0] / "memory.db"),
                            strict=True):
        assert mine == theirs
    # A rate >= 0.5x executemany's is a time <= 2x its.
    row = record(Row("transfer", f"import {label(size)} into memory.db ({size / project_s:,.0f} rows/s)", size,
                     project_s, f"sqlite3 read + executemany ({size / baseline_s:,.0f} rows/s)", baseline_s, 2.0))
    assert row.bounded
