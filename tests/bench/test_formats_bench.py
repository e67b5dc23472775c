"""Foreign formats where their data lives (issue 27): LangGraph's SqliteStore at 200k items and
mem0 on Qdrant's local mode at 50k points, against what a person writes for the same answer.

LangGraph: SqliteStore itself creates the schema and writes the items (its batch of puts) up to
LIBRARY_ITEMS; beyond that (full size) the rest go in with executemany in the very form its puts
leave (orjson bytes, CURRENT_TIMESTAMP text), which the builder checks against an item SqliteStore
wrote and reads one of them back through SqliteStore. Baseline: SQL on the file.
mem0: mem0's own Qdrant vector store (mem0.vector_stores.qdrant, on qdrant_client's local mode)
inserts every point with mem0's payload (data, text_lemmatized, hash, times, user_id) and a
1,536-float dense vector (OpenAI's text-embedding-3-small, mem0's default). Baseline:
qdrant_client's own open + scroll of the first page.
Contract: each within 2x of its baseline, timed in turns.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
import sqlite3
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bench.harness import FULL, Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage.opening import open_store

pytestmark = pytest.mark.bench

PAGE = 100
LIBRARY_ITEMS = 20_000
WORDS = ("tea coffee lisbon porto flight hotel invoice meeting deploy outage budget release dinner "
         "report weather calendar reminder draft summary customer order shipping ticket").split()
# What costs the same on any store however small (open_store probing the folder, building the page's
# memories): at CI's sizes the baselines take a few milliseconds, less than that.
FIXED_S = 0.05


def holds(row: Row) -> None:
    if FULL:
        assert row.holds, row
    else:
        assert row.project_s <= row.limit * row.baseline_s + FIXED_S, row


def sentence(rnd: random.Random) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(6, 14)))


# -- LangGraph's SqliteStore -----------------------------------------------------------------------

LG_DB = "store.db"


def item(i: int, rnd: random.Random) -> tuple[tuple[str, ...], str, dict]:
    return ("memories", f"user-{i % 500:03d}"), f"item-{i:07d}", {"text": sentence(rnd), "kind": "fact", "n": i}


def build_langgraph(folder: Path, size: int) -> None:
    rnd = random.Random(27)
    items = [item(i, rnd) for i in range(size)]
    db = folder / LG_DB
    library = min(size, LIBRARY_ITEMS)
    if importlib.util.find_spec("langgraph.store.sqlite") is not None:
        from langgraph.store.base import PutOp
        from langgraph.store.sqlite import SqliteStore

        con = sqlite3.connect(db, check_same_thread=False, isolation_level=None)
        store = SqliteStore(con)
        store.setup()
        for start in range(0, library, 1000):
            store.batch([PutOp(ns, key, value) for ns, key, value in items[start : start + 1000]])
        con.close()
    else:
        library = 0
        con = sqlite3.connect(db)
        con.executescript(LG_SCHEMA)
        con.close()
    con = sqlite3.connect(db)
    start = datetime(2025, 9, 1, 8, 0, 0)
    con.executemany(
        "INSERT INTO store (prefix, key, value, created_at, updated_at, expires_at, ttl_minutes) "
        "VALUES (?, ?, ?, ?, ?, NULL, NULL)",
        (
            (".".join(ns), key, json.dumps(value, separators=(",", ":")).encode(), stamp, stamp)
            for i, (ns, key, value) in enumerate(items[library:], start=library)
            for stamp in [(start + timedelta(seconds=11 * i)).strftime("%Y-%m-%d %H:%M:%S")]
        ),
    )
    con.commit()
    if library and size > library:
        kinds = con.execute(
            "SELECT DISTINCT typeof(value), length(created_at), typeof(expires_at) FROM store").fetchall()
        assert len(kinds) == 1, kinds  # the rows written here have the form SqliteStore's have
        con.close()
        from langgraph.store.sqlite import SqliteStore

        with SqliteStore.from_conn_string(str(db)) as store:
            ns, key, value = items[-1]
            assert store.get(ns, key).value == value
    else:
        con.close()


# SqliteStore's schema after its migrations (langgraph/store/sqlite/base.py), when it is not installed.
LG_SCHEMA = """
CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value text NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    expires_at TIMESTAMP, ttl_minutes REAL, PRIMARY KEY (prefix, key));
CREATE INDEX store_prefix_idx ON store (prefix);
CREATE INDEX idx_store_expires_at ON store (expires_at) WHERE expires_at IS NOT NULL;
"""


@pytest.fixture(scope="module", params=sizes(full=[200_000], ci=[20_000]))
def langgraph_db(request: pytest.FixtureRequest) -> tuple[Path, int]:
    size = request.param
    return cached_store("langgraph", size, 1, build_langgraph) / LG_DB, size


def sql(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


def test_langgraph_open_and_first_page(langgraph_db: tuple[Path, int]) -> None:
    db, size = langgraph_db
    newest = "SELECT * FROM store ORDER BY updated_at DESC, prefix || '/' || key DESC LIMIT ?"

    def project() -> None:
        with open_store(db) as store:
            assert len(store.page(limit=PAGE)) == PAGE

    def baseline() -> None:
        con = sql(db)
        con.execute("SELECT count(*) FROM store").fetchone()
        assert len(con.execute(newest, (PAGE,)).fetchall()) == PAGE
        con.close()

    con = sql(db)
    with open_store(db) as store:  # the same items, in the same order
        keys = [m.metadata["key"] for m in store.page(limit=PAGE)]
        assert keys == [row[1] for row in con.execute(newest, (PAGE,))]
    con.close()
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=9, warmup=1)
    row = record(Row("langgraph", f"open + first page of {PAGE}", size, project_s,
                     "new connection, count(*) + newest page", baseline_s, 2.0))
    holds(row)


def test_langgraph_count(langgraph_db: tuple[Path, int]) -> None:
    db, size = langgraph_db
    con = sql(db)
    with open_store(db) as store:
        assert store.count() == size
        project_s, baseline_s = paired_medians_s(
            store.count, lambda: con.execute("SELECT count(*) FROM store").fetchone(), repeat=15)
        row = record(Row("langgraph", "count", size, project_s, "SELECT count(*)", baseline_s, 2.0))
    con.close()
    holds(row)


# -- mem0 on Qdrant's local mode ------------------------------------------------------------------

COLLECTION = "mem0"
DIMS = 1536


def build_mem0_qdrant(folder: Path, size: int) -> None:
    import numpy as np
    from mem0.vector_stores.qdrant import Qdrant

    rnd = random.Random(27)
    vectors = np.random.default_rng(27).standard_normal((size, DIMS), dtype=np.float32)
    start = datetime(2025, 9, 1, 8, 0, 0, tzinfo=timezone.utc)
    store = Qdrant(COLLECTION, DIMS, path=str(folder / "qdrant"))
    for first in range(0, size, 1000):
        payloads, ids = [], []
        for i in range(first, min(size, first + 1000)):
            text = sentence(rnd)
            stamp = (start + timedelta(seconds=13 * i)).isoformat()
            payloads.append({"data": text, "text_lemmatized": text, "hash": hashlib.md5(text.encode()).hexdigest(),
                             "created_at": stamp, "updated_at": stamp, "user_id": f"user-{i % 50:02d}"})
            ids.append(str(uuid.UUID(int=rnd.getrandbits(128), version=4)))
        store.insert(vectors[first : first + len(ids)].tolist(), payloads, ids)
    store.client.close()


@pytest.fixture(scope="module", params=sizes(full=[50_000], ci=[2_000]))
def mem0_qdrant(request: pytest.FixtureRequest) -> tuple[Path, int]:
    pytest.importorskip("mem0")
    pytest.importorskip("qdrant_client")
    size = request.param
    return cached_store("mem0-qdrant", size, 1, build_mem0_qdrant) / "qdrant", size


def test_mem0_qdrant_open_and_first_page(mem0_qdrant: tuple[Path, int]) -> None:
    from qdrant_client import QdrantClient

    folder, size = mem0_qdrant

    def project() -> None:
        with open_store(folder) as store:
            assert len(store.page(limit=PAGE)) == PAGE

    def baseline() -> None:
        client = QdrantClient(path=str(folder))
        points, _next = client.scroll(COLLECTION, limit=PAGE, with_payload=True, with_vectors=False)
        assert len(points) == PAGE
        client.close()

    with open_store(folder) as store:
        assert store.count() == size
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=3 if FULL else 5, warmup=1)
    row = record(Row("mem0-qdrant", f"open + first page of {PAGE}", size, project_s,
                     "QdrantClient(path=) + scroll", baseline_s, 2.0))
    holds(row)
