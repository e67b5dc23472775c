"""The findings benchmark store: the native benchmark store (native_store.py) with one memory in
every EVERY holding a planted secret, injection string or hidden text (helpers/findings_planted),
spread through it, so that a scan finds about n / EVERY findings. Built by copying the cached
native store's memory.db and rewriting those rows' content (the FTS triggers follow)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from bench import native_store
from bench.harness import cached_store
from helpers.findings_planted import PLANTED

VERSION = 1
EVERY = 997


def build(path: Path, n: int) -> None:
    source = cached_store("native", n, native_store.VERSION, native_store.build)
    shutil.copy2(source / "memory.db", path / "memory.db")
    con = sqlite3.connect(path / "memory.db")
    with con:
        con.executemany(
            "UPDATE memories SET content = ? WHERE id = ?",
            [(PLANTED[(i // EVERY) % len(PLANTED)][0], f"m-{i:09d}") for i in range(EVERY // 2, n, EVERY)],
        )
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
