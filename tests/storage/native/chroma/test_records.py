"""What a Chroma record is to Mnemoscope (records.py), the same for a local directory and a
server: its id, its metadata read as a Memory (whatever tool wrote it), its revision, and the
plans that carry out each curation operation on its snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.chroma_dirs import chroma_client
from mnemoscope.storage.errors import NotFoundError, NothingToDoError, UnsupportedError
from mnemoscope.storage.model import GLOBAL_CHANNEL, Kind, Layer, Status
from mnemoscope.storage.native.chroma.files import ChromaFiles
from mnemoscope.storage.native.chroma.records import (
    MIRROR_KEY,
    STALE_KEY,
    edited_record,
    memory_metadata,
    number_or,
    record_id_for,
    record_memory,
    record_plan,
    record_revision,
    record_text,
    split_record_id,
    with_metadata,
)
from mnemoscope.storage.source import DELETE, EDIT, PROMOTE, PURGE, REEMBED, REINFORCE, RESTORE, PlanContext

NOW = "2026-11-02T09:00:00+00:00"


def _context(vector: list[float] | None = None) -> PlanContext:
    return PlanContext(now=NOW, embed=lambda _text: vector)


def _snap(document: str | None = "User likes tea", **meta: Any) -> dict[str, Any]:
    return {"collection": "facts", "id": "a", "document": document, "metadata": meta, "embedding": [1.0, 0.0]}


def test_a_record_id_names_its_collection_and_record() -> None:
    assert record_id_for("facts", "a:b") == "vec:facts:a:b"
    assert split_record_id("vec:facts:a:b") == ("facts", "a:b")
    for wrong in ("facts:a", "vec:facts", "mem:1"):
        with pytest.raises(NotFoundError, match="is not a vector record id"):
            split_record_id(wrong)


def test_number_or_falls_back_on_what_is_no_number() -> None:
    assert [number_or(v, 0.5) for v in (0.25, "0.75", 1, None, "high", [1])] == [0.25, 0.75, 1.0, 0.5, 0.5, 0.5]


def test_a_record_chromadb_wrote_reads_as_a_memory(tmp_path: Path) -> None:
    """Metadata as another tool writes it (mem0-style text under "data", tags as text, its own
    category and keys) read off a real directory."""
    col = chroma_client(tmp_path).get_or_create_collection("facts", embedding_function=None)
    col.add(
        ids=["a", "b"],
        embeddings=[[1.0, 0.0], [0.0, 1.0]],
        documents=[None, "Ben writes Go"],  # type: ignore[list-item]
        metadatas=[
            {"data": "User likes tea", "tags": '["drinks", "likes"]', "category": "social", "user_id": "u1",
             "timestamp": "2026-01-01T10:00:00Z", "access_count": 3, "salience": "high"},
            {"tags": "go, work", "channel": "work", "status": "archived", "created_at": "2026-01-02T10:00:00Z",
             "updated_at": "2026-01-03T10:00:00Z", "promoted_from": "vec:facts:z", "confidence": 0.5},
        ],
    )
    files = ChromaFiles(tmp_path)
    [info] = files.collections()
    records = files.records(info, ["a", "b"])
    a = record_memory("store", "facts", "a", *records["a"])
    b = record_memory("store", "facts", "b", *records["b"], revision="r1")
    assert (a.id, a.source.kind, a.source.path, a.content) == ("vec:facts:a", Kind.CHROMA, "store", "User likes tea")
    assert a.layer is Layer.SOCIAL and a.channel == GLOBAL_CHANNEL and a.status is Status.ACTIVE
    assert a.tags == ("drinks", "likes") and a.access_count == 3 and a.salience is None and a.confidence is None  # "high": no score
    assert a.metadata == {"user_id": "u1"} and a.created_at.isoformat().startswith("2026-01-01T10:00")
    assert a.updated_at == a.created_at == a.last_accessed
    assert (b.content, b.channel, b.status, b.tags, b.confidence) == ("Ben writes Go", "work", Status.ARCHIVED,
                                                                       ("go", "work"), 0.5)
    assert b.provenance.promoted_from == "vec:facts:z" and b.revision == "r1" and b.layer is Layer.SEMANTIC
    assert b.updated_at > b.created_at


def test_an_edit_writes_the_text_where_the_record_keeps_it() -> None:
    in_document = edited_record(_snap(), {"content": "User likes coffee", "tags": ["a"]}, _context([0.0, 1.0]))
    assert in_document["document"] == "User likes coffee" and in_document["embedding"] == [0.0, 1.0]
    assert in_document["metadata"] == {"tags": '["a"]', "updated_at": NOW}
    in_metadata = edited_record(_snap(None, data="User likes tea"), {"content": "User likes coffee"}, _context())
    assert in_metadata["document"] is None and in_metadata["metadata"]["data"] == "User likes coffee"
    assert in_metadata["metadata"][STALE_KEY] is True and in_metadata["embedding"] == [1.0, 0.0]  # no embedder: stale
    assert record_text(in_metadata) == "User likes coffee" and record_text(_snap()) == "User likes tea"
    assert edited_record(_snap(layer="social"), {"layer": "social"}, _context()) == _snap(layer="social")


def test_each_operation_plans_its_changes() -> None:
    snap = _snap(channel="proj", access_count=2)
    memory = record_memory("store", "facts", "a", snap["document"], snap["metadata"])
    assert record_plan(snap, EDIT, memory, {"salience": 0.5}, _context()).changes[0].after["metadata"]["salience"] == 0.5
    assert record_plan(snap, EDIT, memory, {}, _context()).changes == []
    [purge] = record_plan(snap, PURGE, memory, {}, _context()).changes
    assert (purge.record, purge.before, purge.after) == ("vec:facts:a", snap, None)
    [deleted] = record_plan(snap, DELETE, memory, {}, _context()).changes
    assert deleted.after["metadata"]["status"] == "deleted" and snap["metadata"].get("status") is None
    [restored] = record_plan(deleted.after, RESTORE, memory, {}, _context()).changes
    assert restored.after["metadata"]["status"] == "active"
    [reinforced] = record_plan(snap, REINFORCE, memory, {}, _context()).changes
    assert reinforced.after["metadata"]["access_count"] == 3 and reinforced.after["metadata"]["last_accessed"] == NOW
    reembed = record_plan(_snap(**{STALE_KEY: True}), REEMBED, memory, {}, _context())
    assert reembed.embed_text == "User likes tea" and STALE_KEY not in reembed.changes[0].after["metadata"]
    promoted = record_plan(snap, PROMOTE, memory, {"to": GLOBAL_CHANNEL}, _context())
    copy, archived = promoted.changes
    assert promoted.new_id == copy.record and copy.before is None and copy.record.startswith("vec:facts:p-")
    assert copy.after["id"] == split_record_id(copy.record)[1]
    assert copy.after["metadata"]["channel"] == GLOBAL_CHANNEL and copy.after["metadata"]["promoted_from"] == memory.id
    assert archived.after["metadata"]["status"] == "archived"
    with pytest.raises(NothingToDoError):
        record_plan(snap, PROMOTE, memory, {"to": "proj"}, _context())
    with pytest.raises(UnsupportedError):
        record_plan(snap, "redact", memory, {}, _context())


def test_a_native_memorys_vector_copy_carries_its_fields_as_scalars() -> None:
    row = {"layer": "episodic", "channel": "proj", "status": "active", "salience": 1, "confidence": "0.9",
           "access_count": "4", "conversations": 2, "created_at": NOW, "updated_at": NOW, "last_accessed": NOW,
           "tags": json.dumps(["a"]), "promoted_from": None}
    meta = memory_metadata(row)
    assert meta[MIRROR_KEY] is True and "promoted_from" not in meta
    assert (meta["salience"], meta["confidence"], meta["access_count"]) == (1.0, 0.9, 4)
    assert memory_metadata({**row, "promoted_from": "m-1"})["promoted_from"] == "m-1"
    snap = _snap()
    assert with_metadata(snap, status="deleted")["metadata"] == {"status": "deleted"} and snap["metadata"] == {}


def test_the_revision_follows_the_text_the_metadata_and_the_vectors_bytes() -> None:
    snap = _snap(channel="proj")
    revision = record_revision(snap, [1.0, 0.0])
    assert len(revision) == 12 and revision == record_revision(_snap(channel="proj"), [1.0, 0.0])
    assert revision != record_revision(snap, [1.0, 1e-7])
    assert revision != record_revision(_snap(channel="other"), [1.0, 0.0])
    assert revision != record_revision(_snap("User likes coffee", channel="proj"), [1.0, 0.0])
    assert record_revision(snap, None) != revision
