"""The native benchmark store: a memory.db of n memories, built with raw executemany into the
product's own schema (the schema, its indexes and FTS triggers come from SqliteSource)."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mnemoscope.storage.native.db.sqlite_source import SqliteSource

VERSION = 2
CHANNELS = ("_global", "alpha", "beta", "gamma", "delta")
LAYERS = ("semantic", "episodic", "procedural")
T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
WORDS = ("stripe", "payments", "deploy", "kubernetes", "invoice", "customer", "postgres", "latency", "budget", "retry")


def rows(start: int, stop: int) -> list[tuple]:
    out = []
    for i in range(start, stop):
        created = T0 + timedelta(seconds=30 * i)
        updated = created + timedelta(seconds=(i * 7919) % 86_400)
        accessed = created + timedelta(seconds=(i * 104_729) % 2_592_000)
        out.append((
            f"m-{i:09d}", LAYERS[i % 3], CHANNELS[i % 5],
            f"fact number {i} about {WORDS[i % 10]} and {WORDS[(i // 10) % 10]} in topic {i % 997}",
            created.isoformat(), updated.isoformat(), accessed.isoformat(),
            i % 17, ((i * 37) % 1000) / 1000, 1.0, i % 4, "[]", "{}",
            "deleted" if i % 20 == 0 else "active", "[]", "none",
        ))
    return out


COLUMNS = ("id", "layer", "channel", "content", "created_at", "updated_at", "last_accessed", "access_count",
           "salience", "confidence", "conversations", "tags", "metadata", "status", "derived_from", "vector_state")


def build(path: Path, n: int) -> None:
    SqliteSource.open(path / "memory.db", create=True).close()
    con = sqlite3.connect(path / "memory.db")
    sql = f"INSERT INTO memories ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"
    for start in range(0, n, 50_000):
        with con:
            con.executemany(sql, rows(start, min(n, start + 50_000)))
    con.execute("ANALYZE")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


if __name__ == "__main__":
    import sys
    import time

    from bench.harness import cached_store

    for size in map(int, sys.argv[1:]):
        t = time.perf_counter()
        print(cached_store("native", size, VERSION, build), f"{time.perf_counter() - t:.1f} s", flush=True)
