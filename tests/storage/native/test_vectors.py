"""Chroma persistent directories: records as memories, writes, versions, offline vectors."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings

from mnemoscope.storage import Curator, Kind, MemoryQuery, Order, Status, open_store
from mnemoscope.storage.embedding import HashingEmbedder
from mnemoscope.storage.views.search import search, similar, vector_list


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


def test_text_queries_without_an_offline_embedder_fall_back_and_say_so(tmp_path: Path) -> None:
    _foreign_collection(tmp_path)
    with open_store(tmp_path) as store:
        result = search(store, "green tea", mode="vector")
        assert result.mode == "keyword"
        assert any("cannot be embedded" in n for n in result.notices)
        assert result.hits[0].memory.content == "User likes green tea"
        nearest = similar(store, "vec:agent-facts:a", k=2)
        assert len(nearest.hits) == 2 and all(h.memory.id != "vec:agent-facts:a" for h in nearest.hits)


def test_editing_text_kept_in_metadata_marks_the_vector_stale(tmp_path: Path) -> None:
    _foreign_collection(tmp_path)
    with open_store(tmp_path) as store:
        Curator(store).edit("vec:agent-facts:a", content="User likes black coffee")
        record = store.workspace.vectors.read_record("vec:agent-facts:a")
        assert record["metadata"]["data"] == "User likes black coffee"
        assert record["metadata"]["mnemoscope_stale"] is True
    # The owning library still reads it.
    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    got = client.get_collection("agent-facts").get(ids=["a"])
    assert got["metadatas"][0]["data"] == "User likes black coffee"


def test_vector_copies_of_native_memories_are_not_listed_twice(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store.workspace.vectors.count(MemoryQuery()) == 0
        assert store.workspace.vectors.collection("memories").count() == store.workspace.db.count(MemoryQuery(statuses=()))


def test_an_older_chroma_directory_is_read_from_a_copy_and_left_untouched(tmp_path: Path) -> None:
    import sqlite3

    _foreign_collection(tmp_path)
    con = sqlite3.connect(tmp_path / "chroma.sqlite3")
    # Take the directory back to before sysdb migration 10 (which added collections.schema_str).
    con.execute("ALTER TABLE collections DROP COLUMN schema_str")
    con.execute("DELETE FROM migrations WHERE dir = 'sysdb' AND version = 10")
    con.commit()
    con.close()
    before = (tmp_path / "chroma.sqlite3").read_bytes()
    with open_store(tmp_path) as store:
        caps = store.workspace.vectors.capabilities()
        assert caps.read_only and "older Chroma" in caps.read_only_reason
        assert store.count() == 3
        with pytest.raises(Exception, match="read-only|cannot be changed"):
            Curator(store).edit("vec:agent-facts:a", content="x")
    assert (tmp_path / "chroma.sqlite3").read_bytes() == before


def test_a_chroma_database_left_mid_write_by_a_killed_process_still_opens(tmp_path: Path) -> None:
    """A writer killed inside a transaction leaves a hot journal: a read-only connection cannot
    read past it, so the version check rolls it back first (as Chroma's client would)."""
    import sqlite3
    import subprocess
    import sys

    from mnemoscope.storage.native.chroma.client import migration_versions
    from mnemoscope.storage.native.chroma.files import ChromaFiles

    db = tmp_path / "chroma.sqlite3"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE migrations(dir TEXT, version INT); INSERT INTO migrations VALUES ('sysdb', 3);")
    con.close()
    killed = (
        "import os, sqlite3\n"
        f"con = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "con.execute('PRAGMA cache_size=1'); con.execute('BEGIN IMMEDIATE')\n"
        "for i in range(3000): con.execute(\"INSERT INTO migrations VALUES ('x' || ?, 1)\", (i,))\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", killed], check=False, timeout=60)
    assert (tmp_path / "chroma.sqlite3-journal").exists()
    with pytest.raises(sqlite3.OperationalError):
        migration_versions(ChromaFiles(tmp_path, may_recover=False))  # read-only: reported, not touched
    assert (tmp_path / "chroma.sqlite3-journal").exists()
    assert migration_versions(ChromaFiles(tmp_path)) == {"sysdb": 3}


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
