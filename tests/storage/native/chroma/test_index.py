"""The Chroma metadata index (index.py): pages, counts and searches read columns of every record
and build memories only for the rows they return; they answer what building every memory would.
The columns themselves: folded from metadata, patched by one record, saved and loaded."""

from __future__ import annotations

import itertools
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from mnemoscope.storage import Layer, MemoryQuery, Order, Status, open_store
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.native.chroma.index import NO_TIME, RecordIndex, RecordIndexBuilder, from_micros, micros
from mnemoscope.storage.native.chroma.local import ChromaSource
from mnemoscope.storage.native.chroma.records import MIRROR_KEY, STALE_KEY, record_id_for
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
        source = store._sources[0].vectors
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
        source = store._sources[0].vectors
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
        hits = store._sources[0].vectors.keyword_search("tea lisbon", MemoryQuery(), 5)
        assert [m.id for m in hits] == ["vec:agent:b", "vec:agent:a"]


# -- the columns themselves ----------------------------------------------------------------------


def test_the_builder_folds_each_records_metadata_into_columns() -> None:
    builder = RecordIndexBuilder("t1")
    builder.add("b", {"status": "archived", "layer": "episodic", "channel": "proj", "salience": "0.7",
                      "created_at": "2026-01-02T00:00:00Z", MIRROR_KEY: True}, None)
    builder.add("a", {STALE_KEY: True}, None)  # nothing recorded: active, semantic, _global, made now
    index = builder.index()
    assert (len(index), index.token, index.ids_at(slice(None))) == (2, "t1", ["b", "a"])
    for column, want in (("channel", ["proj", "_global"]), ("status", ["archived", "active"]),
                         ("layer", ["episodic", "semantic"])):
        codes, labels = index.labelled(column)
        assert [labels[int(c)] for c in codes] == want
    assert index.mirror.tolist() == [True, False] and index.stale.tolist() == [False, True]
    # A record with no salience orders below every scored one, as query.sort_key orders its Memory.
    assert index.salience.tolist() == [0.7, float("-inf")] and index.created[1] == NO_TIME
    assert from_micros(int(index.created[0])) == datetime(2026, 1, 2, tzinfo=timezone.utc)
    assert index.times("created")[1] >= micros(datetime(2026, 1, 2, tzinfo=timezone.utc))  # read as now
    assert index.order(Order.CREATED).tolist() == [0, 1] and index.order(Order.SALIENCE).tolist() == [1, 0]
    assert index.position() == {"b": 0, "a": 1} and index.id_rank.tolist() == [1, 0]
    with pytest.raises(UnsupportedError):
        index.labelled("tags")


def test_one_record_written_makes_a_new_index_and_leaves_the_old_one() -> None:
    builder = RecordIndexBuilder("t1")
    for record_id in ("b", "a"):
        builder.add(record_id, {"channel": "proj"}, None)
    index = builder.index()
    added = index.with_record("t2", "c", {"channel": "new", "status": "deleted"})
    assert added.token == "t2" and added.ids_at(slice(None)) == ["b", "a", "c"] and len(index) == 2
    codes, labels = added.labelled("channel")
    assert [labels[int(c)] for c in codes] == ["proj", "proj", "new"] and added.id_rank.tolist() == [1, 0, 2]
    changed = added.with_record("t3", "b", {"channel": "new"})
    assert [labels[int(c)] for c in changed.labelled("channel")[0]] == ["new", "proj", "new"]
    gone = changed.with_record("t4", "a", None)
    assert gone.ids_at(slice(None)) == ["b", "c"] and gone.id_rank.tolist() == [0, 1]
    assert gone.with_record("t5", "nobody", None).ids_at(slice(None)) == ["b", "c"]


def test_an_index_saved_is_loaded_only_at_its_token(tmp_path: Path) -> None:
    builder = RecordIndexBuilder("t1")
    builder.add("a", {"channel": "proj", "salience": 0.25}, None)
    index = builder.index()
    index.save(tmp_path / "kept" / "index.npz")
    loaded = RecordIndex.load(tmp_path / "kept" / "index.npz", "t1")
    assert loaded is not None and loaded.ids_at(slice(None)) == ["a"] and loaded.channels == ["proj"]
    assert loaded.salience.tolist() == [0.25]
    assert RecordIndex.load(tmp_path / "kept" / "index.npz", "t2") is None
    assert RecordIndex.load(tmp_path / "missing.npz", "t1") is None
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert RecordIndex.load(tmp_path / "bad.npz", "t1") is None


def test_the_record_index_holds_every_record_even_the_mirrors_the_source_hides(demo_path: Path) -> None:
    """record_index: the columns count and page read, mirror records of memory.db memories
    included (the workspace hides them from its listings, the embedding map names their memories)."""
    source = ChromaSource.open(demo_path / "vectors", read_only=True)
    try:
        name = source.collections()[0]
        index = source.record_index(name)
        assert isinstance(index, RecordIndex) and len(index) == source.record_count(name)
        assert source.count(MemoryQuery(statuses=())) == len(index)
        mirrors = int(index.mirror.sum())
        assert mirrors > 0
        source.hide_mirrors()
        assert source.record_index(name) is index  # kept until the directory changes
        assert source.count(MemoryQuery(statuses=())) == len(index) - mirrors
        assert index.channels and len(index.status) == len(index.layer) == len(index)
    finally:
        source.close()
