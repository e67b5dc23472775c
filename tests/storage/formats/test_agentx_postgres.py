"""AgentX's PostgreSQL database (seed 002), built from the seed's DDL on a real server, opened by
its URL: sessions with tool calls, memories, profiles and audit history read; search; the read-only
parts refused. Edits, archiving, undo and refused writes are in test_agentx_curation.py."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.embedders.base import EmbedderMismatchError, HashingEmbedder
from mnemoscope.storage.errors import (
    ReadOnlyError,
    UnreadableStoreError,
    UnsupportedError,
)
from mnemoscope.storage.model import Kind, Layer, Status
from mnemoscope.storage.views.search import retrieval_note, search, similar

ALL = MemoryQuery(statuses=())


@pytest.fixture
def store(agentx: Any) -> Any:
    opened = open_store(agentx.url)
    yield opened
    opened.close()


def needs_vectors(db: Any) -> None:
    if not agentx_db.pgvector_computes(db.server):
        pytest.skip("this server's pgvector dies computing distances on this CPU (see helpers/postgres_server.py)")


def test_opens_as_agentx_with_memories_in_their_layers_channels_and_statuses(store: Any, agentx: Any) -> None:
    info = store.info()
    assert info["path"] == agentx.clean_url and agentx.server.password not in str(info)
    assert info["formats"][0]["format"] == "agentx" and info["formats"][0]["schema_version"] == 2
    assert info["counts"]["channels"] == {"_global": 2, agentx_db.RUST: 3, agentx_db.TRAVEL: 2}
    assert info["counts"]["layers"] == {"semantic": 4, "episodic": 1, "procedural": 1, "working": 1}
    assert info["counts"]["statuses"] == {"active": 6, "archived": 1}
    dark = store.get("agentx:1")
    assert (dark.content, dark.channel, dark.layer, dark.salience, dark.access_count) == (
        "User prefers dark mode in every editor", "_global", Layer.SEMANTIC, 0.9, 7)
    assert dark.metadata["neo4j_node_id"] == "fact-101" and dark.confidence == 0.95
    # AgentX never decays a timeline row's importance_score: shown as stored a year on, not decayed again
    from datetime import timedelta

    from mnemoscope.storage.salience import SalienceModel, salience_kept

    assert not salience_kept(dark).decayed_here and "importance" in SalienceModel().formula_of(dark)
    assert SalienceModel().effective_shown(dark, dark.last_accessed + timedelta(days=365)) == 0.9
    assert store.get("agentx:6").status is Status.ARCHIVED
    assert [m.id for m in store.page(MemoryQuery(channels=(agentx_db.RUST,)), 10)] == ["agentx:4", "agentx:2", "agentx:3"]
    assert [m.id for m in store.page(MemoryQuery(statuses=(Status.ARCHIVED,)), 10)] == ["agentx:6"]
    assert [m.id for m in store.page(MemoryQuery(layers=(Layer.PROCEDURAL,)), 10)] == ["agentx:4"]
    from mnemoscope.storage.query import Order

    assert store.page(MemoryQuery(order=Order.SALIENCE), 1)[0].id == "agentx:1"
    assert store.count(ALL) == 7 and store.count(MemoryQuery(contains="LISBON")) == 2


def test_conversations_are_sessions_with_their_tool_calls_in_turn_order(store: Any) -> None:
    sessions = {s.id: s for s in store.sessions()}
    travel = sessions[agentx_db.TRAVEL_CHAT]
    assert (travel.channel, travel.turn_count, travel.user_id) == (agentx_db.TRAVEL, 4, "bob")
    assert travel.title == "Find flights to Lisbon for May."
    turns = store.turns(agentx_db.TRAVEL_CHAT)
    assert [(t.index, t.kind, t.role) for t in turns] == [
        (0, "message", "user"), (1, "message", "assistant"), (1, "tool", "tool"), (1, "tool", "tool")]
    assert "web_search" in turns[2].content and "(failed: timeout after 10s)" in turns[2].content
    assert "TAP 189 EUR" in turns[3].content
    assert [s.id for s in store.sessions((agentx_db.RUST,))] == [agentx_db.RUST_CHAT]


def test_user_profiles_are_scratchpads_of_their_own(store: Any) -> None:
    alice = {e.key: e.value for e in store.scratch_entries("user_profile:alice")}
    assert alice["preferences"] == '{"theme": "dark", "answers": "concise"}'
    assert alice["expertise_areas"] == '["rust", "postgres"]'
    assert {e.session_id for e in store.scratch_entries()} == {"user_profile:alice", "user_profile:bob"}
    assert store.scratch_entries(agentx_db.RUST_CHAT) == []


def test_the_audit_log_is_each_memorys_history_across_partitions(store: Any) -> None:
    history = store.owner_history("agentx:1")
    assert [(e["operation"], e["partition"]) for e in history] == [
        ("store", "memory_audit_log_2025_03"), ("promote", "memory_audit_log_2025_04")]
    assert history[1]["promoted_from_channel"] == agentx_db.RUST and history[1]["promotion_access_count"] == 6
    assert history[1]["config_snapshot"]["promotion"]["confidence"] == 0.85
    assert [e["operation"] for e in store.owner_history("agentx:4")] == ["store"]  # named by its timeline id


def test_keyword_search_ranks_by_postgresql_full_text(store: Any) -> None:
    found = search(store, "borrow checker", mode="keyword", k=5)
    assert [h.memory.id for h in found.hits] == ["agentx:3", "agentx:4"]  # the shorter summary ranks first
    in_travel = MemoryQuery(channels=(agentx_db.TRAVEL,))
    assert [h.memory.id for h in search(store, "lisbon", mode="keyword", query=in_travel).hits] == [
        "agentx:7", "agentx:5"]
    assert search(store, "lisbon", mode="keyword", query=MemoryQuery(channels=("_global",))).hits == []


def test_vector_search_is_pgvector_cosine_on_the_stored_embeddings(store: Any, agentx: Any) -> None:
    needs_vectors(agentx)
    store.use_embedder(HashingEmbedder(1536))
    found = search(store, "dark mode editor", mode="vector", k=3)
    assert found.mode == "vector" and found.hits[0].memory.id == "agentx:1"
    near = similar(store, "agentx:4", k=2)
    assert near.hits[0].memory.id in {"agentx:3", "agentx:2"}
    with pytest.raises(EmbedderMismatchError):
        store.use_embedder(HashingEmbedder(256))
    source = store._sources[0]
    assert source.vector_search([0.1] * 8, None, MemoryQuery(), 3) == []
    assert any("8 dimensions" in p for p in source.problems())


def test_read_only_parts_are_refused_with_the_reason(store: Any, agentx: Any) -> None:
    with pytest.raises(UnsupportedError, match="layer cannot be stored there"):
        Curator(store).edit("agentx:1", layer="core")
    with pytest.raises(UnsupportedError, match="only reads"):
        Curator(store).set_scratch(agentx_db.RUST_CHAT, "note", "x")
    parts = store.info()["formats"][0]["read_only_parts"]
    assert set(parts) == {"conversation_logs", "tool_invocations", "user_profiles", "memory_audit_log"}
    read_only = open_store(agentx.url, read_only=True)
    try:
        with pytest.raises(ReadOnlyError):
            Curator(read_only).edit("agentx:1", salience=0.5)
    finally:
        read_only.close()


def test_a_database_with_other_tables_is_still_refused(postgres_server: Any, tmp_path: Path,  # noqa: F811
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    name = "not_agentx_" + uuid.uuid4().hex[:6]
    url = postgres_server.create_database(name)
    postgres_server.psql("CREATE TABLE orders (id int)", name)
    try:
        with pytest.raises(UnreadableStoreError, match="no Mnemoscope store"):
            open_store(url)
    finally:
        postgres_server.drop_database(name)


def test_the_audit_log_store_wide_is_the_owners_newest_first_and_a_channel_filter_notes_global(store: Any) -> None:
    audit = store.owner_audit(limit=10)
    assert [e["operation"] for e in audit] == ["store", "promote", "retrieve", "store", "store", "store"]
    assert {e["owner"] for e in audit} == {"AgentX PostgreSQL"}
    assert audit[1]["config_snapshot"]["promotion"] == {"confidence": 0.85, "access_count": 5, "conversations": 2}
    assert audit[1]["partition"] == "memory_audit_log_2025_04" and audit[-1]["partition"] == "memory_audit_log_2025_03"
    assert len(store.owner_audit(limit=2)) == 2
    assert "would also be given _global" in retrieval_note(store, (agentx_db.RUST,))
    assert retrieval_note(store, ()) == "" and retrieval_note(store, (agentx_db.RUST, "_global")) == ""
    assert store.kinds == [Kind.POSTGRESQL] and store.get("agentx:1").source.kind is Kind.POSTGRESQL
