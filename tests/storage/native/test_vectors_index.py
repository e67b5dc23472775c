"""The Chroma metadata index: pages, counts and searches read columns of every record and build
memories only for the rows they return; they answer what building every memory would."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from mnemoscope.storage import Curator, Layer, MemoryQuery, Order, Status, open_store
from mnemoscope.storage.native.chroma import index, index_cache, local_vector_search
from mnemoscope.storage.native.chroma.local import ChromaSource
from mnemoscope.storage.native.chroma.records import record_id_for
from mnemoscope.storage.query import sort_key
from mnemoscope.storage.source import matches

DIM = 8
TIMES = [
    "2026-01-03T10:00:00Z", "2026-01-03T12:00:00+02:00", "2026-01-02T09:30:00.250000+00:00", 1767225600,
    1767225600500.0, "not a time", "2026-01-05", "2026-01-03T10:00:00+00:00",
]
STATUSES: list[Any] = ["active", "archived", "deleted", "Deleted", None, 3, True, "ACTIVE"]
CHANNELS: list[Any] = ["_global", "alpha", "beta", None, True, 7, ""]
LAYERS: list[Any] = [("layer", "episodic"), ("category", "social"), ("memory_type", "core"), ("layer", "nonsense"), None]


def _client(path: Path):
    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def _record(i: int) -> dict[str, Any]:
    meta: dict[str, Any] = {"n": i}
    for key, values in (("status", STATUSES), ("channel", CHANNELS)):
        value = values[i % len(values)]
        if value is not None:
            meta[key] = value
    layer = LAYERS[i % len(LAYERS)]
    if layer is not None:
        meta[layer[0]] = layer[1]
    meta["created_at" if i % 3 else "timestamp"] = TIMES[i % len(TIMES)]
    if i % 4:
        meta["updated_at"] = TIMES[(i * 3) % len(TIMES)]
    if i % 5:
        meta["last_accessed"] = TIMES[(i * 5) % len(TIMES)]
    if i % 6:
        meta["salience"] = [0.25, "0.5", "high", 0.75, 1, True][i % 6]
    if i % 11 == 0:
        meta["mnemoscope_stale"] = True
    return meta


def _mixed(path: Path, n: int = 160) -> None:
    """Two collections whose records hold every kind of value a time, status, channel or layer
    can take in metadata written by other tools."""
    client = _client(path)
    rng = np.random.default_rng(1)
    for name, start in (("facts", 0), ("notes", n)):
        col = client.get_or_create_collection(name, embedding_function=None)
        ids = range(start, start + n)
        col.add(
            ids=[f"r{i:04d}" for i in ids],
            embeddings=rng.normal(size=(n, DIM)).astype(np.float32).tolist(),
            documents=[f"Fact {i} about Caché, 50% of_the STRASSE" if i % 7 == 0 else f"fact {i} about topic {i % 9}" for i in ids],
            metadatas=[_record(i) for i in ids],
        )


def _everything(source: ChromaSource) -> list:
    """Every record as a full memory, built one by one (what pages used to do)."""
    return [
        source.get(record_id_for(name, record_id))
        for name in source.collections()
        for record_id, _meta in source.metadata_index(name)
    ]


QUERIES = [
    MemoryQuery(),
    MemoryQuery(statuses=()),
    MemoryQuery(statuses=(Status.ARCHIVED, Status.DELETED)),
    MemoryQuery(channels=("alpha", "True", "7")),
    MemoryQuery(layers=(Layer.SOCIAL, Layer.SEMANTIC), statuses=()),
    MemoryQuery(since=datetime(2026, 1, 3, tzinfo=timezone.utc), until=datetime(2026, 1, 4, tzinfo=timezone.utc)),
]


def test_pages_and_counts_match_building_every_memory(tmp_path: Path) -> None:
    _mixed(tmp_path)
    with open_store(tmp_path) as store:
        source = store.sources[0].vectors
        everything = _everything(source)
        for query, order, descending in itertools.product(QUERIES, list(Order), (True, False)):
            query = MemoryQuery(**{**query.__dict__, "order": order, "descending": descending})
            expected = sorted((m for m in everything if matches(m, query)), key=sort_key(order), reverse=descending)
            assert source.count(query) == len(expected), query
            for offset, limit in ((0, 25), (40, 30), (len(expected) - 5, 50)):
                got = source.page(query, limit, max(offset, 0))
                want = expected[max(offset, 0) : max(offset, 0) + limit]
                assert [m.id for m in got] == [m.id for m in want], (query, offset)
                assert [m.content for m in got] == [m.content for m in want]
        for column, attribute in (("channel", "channel"), ("layer", "layer"), ("status", "status")):
            expected_counts: dict[str, int] = {}
            for m in everything:
                key = getattr(m, attribute)
                key = key.value if hasattr(key, "value") else key
                expected_counts[key] = expected_counts.get(key, 0) + 1
            assert source.counts_by(column, MemoryQuery(statuses=())) == expected_counts
        assert source.counts_by("kind", MemoryQuery(statuses=())) == {"chroma": len(everything)}
        stale = {m.id for m in everything if m.metadata.get("mnemoscope_stale")}
        assert set(source.stale_record_ids()) == stale


def test_records_without_a_time_read_as_made_now(tmp_path: Path) -> None:
    col = _client(tmp_path).get_or_create_collection("facts", embedding_function=None)
    col.add(
        ids=["old", "timeless", "new"],
        embeddings=[[1.0] * DIM, [0.5] * DIM, [0.2] * DIM],
        documents=["old", "timeless", "new"],
        metadatas=[{"created_at": "2020-01-01T00:00:00Z"}, {"n": 1}, {"created_at": "2026-01-01T00:00:00Z"}],
    )
    with open_store(tmp_path) as store:
        assert [m.content for m in store.page(MemoryQuery(order=Order.CREATED), 10)] == ["timeless", "new", "old"]
        assert store.count(MemoryQuery(since=datetime(2025, 1, 1, tzinfo=timezone.utc))) == 2


def test_keyword_search_ranks_as_counting_each_word_case_insensitively(tmp_path: Path) -> None:
    _mixed(tmp_path)
    with open_store(tmp_path) as store:
        source = store.sources[0].vectors
        everything = [m for m in _everything(source) if m.status is Status.ACTIVE]
        for text in ("topic 3", "CACHÉ strasse", "50% of_the", "straße", "fact fact 1", "%", "_", "nothing-here"):
            words = text.split()
            scored = sorted(
                (-sum(w.casefold() in m.content.casefold() for w in words), m.id)
                for m in everything
                if any(w.casefold() in m.content.casefold() for w in words)
            )
            got = source.keyword_search(text, MemoryQuery(), 12)
            assert [m.id for m in got] == [i for _s, i in scored[:12]], text


def test_keyword_search_reads_text_kept_in_metadata(tmp_path: Path) -> None:
    col = _client(tmp_path).get_or_create_collection("agent", embedding_function=None)
    col.add(
        ids=["a", "b", "c"],
        embeddings=[[1.0] * DIM, [0.5] * DIM, [0.2] * DIM],
        metadatas=[{"data": "User likes green TEA"}, {"data": "tea in Lisbon", "text": "Lisbon again"}, {"data": "none"}],
    )
    with open_store(tmp_path) as store:
        hits = store.sources[0].vectors.keyword_search("tea lisbon", MemoryQuery(), 5)
        assert [m.id for m in hits] == ["vec:agent:b", "vec:agent:a"]


def test_the_index_is_kept_between_opens_until_the_directory_changes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(index_cache, "_PERSIST_FROM", 1)
    _mixed(tmp_path / "store", n=30)
    with open_store(tmp_path / "store") as store:
        first = [m.id for m in store.page(MemoryQuery(), 20)]
    assert list((tmp_path / "cache").rglob("*.npz"))
    index_cache._INDEXES.clear()
    built: list[int] = []
    real = index.RecordIndexBuilder.index

    def counted(self):
        built.append(1)
        return real(self)

    monkeypatch.setattr(index.RecordIndexBuilder, "index", counted)
    with open_store(tmp_path / "store") as store:
        assert [m.id for m in store.page(MemoryQuery(), 20)] == first
        assert not built, "an unchanged directory reads its kept index"
        target = first[0]
        Curator(store).edit(target, content="edited through Mnemoscope")
        assert store.get(target).content == "edited through Mnemoscope"
        assert target in [m.id for m in store.page(MemoryQuery(contains="edited through"), 20)]
    assert built, "a changed directory builds its index again"


def _clustered(path: Path, n: int, space: str = "cosine") -> tuple[Any, list[str], np.ndarray]:
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(40, DIM)).astype(np.float32)
    data = centres[np.arange(n) % 40] + rng.normal(scale=0.3, size=(n, DIM)).astype(np.float32)
    col = _client(path).get_or_create_collection("facts", embedding_function=None, metadata={"hnsw:space": space})
    ids = [f"v{i}" for i in range(n)]
    for start in range(0, n, 500):
        col.add(
            ids=ids[start : start + 500],
            embeddings=data[start : start + 500].tolist(),
            documents=[f"vector {i}" for i in range(start, min(n, start + 500))],
            metadatas=[{"status": "deleted" if i % 10 == 0 else "active"} for i in range(start, min(n, start + 500))],
        )
    return col, ids, data


@pytest.mark.parametrize("space", ["cosine", "l2", "ip"])
def test_vector_search_walks_chromas_graph_and_finds_what_comparing_every_vector_finds(
    tmp_path: Path, monkeypatch, space: str
) -> None:
    col, ids, data = _clustered(tmp_path, 2300, space)  # 2,000 in the persisted graph, 300 still queued
    col.delete(ids=["v5", "v2210"])
    col.update(ids=["v7"], embeddings=[(data[8] * 1.01).tolist()])
    rng = np.random.default_rng(8)
    queries = [(data[i] + rng.normal(scale=0.1, size=DIM)).astype(np.float32).tolist() for i in (3, 7, 8, 2205, 1999)]
    with open_store(tmp_path) as store:
        source = store.sources[0].vectors
        exact = [[m.id for m, _d in source.vector_search(q, None, MemoryQuery(), 5)] for q in queries]
        monkeypatch.setattr(local_vector_search, "_GRAPH_FROM", 100)
        source._vectors.clear()
        walked = [[m.id for m, _d in source.vector_search(q, None, MemoryQuery(), 5)] for q in queries]
        assert source._vector_graph("facts") is not None
    agreement = sum(len(set(a) & set(b)) for a, b in zip(exact, walked, strict=True)) / (5 * len(queries))
    assert agreement >= 0.9, (exact, walked)
    found = {i for hit in walked for i in hit}
    assert "vec:facts:v5" not in found and "vec:facts:v2210" not in found
    assert all(int(i.rsplit("v", 1)[1]) % 10 for i in found), "deleted-status records are left out"
    assert walked[1][:2] == exact[1][:2]  # v7 moved next to v8: the update is seen, not the old vector


def test_a_search_hit_is_what_get_returns(tmp_path: Path) -> None:
    _clustered(tmp_path, 300)
    with open_store(tmp_path) as store:
        source = store.sources[0].vectors
        hits = source.vector_search([0.3] * DIM, None, MemoryQuery(), 5)
        for memory, _distance in hits:
            source._recent.clear()
            again = source.get(memory.id)
            assert again == memory and again.revision
