"""Chroma benchmarks: a native workspace whose memories live in vectors/ (a Chroma persistent
directory written by chromadb itself), against chromadb's own API and direct SQL on
chroma.sqlite3, measured in the same run.

Contract (issue 10), 100k records: open + first page and a deep page <= 2x ``collection.get``,
vector top-10 <= 1.2x ``collection.query``, keyword search <= 2x Chroma's own ``$contains``
(``where_document``). Each timed in turns with its baseline (paired_medians_s); a guard, where a
row has one, at most twice its limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bench.harness import Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.embedders.base import EMBEDDER_KEY, HashingEmbedder
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION
from mnemoscope.storage.views.search import search, vector_list

pytestmark = pytest.mark.bench

DIM = HashingEmbedder().dimensions  # the vectors the native workspace's default embedder writes
BUILD_VERSION = 2
CHANNELS = ("_global", "alpha", "beta", "gamma")
LAYERS = ("semantic", "episodic", "procedural", "core")
KEYWORDS = "topic 42"
TOPICS = 997


def _build(path: Path, size: int) -> None:
    """A Chroma-only native workspace: vectors/ holding the memories collection as the product
    creates it, records of their own (not mirrors), written by chromadb's client."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(path / "vectors"), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection(
        NATIVE_COLLECTION,
        embedding_function=None,
        metadata={EMBEDDER_KEY: HashingEmbedder().name, "hnsw:space": "cosine"},
    )
    rng = np.random.default_rng(10)
    # Each record's vector lies near its topic's (as a text embedding of "... about topic j" would):
    # nearest neighbours mean something, as they do for real embeddings (uniform noise has none).
    topics = rng.normal(size=(TOPICS, DIM)).astype(np.float32)
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    batch = 5000
    for start in range(0, size, batch):
        ids = range(start, min(size, start + batch))
        noise = rng.normal(scale=0.35, size=(len(ids), DIM)).astype(np.float32)
        vectors = topics[[i % TOPICS for i in ids]] + noise
        metadatas: list[dict[str, Any]] = []
        for i in ids:
            created = t0 + timedelta(minutes=i)
            updated = created + timedelta(minutes=(i * 7919) % 50_000)
            metadatas.append({
                "layer": LAYERS[i % 4],
                "channel": CHANNELS[i % 4],
                "status": "deleted" if i % 50 == 0 else "archived" if i % 50 == 1 else "active",
                "salience": (i % 100) / 100,
                "confidence": 0.9,
                "access_count": i % 13,
                "conversations": i % 3,
                "created_at": created.isoformat(),
                "updated_at": updated.isoformat(),
                "last_accessed": updated.isoformat(),
                "tags": '["bench"]',
            })
        col.add(
            ids=[f"r{i:07d}" for i in ids],
            embeddings=vectors,
            documents=[f"fact number {i} about topic {i % TOPICS}" for i in ids],
            metadatas=metadatas,
        )
    del col, client


@pytest.fixture(scope="module", params=sizes(full=[100_000], ci=[10_000]), ids=lambda n: f"{n}")
def chroma_store(request: pytest.FixtureRequest) -> Iterator[tuple[Path, int, Any]]:
    """(workspace root, size, chromadb collection on a copy-free client of the same directory)."""
    size = request.param
    root = cached_store("chroma-native", size, BUILD_VERSION, _build)
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(root / "vectors"), settings=Settings(anonymized_telemetry=False))
    yield root, size, client.get_collection(NATIVE_COLLECTION, embedding_function=None)
    del client


def _open_and_page(root: Path, offset: int) -> list:
    with open_store(root) as store:
        return store.page(MemoryQuery(), limit=100, offset=offset)


def _chroma_open_and_get(root: Path) -> dict:
    """What a person writes to see a collection's first records: a client, the collection, get."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(root / "vectors"), settings=Settings(anonymized_telemetry=False))
    return client.get_collection(NATIVE_COLLECTION, embedding_function=None).get(limit=100)


def test_open_and_first_page(chroma_store) -> None:
    root, size, _col = chroma_store
    assert len(_open_and_page(root, 0)) == 100 and len(_chroma_open_and_get(root)["ids"]) == 100
    project, baseline = paired_medians_s(lambda: _open_and_page(root, 0), lambda: _chroma_open_and_get(root), repeat=11)
    row = record(Row("chroma", "open + first page of 100", size, project, "chromadb client + get(limit=100)", baseline,
                     2.0, guard=4.0))
    assert row.bounded


def test_deep_page(chroma_store) -> None:
    root, size, col = chroma_store
    offset = size * 9 // 10
    with open_store(root) as store:
        assert len(store.page(MemoryQuery(), limit=100, offset=offset)) == 100
        project, baseline = paired_medians_s(lambda: store.page(MemoryQuery(), limit=100, offset=offset),
                                             lambda: col.get(limit=100, offset=offset), repeat=11)
    row = record(Row("chroma", f"deep page (offset {offset:,})", size, project,
                     f"chromadb get(offset={offset:,})", baseline, 2.0))
    assert row.holds


def test_vector_top10(chroma_store) -> None:
    root, size, col = chroma_store
    near = np.asarray(col.get(ids=["r0000042"], include=["embeddings"])["embeddings"][0], dtype=np.float32)
    query = (near + np.random.default_rng(3).normal(scale=0.2, size=DIM)).astype(np.float32).tolist()
    with open_store(root) as store:
        found, _ = vector_list(store, None, MemoryQuery(), 10, embedding=query)
        assert len(found) == 10
        # In turns: a few milliseconds each, where the machine's load moves more than the code does.
        project, baseline = paired_medians_s(lambda: vector_list(store, None, MemoryQuery(), 10, embedding=query),
                                             lambda: col.query(query_embeddings=[query], n_results=10), repeat=21)
    row = record(Row("chroma", "vector search top-10", size, project, "collection.query(n_results=10)", baseline, 1.2,
                     guard=2.4))
    assert row.bounded


def test_keyword_search(chroma_store) -> None:
    """The product ranks every record by how many of the words it holds (case aside); a person
    asks Chroma for ten records holding the text (``$contains``, case-sensitive, unranked)."""
    root, size, col = chroma_store
    with open_store(root) as store:
        hits = search(store, KEYWORDS, mode="keyword", k=10).hits
        assert len(hits) == 10 and all("42" in h.memory.content for h in hits)
        found = col.get(where_document={"$contains": KEYWORDS}, limit=10)["documents"]
        assert len(found) == 10 and all(KEYWORDS in d for d in found)
        project, baseline = paired_medians_s(lambda: search(store, KEYWORDS, mode="keyword", k=10),
                                             lambda: col.get(where_document={"$contains": KEYWORDS}, limit=10), repeat=11)
    # Two scans of every text (how many records hold each word, then the best of them): x1.4-1.75
    # at 10k, x1.6 at 100k on a loaded machine (2026-11-27); guard x4 against the load's swings.
    row = record(Row("chroma", f"keyword search {KEYWORDS!r} top-10", size, project,
                     f"get(where_document={{'$contains': {KEYWORDS!r}}}, limit=10)", baseline, 2.0, guard=4.0))
    assert row.bounded
