"""Curation of AgentX's memory_timeline (storage/formats/agentx_curation.py) on a real PostgreSQL
holding the seed's schema and rows (helpers/agentx_db.py): what each operation plans from the row's
snapshot, what a write refuses before anything is written, the audit rows it appends as AgentX
writes them, and how the audit log reads back as a memory's history."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import open_store
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import (
    ConflictError,
    LockedError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    UnsupportedError,
)
from mnemoscope.storage.formats import agentx_curation as curation
from mnemoscope.storage.model import Status
from mnemoscope.storage.source import DELETE, EDIT, PROMOTE, PURGE, REINFORCE, RESTORE, Change, PlanContext

NOW = "2026-11-01T12:00:00+00:00"
CONTEXT = PlanContext(now=NOW, embed=lambda text: None)


@pytest.fixture
def store(agentx: Any) -> Any:
    opened = open_store(agentx.url)
    yield opened
    opened.close()


@pytest.fixture
def source(store: Any) -> Any:
    return store._sources[0]


def test_a_snapshot_is_the_row_as_to_jsonb_gives_it(source: Any, agentx: Any) -> None:
    snap = curation.read_snapshot(source, "agentx:2")
    assert snap["id"] == 2 and snap["summary"] == agentx.timeline(2)["summary"]
    assert snap["embedding"] == agentx.timeline(2)["embedding"]  # pgvector's text, byte for byte
    assert curation.parse_vector(snap["embedding"]) == pytest.approx(
        curation.parse_vector(agentx_db.embedding(snap["summary"])), abs=1e-6)
    assert (snap["archived"], snap["channel"], snap["memory_type"]) == (False, agentx_db.RUST, "fact")
    assert curation.read_snapshot(source, "agentx:99") is None


def test_an_edit_plans_the_new_summary_salience_and_channel_and_clears_a_stale_embedding(store: Any, source: Any) -> None:
    memory = store.get("agentx:2")
    plan = curation.plan(source, EDIT, memory, {"content": "cargo nextest, in CI and locally", "salience": 0.8,
                                                "channel": " _global "}, CONTEXT)
    [change] = plan.changes
    changed = {k for k in change.after if change.after[k] != change.before[k]}
    assert changed == {"summary", "importance_score", "channel", "embedding"}
    assert (change.after["summary"], change.after["importance_score"], change.after["channel"]) == (
        "cargo nextest, in CI and locally", 0.8, "_global")
    assert change.after["embedding"] is None and "cleared (NULL) for AgentX to embed" in plan.notes[0]
    salience_only = curation.plan(source, EDIT, memory, {"salience": 0.3}, CONTEXT)
    assert salience_only.changes[0].after["embedding"] == salience_only.changes[0].before["embedding"]
    assert salience_only.notes == []
    assert curation.plan(source, EDIT, memory, {"content": memory.content}, CONTEXT).changes == []


@pytest.mark.parametrize("channel", ["", "   ", "x" * 101])
def test_a_channel_agentx_cannot_hold_is_refused(store: Any, source: Any, channel: str) -> None:
    with pytest.raises(UnsupportedError, match="1 to 100 characters"):
        curation.plan(source, EDIT, store.get("agentx:2"), {"channel": channel}, CONTEXT)


def test_delete_archives_restore_unarchives_and_reinforce_counts_an_access(store: Any, source: Any) -> None:
    lisbon = store.get("agentx:5")
    archive = curation.plan(source, DELETE, lisbon, {}, CONTEXT)
    assert archive.changes[0].after == {**archive.changes[0].before, "archived": True}
    assert "archives memories rather than deleting them" in archive.notes[0]
    superseded = store.get("agentx:6")
    assert superseded.status is Status.ARCHIVED
    with pytest.raises(NothingToDoError, match="archived already"):
        curation.plan(source, DELETE, superseded, {}, CONTEXT)
    restore = curation.plan(source, RESTORE, superseded, {}, CONTEXT)
    assert restore.changes[0].after["archived"] is False and restore.new_id == "agentx:6"
    reinforce = curation.plan(source, REINFORCE, lisbon, {}, CONTEXT)
    assert reinforce.changes[0].after["access_count"] == reinforce.changes[0].before["access_count"] + 1 == 3
    assert reinforce.changes[0].after["last_accessed"] == NOW


def test_purge_promotion_elsewhere_than_global_and_a_missing_row_are_refused(store: Any, source: Any, agentx: Any) -> None:
    memory = store.get("agentx:3")
    with pytest.raises(UnsupportedError, match="never removes a memory_timeline row"):
        curation.plan(source, PURGE, memory, {}, CONTEXT)
    with pytest.raises(UnsupportedError, match="to _global only"):
        curation.plan(source, PROMOTE, memory, {"to": "elsewhere"}, CONTEXT)
    agentx.sql("DELETE FROM memory_timeline WHERE id = 3")
    with pytest.raises(NotFoundError, match="No memory agentx:3"):
        curation.plan(source, EDIT, memory, {"salience": 0.1}, CONTEXT)


def test_a_write_agentx_would_not_make_is_refused_before_anything_is_written(source: Any, agentx: Any) -> None:
    snap = curation.read_snapshot(source, "agentx:1")
    with pytest.raises(ReadOnlyError, match="memory_type, neo4j_node_id of an AgentX memory cannot be changed"):
        curation.prepare_write(source, [Change("agentx:1", snap, {**snap, "memory_type": "goal",
                                                                    "neo4j_node_id": "goal-9"})])
    with pytest.raises(ReadOnlyError, match="neither adds nor removes"):
        curation.prepare_write(source, [Change("agentx:1", snap, None)])
    with pytest.raises(ReadOnlyError, match="neither adds nor removes"):
        curation.write_record(source, "agentx:1", None, snap)
    assert curation.read_snapshot(source, "agentx:1") == snap
    curation.prepare_write(source, [Change("agentx:1", snap, {**snap, "importance_score": 0.5})])  # allowed


def test_a_write_updates_the_row_and_appends_the_audit_row_agentx_writes(source: Any, agentx: Any) -> None:
    before = curation.read_snapshot(source, "agentx:4")
    audits = len(agentx.audit_rows())
    after = curation.write_record(source, "agentx:4", before, {**before, "access_count": 5, "last_accessed": NOW})
    assert after["access_count"] == 5 and after["last_accessed"].startswith("2026-11-01T12:00:00")
    rows = agentx.audit_rows()
    assert len(rows) == audits + 1
    audit = rows[-1]
    assert (audit["operation"], audit["memory_type"], audit["source_channel"]) == ("update", "procedural", agentx_db.RUST)
    assert audit["metadata"]["action"] == "reinforce" and audit["metadata"]["affected_ids"] == [4]
    assert audit["metadata"]["neo4j_node_id"] == "strategy-301" and audit["metadata"]["actor"] == "mnemoscope"
    assert audit["metadata"]["changes"]["access_count"] == {"from": 4, "to": 5}
    stale = curation.write_record(source, "agentx:4", after, {**after, "embedding": None})
    assert rows[-1] != agentx.audit_rows()[-1] and agentx.audit_rows()[-1]["metadata"]["changes"]["embedding"] == {
        "from": "stored", "to": None}  # the audit says a vector was there, not the vector
    with pytest.raises(ConflictError, match="agentx:4 changed since it was read"):
        curation.write_record(source, "agentx:4", before, {**before, "importance_score": 0.1})
    assert curation.read_snapshot(source, "agentx:4") == stale
    unchanged = len(agentx.audit_rows())
    assert curation.write_record(source, "agentx:4", stale, dict(stale)) == stale  # nothing to change: no audit row
    assert len(agentx.audit_rows()) == unchanged


def test_the_audit_partition_for_now_is_found_or_its_absence_explained(source: Any, postgres_server: Any) -> None:  # noqa: F811
    assert curation.audit_partition_missing(source) == ""
    name = "agentx_nopart_" + uuid.uuid4().hex[:6]
    db = agentx_db.build(postgres_server, name, current_partition=False)
    store = open_store(db.url)
    try:
        missing = curation.audit_partition_missing(store._sources[0])
        assert missing.startswith("memory_audit_log has no partition for today (") and "manage_audit_partitions" in missing
        postgres_server.psql("CREATE TABLE memory_audit_log_rest PARTITION OF memory_audit_log DEFAULT", name)
        assert curation.audit_partition_missing(store._sources[0]) == ""  # a default partition takes every row
    finally:
        store.close()
        postgres_server.drop_database(name)


def test_an_audit_row_reads_as_a_history_entry() -> None:
    from datetime import datetime, timezone
    from decimal import Decimal

    edit = curation.history_entry({
        "operation": "update", "timestamp": datetime(2026, 11, 1, 12, tzinfo=timezone.utc), "partition": "p_2026_11",
        "metadata": {"changes": {"summary": {"from": "Book flights to Porto", "to": "Book flights to Lisbon"}}},
        "promotion_confidence": Decimal("0.95"),
    })
    assert (edit["event"], edit["created_at"]) == ("update", "2026-11-01T12:00:00+00:00")
    assert (edit["old_memory"], edit["new_memory"]) == ("Book flights to Porto", "Book flights to Lisbon")
    assert edit["promotion_confidence"] == "0.95"  # JSON-safe
    promote = curation.history_entry({
        "operation": "promote", "timestamp": None, "partition": "memory_audit_log_2025_04",
        "promoted_from_channel": "rust", "source_channel": "_global", "promotion_confidence": 0.95,
        "promotion_access_count": 6, "promotion_conversation_count": 3,
        "metadata": {"reason": "seen in 3 conversations"},
    })
    assert promote["old_memory"] is None
    assert promote["new_memory"] == ("[memory_audit_log_2025_04] promoted from rust to _global (confidence 0.95, "
                                     "6 accesses, 3 conversations); reason: seen in 3 conversations")
    retrieve = curation.history_entry({"operation": "retrieve", "partition": "p", "source_channel": "rust",
                                       "query_text": "dark mode", "metadata": "not an object"})
    assert retrieve["new_memory"] == "[p] in rust; query 'dark mode'"


def test_vectors_go_to_pgvectors_text_and_back() -> None:
    vector = [0.25, -1.0, 3.0e-5, 0.0]
    assert curation.vector_text(vector) == "[0.25,-1.0,3e-05,0.0]"
    assert curation.parse_vector(curation.vector_text(vector)) == vector
    assert curation.parse_vector("[1,2.5,-3]") == [1.0, 2.5, -3.0]


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


def test_no_audit_partition_for_now_refuses_before_writing(postgres_server: Any, tmp_path: Path,  # noqa: F811
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if not postgres_server.has_pgvector:
        pytest.skip("no pgvector")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    name = "agentx_nopart_" + uuid.uuid4().hex[:6]
    db = agentx_db.build(postgres_server, name, current_partition=False)
    store = open_store(db.url)
    try:
        assert any("no partition for today" in p for p in store._sources[0].problems())
        with pytest.raises(StoreError, match="manage_audit_partitions"):
            Curator(store).edit("agentx:1", salience=0.5)
        assert db.timeline(1)["importance_score"] == 0.9 and store._journal.count() == 0
    finally:
        store.close()
        postgres_server.drop_database(name)
