"""A local directory's vector search (local_vector_search.py): the nearest records exactly as
Chroma finds them, by comparing every vector or by walking Chroma's persisted HNSW graph, with
the query's filters applied to what was found; each hit is what get() returns."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from helpers.chroma_dirs import chroma_client, clustered, written
from mnemoscope.storage import Kind, MemoryQuery, Status, open_store
from mnemoscope.storage.native.chroma import local_vector_search
from mnemoscope.storage.native.chroma.local import ChromaSource
from mnemoscope.storage.views.search import vector_list

DIM = 8  # clustered()'s vectors


def test_nearest_records_are_the_ones_chroma_finds(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    vectors = written(path, 300)
    probe = (vectors[17] + vectors[99]) / 2
    copy = tmp_path / "client-copy"
    shutil.copytree(path, copy)
    theirs = chroma_client(copy).get_collection("facts").query(query_embeddings=[probe.tolist()], n_results=8)
    ours = ChromaSource.open(path).vector_search(probe.tolist(), None, MemoryQuery(statuses=()), 8)
    assert [m.id for m, _ in ours] == [f"vec:facts:{i}" for i in theirs["ids"][0]]
    assert np.allclose([d for _, d in ours], theirs["distances"][0], atol=1e-4)


@pytest.mark.parametrize("space", ["cosine", "l2", "ip"])
def test_vector_search_walks_chromas_graph_and_finds_what_comparing_every_vector_finds(
    tmp_path: Path, monkeypatch, space: str
) -> None:
    col, ids, data = clustered(tmp_path, 2300, space)  # 2,000 in the persisted graph, 300 still queued
    col.delete(ids=["v5", "v2210"])
    col.update(ids=["v7"], embeddings=[(data[8] * 1.01).tolist()])
    rng = np.random.default_rng(8)
    queries = [(data[i] + rng.normal(scale=0.1, size=DIM)).astype(np.float32).tolist() for i in (3, 7, 8, 2205, 1999)]
    with open_store(tmp_path) as store:
        source = store._sources[0].vectors
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
    clustered(tmp_path, 300)
    with open_store(tmp_path) as store:
        source = store._sources[0].vectors
        hits = source.vector_search([0.3] * DIM, None, MemoryQuery(), 5)
        for memory, _distance in hits:
            source._recent.clear()
            again = source.get(memory.id)
            assert again == memory and again.revision


def test_vector_search_reads_further_when_the_nearest_hits_left_the_query(demo_path: Path) -> None:
    """An agent archives the 6 memories nearest a vector in memory.db and leaves their vectors as
    they were: a search for the 3 nearest active memories reads past all 6, and finds what a
    full scan finds."""
    with open_store(demo_path) as store:
        target = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1)[0]
        embedding = store.embedding_of(target.id)
        assert embedding is not None
        nearest, _ = vector_list(store, None, MemoryQuery(), 6, embedding=embedding)
        archived = [m.id for m in nearest]
    with sqlite3.connect(demo_path / "memory.db") as con:  # the agent's write
        con.executemany("UPDATE memories SET status = 'archived' WHERE id = ?", [(i,) for i in archived])
    con.close()
    with open_store(demo_path) as store:
        found, _ = vector_list(store, None, MemoryQuery(), 3, embedding=embedding)
        everything, _ = vector_list(store, None, MemoryQuery(statuses=()), 100, embedding=embedding)
    active = [m.id for m in everything if m.status is Status.ACTIVE]
    assert [m.id for m in found] == active[:3] and not set(archived) & {m.id for m in found}


def test_vector_collections_hand_out_the_array_vector_search_reads_in_batches(tmp_path: Path) -> None:
    """Every vector as chromadb holds it (the HNSW files' part and the queued part, deletes and
    updates applied), a batch at a time: slices of the one array vector search keeps, not a second
    read; the record index the source filters with; not native (a directory opened alone)."""
    path = tmp_path / "chroma"
    written(path, 1300, space="l2")
    copy = tmp_path / "client-copy"
    shutil.copytree(path, copy)
    theirs = chroma_client(copy).get_collection("facts").get(include=["embeddings"])
    expected = dict(zip(theirs["ids"], theirs["embeddings"], strict=True))
    source = ChromaSource.open(path, read_only=True)
    try:
        [c] = source.vector_collections()
        assert (c.name, c.count, c.dimension, c.space, c.kind) == ("facts", len(expected), 16, "l2", Kind.CHROMA)
        assert not c.native and c.mirror_kind is None
        got = list(c.batches(500))
        assert [len(b) for b, _v in got] == [500, 500, len(expected) - 1000]
        ids = [i for b, _v in got for i in b]
        assert sorted(ids) == sorted(expected)
        assert np.allclose(np.vstack([v for _b, v in got]), [expected[i] for i in ids])
        matrix = source._vector_matrix("facts")[2]
        assert all(np.shares_memory(v, matrix) for _b, v in got)
        index = c.record_index()
        assert index is source.record_index("facts")
        assert sorted(index.ids_at(np.arange(len(index)))) == sorted(expected)
    finally:
        source.close()
