"""A local Chroma persistent directory as a source (local.py): records as memories, writes,
versions, offline vectors."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings
from mnemoscope.storage import Curator, Kind, MemoryQuery, Order, open_store
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import ConflictError, ReadOnlyError
from mnemoscope.storage.native.chroma.local import ChromaSource
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION, record_id_for, with_metadata
from mnemoscope.storage.views.search import search, similar


def _foreign_collection(path: Path) -> None:
    """A collection written by another tool: mem0-style text in metadata, an unknown embedder."""
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection("agent-facts", embedding_function=None)
    emb = HashingEmbedder(64)
    texts = ["User likes green tea", "User lives in Lisbon", "Project deadline is Friday"]
    col.add(
        ids=["a", "b", "c"],
        embeddings=emb.embed(texts),
        metadatas=[
            {"data": texts[0], "user_id": "u1", "created_at": "2026-01-01T10:00:00Z", "category": "social"},
            {"data": texts[1], "user_id": "u1", "created_at": "2026-01-03T10:00:00Z"},
            {"data": texts[2], "user_id": "u1", "created_at": "2026-01-02T10:00:00Z", "channel": "work"},
        ],
    )


def test_foreign_records_map_onto_memories(tmp_path: Path) -> None:
    _foreign_collection(tmp_path)
    with open_store(tmp_path) as store:
        assert store.kinds == [Kind.CHROMA]
        memories = store.page(MemoryQuery(order=Order.CREATED), 10)
        assert [m.content for m in memories] == ["User lives in Lisbon", "Project deadline is Friday", "User likes green tea"]
        assert memories[2].layer.value == "social" and memories[1].channel == "work"
        assert memories[0].id == "vec:agent-facts:b" and memories[0].metadata["user_id"] == "u1"
        assert store.count(MemoryQuery(channels=("work",))) == 1


def test_a_record_whose_metadata_keeps_no_time_was_made_when_chroma_stored_it(tmp_path: Path) -> None:
    """Chroma's own client keeps no time for a record, but chroma.sqlite3 does (embeddings.created_at):
    that is when such a record was made, the same in get(), a page, a search hit and the sort by
    creation, and it stays after a curation step."""
    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection("plain", embedding_function=None)
    col.add(ids=["a", "b", "c"], embeddings=[[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]], documents=["tea", "coffee", "water"])
    col.add(ids=["d"], embeddings=[[0.2, 0.9]], documents=["milk"], metadatas=[{"created_at": "last spring"}])
    days = {"a": "2026-03-02 10:00:00", "b": "2026-03-01 09:00:00", "c": "2026-03-03 11:00:00",
            "d": "2026-02-27 08:00:00"}  # d's own time is no time
    with sqlite3.connect(tmp_path / "chroma.sqlite3") as con:  # as if each had been added that day
        con.executemany("UPDATE embeddings SET created_at = ? WHERE embedding_id = ?", [(d, i) for i, d in days.items()])
    con.close()
    made = {f"vec:plain:{i}": datetime.fromisoformat(d).replace(tzinfo=timezone.utc) for i, d in days.items()}
    with open_store(tmp_path) as store:
        page = store.page(MemoryQuery(order=Order.CREATED, descending=False), 10)
        assert [(m.id, m.created_at) for m in page] == sorted(made.items(), key=lambda item: item[1])
        for memory in page:
            again = store.get(memory.id)
            assert again.created_at == again.updated_at == again.last_accessed == made[memory.id]
        source = store._sources[0].vectors
        [(hit, _distance)] = source.vector_search([1.0, 0.0], None, MemoryQuery(), 1)
        assert hit.created_at == made["vec:plain:a"]
        Curator(store).reinforce("vec:plain:a")
        after = store.page(MemoryQuery(order=Order.CREATED, descending=False), 10)
        assert [m.id for m in after] == [m.id for m in page]
        assert store.get("vec:plain:a").created_at == made["vec:plain:a"]


def test_text_queries_without_an_offline_embedder_fall_back_and_say_so(tmp_path: Path) -> None:
    _foreign_collection(tmp_path)
    with open_store(tmp_path) as store:
        result = search(store, "green tea", mode="vector")
        assert result.mode == "keyword"
        assert any("cannot be embedded" in n for n in result.notices)
        assert result.hits[0].memory.content == "User likes green tea"
        nearest = similar(store, "vec:agent-facts:a", k=2)
        assert 1 <= len(nearest.hits) <= 2 and all(h.memory.id != "vec:agent-facts:a" for h in nearest.hits)


def test_editing_text_kept_in_metadata_marks_the_vector_stale(tmp_path: Path) -> None:
    _foreign_collection(tmp_path)
    with open_store(tmp_path) as store:
        Curator(store).edit("vec:agent-facts:a", content="User likes black coffee")
        record = store._workspace.vectors.read_record("vec:agent-facts:a")
        assert record["metadata"]["data"] == "User likes black coffee"
        assert record["metadata"]["mnemoscope_stale"] is True
    # The owning library still reads it.
    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    got = client.get_collection("agent-facts").get(ids=["a"])
    assert got["metadatas"][0]["data"] == "User likes black coffee"


def test_vector_copies_of_native_memories_are_not_listed_twice(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store._workspace.vectors.count(MemoryQuery()) == 0
        assert store._workspace.vectors.collection("memories").count() == store._workspace.db.count(MemoryQuery(statuses=()))


def test_an_older_chroma_directory_is_read_from_a_copy_and_left_untouched(tmp_path: Path) -> None:

    _foreign_collection(tmp_path)
    con = sqlite3.connect(tmp_path / "chroma.sqlite3")
    # Take the directory back to before sysdb migration 10 (which added collections.schema_str).
    con.execute("ALTER TABLE collections DROP COLUMN schema_str")
    con.execute("DELETE FROM migrations WHERE dir = 'sysdb' AND version = 10")
    con.commit()
    con.close()
    before = (tmp_path / "chroma.sqlite3").read_bytes()
    with open_store(tmp_path) as store:
        caps = store._workspace.vectors.capabilities()
        assert caps.read_only and "older Chroma" in caps.read_only_reason
        assert store.count() == 3
        with pytest.raises(Exception, match="read-only|cannot be changed"):
            Curator(store).edit("vec:agent-facts:a", content="x")
    assert (tmp_path / "chroma.sqlite3").read_bytes() == before


def test_a_directory_made_here_is_written_and_read_back_through_the_source(tmp_path: Path) -> None:
    """ChromaSource itself: detect, create, bulk add, the write primitive (refusing a write over a
    change it did not read), and a read-only open that writes nothing."""
    embedder = HashingEmbedder(16)
    folder = tmp_path / "vectors"
    assert ChromaSource.detect(tmp_path) == 0.0
    source = ChromaSource.create(folder, embedder)
    assert ChromaSource.detect(folder) == 1.0
    texts = ["User likes green tea", "User lives in Lisbon"]
    source.add_records(NATIVE_COLLECTION, ["m1", "m2"], texts, [{"channel": "proj"}, {"channel": "_global"}],
                       embedder.embed(texts))
    assert source.collections() == [NATIVE_COLLECTION] and source.record_count(NATIVE_COLLECTION) == 2
    assert source.embedder_for(NATIVE_COLLECTION).name == embedder.name
    record_id = record_id_for(NATIVE_COLLECTION, "m1")
    snap = source.read_record(record_id)
    assert snap is not None and snap["document"] == texts[0] and len(snap["embedding"]) == 16
    written = source.write_record(record_id, snap, with_metadata(snap, salience=0.9))
    assert written is not None and written["metadata"]["salience"] == 0.9
    with pytest.raises(ConflictError):
        source.write_record(record_id, snap, with_metadata(snap, salience=0.1))
    assert [m.id for m in source.keyword_search("lisbon", MemoryQuery(), 5)] == [record_id_for(NATIVE_COLLECTION, "m2")]
    source.close()
    before = (folder / "chroma.sqlite3").read_bytes()
    reader = ChromaSource.open(folder, read_only=True)
    assert reader.capabilities().read_only and reader.read_only_reason == "opened read-only"
    assert reader.get(record_id).salience == 0.9 and reader.get(record_id).channel == "proj"
    with pytest.raises(ReadOnlyError):
        reader.write_record(record_id, reader.read_record(record_id), None)
    reader.close()
    assert (folder / "chroma.sqlite3").read_bytes() == before
