"""AgentX's PostgreSQL database (seed 002), built from the seed's DDL on a real server, opened by
its URL: sessions with tool calls, memories, profiles and audit history read; edits, archiving
and undo written as AgentX writes (checked with plain SQL); other writers' changes refused."""

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
    ConflictError,
    LockedError,
    ReadOnlyError,
    StoreError,
    UnreadableStoreError,
    UnsupportedError,
)
from mnemoscope.storage.model import Layer, Status
from mnemoscope.storage.views.search import search, similar

ALL = MemoryQuery(statuses=())


@pytest.fixture
def agentx(postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:  # noqa: F811
    if not postgres_server.has_pgvector:
        pytest.skip("the test PostgreSQL has no pgvector, which the seed's schema needs")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    name = "agentx_" + uuid.uuid4().hex[:10]
    db = agentx_db.build(postgres_server, name)
    yield db
    postgres_server.drop_database(name)


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
    source = store.sources[0]
    assert source.vector_search([0.1] * 8, None, MemoryQuery(), 3) == []
    assert any("8 dimensions" in p for p in source.problems())


def test_edit_writes_the_row_and_an_audit_row_and_undo_puts_it_all_back(store: Any, agentx: Any) -> None:
    before = agentx.timeline(2)
    outcome = Curator(store).edit("agentx:2", content="The rust project runs cargo nextest in CI and locally",
                                  salience=0.8, channel="_global")
    assert any("embedding" in note for note in outcome.notes)
    after = agentx.timeline(2)
    assert after["summary"] == "The rust project runs cargo nextest in CI and locally"
    assert (after["importance_score"], after["channel"], after["embedding"]) == (0.8, "_global", None)
    audit = agentx.audit_rows()[-1]
    assert (audit["operation"], audit["memory_type"], audit["source_channel"]) == ("update", "semantic", "_global")
    assert audit["target_channels"] == [agentx_db.RUST, "_global"]
    assert audit["metadata"]["affected_ids"] == [2] and audit["metadata"]["actor"] == "mnemoscope"
    assert audit["partition"].startswith("memory_audit_log_") and audit["partition"] not in (
        "memory_audit_log_2025_03", "memory_audit_log_2025_04")
    assert store.owner_history("agentx:2")[-1]["new_memory"] == after["summary"]
    Curator(store).undo()
    assert agentx.timeline(2) == before  # the embedding too, byte for byte as pgvector prints it
    assert agentx.audit_rows()[-1]["metadata"]["changes"]["summary"]["to"] == before["summary"]


def test_delete_archives_restore_unarchives_and_purge_is_refused(store: Any, agentx: Any) -> None:
    Curator(store).delete("agentx:5")
    assert agentx.timeline(5)["archived"] is True and store.get("agentx:5").status is Status.ARCHIVED
    assert agentx.audit_rows()[-1]["metadata"]["action"] == "archive"
    Curator(store).restore("agentx:5")
    assert agentx.timeline(5)["archived"] is False
    with pytest.raises(UnsupportedError, match="never removes"):
        Curator(store).delete("agentx:5", purge=True)
    assert agentx.sql("SELECT count(*) FROM memory_timeline")[0][0] == 7


def test_another_connections_change_is_refused_as_a_conflict(store: Any, agentx: Any) -> None:
    read = store.get("agentx:7")
    agentx.sql("UPDATE memory_timeline SET access_count = access_count + 1 WHERE id = 7")  # AgentX retrieved it
    with pytest.raises(ConflictError):
        Curator(store).edit("agentx:7", salience=0.1, expected_revision=read.revision)
    Curator(store).edit("agentx:7", content="Book flights to Lisbon before April 25")
    agentx.sql("UPDATE memory_timeline SET summary = 'Book flights to Porto' WHERE id = 7")
    with pytest.raises(StoreError, match="changed since it was read"):
        Curator(store).undo()
    assert agentx.timeline(7)["summary"] == "Book flights to Porto"  # the other writer's value stays


def test_a_row_another_session_is_writing_is_refused_as_busy(store: Any, agentx: Any) -> None:
    with agentx.server.connect(agentx.name, autocommit=False) as other:
        other.execute("UPDATE memory_timeline SET access_count = 9 WHERE id = 1")
        with pytest.raises(LockedError, match="busy"):
            Curator(store).edit("agentx:1", salience=0.5)
        other.rollback()
    assert agentx.timeline(1)["importance_score"] == 0.9


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


def test_no_audit_partition_for_now_refuses_before_writing(postgres_server: Any, tmp_path: Path,  # noqa: F811
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if not postgres_server.has_pgvector:
        pytest.skip("no pgvector")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    name = "agentx_nopart_" + uuid.uuid4().hex[:6]
    db = agentx_db.build(postgres_server, name, current_partition=False)
    store = open_store(db.url)
    try:
        assert any("no partition for today" in p for p in store.sources[0].problems())
        with pytest.raises(StoreError, match="manage_audit_partitions"):
            Curator(store).edit("agentx:1", salience=0.5)
        assert db.timeline(1)["importance_score"] == 0.9 and store.journal.count() == 0
    finally:
        store.close()
        postgres_server.drop_database(name)


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
