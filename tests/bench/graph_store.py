"""The graph benchmark store: a memory.db of n entities and 5n relations between them (random
ends, so a depth-2 ego graph holds about a hundred entities), and n ABOUT relations from n/2
memories to the entities they are about (as an agent's store holds them: a walk must not pass
through a memory), written with executemany into the product's own schema (SqliteSource creates
it, its indexes included)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

from mnemoscope.storage.native.db.sqlite_source import SqliteSource

VERSION = 2
RELATIONS_PER_ENTITY = 5
TYPES = ("KNOWS", "WORKS_FOR", "PART_OF", "RELATED_TO", "CREATED_BY")
CHANNELS = ("_global", "alpha", "beta", "gamma", "delta")
KINDS = ("person", "project", "tool", "organization", "concept")
SEEN = "2025-01-01T00:00:00+00:00"


def name(i: int) -> str:
    return f"Entity {i}"


def build(path: Path, n: int) -> None:
    SqliteSource.open(path / "memory.db", create=True).close()
    rng = random.Random(27)
    entities = [(f"e-{i:07d}", name(i), KINDS[i % 5], CHANNELS[i % 5], f"entity number {i}",
                 ((i * 7919) % 1000) / 1000, i % 13, SEEN, SEEN) for i in range(n)]
    relations = []
    for k in range(RELATIONS_PER_ENTITY * n):
        source, target = rng.randrange(n), rng.randrange(n)
        relations.append((f"r-{k:08d}", f"e-{source:07d}", f"e-{target:07d}", TYPES[k % 5], CHANNELS[source % 5], SEEN))
    for k in range(n):
        relations.append((f"a-{k:08d}", f"m-{k // 2:07d}", f"e-{rng.randrange(n):07d}", "ABOUT", "_global", SEEN))
    con = sqlite3.connect(path / "memory.db")
    with con:
        con.executemany("INSERT INTO entities (id, name, type, channel, description, salience, access_count, "
                        "first_seen, last_accessed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", entities)
        con.executemany("INSERT INTO relations (id, source_id, target_id, type, channel, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?)", relations)
    con.execute("ANALYZE")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
