"""Promotion on AgentX's PostgreSQL (agentx_promotion): the _global copy AgentX's promotion job
would make, its 'promote' audit row with the thresholds in force, and undo/redo, checked with plain
SQL on a real PostgreSQL holding the seed's schema and rows."""

from __future__ import annotations

from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import open_store
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import BelowThresholdError, ConflictError, NothingToDoError, ReadOnlyError
from mnemoscope.storage.formats import agentx_curation as curation


@pytest.fixture
def store(agentx: Any) -> Any:
    opened = open_store(agentx.url)
    yield opened
    opened.close()


def _promote_rows(agentx: Any) -> list[tuple[Any, ...]]:
    return agentx.sql("SELECT operation, source_channel, target_channels, promoted_from_channel, promotion_confidence, "
                      "promotion_access_count, promotion_conversation_count, config_snapshot, metadata "
                      "FROM memory_audit_log WHERE metadata->>'actor' = 'mnemoscope' ORDER BY timestamp, id")


def test_promote_copies_the_fact_into_global_and_logs_it_as_agentx_does(store: Any, agentx: Any) -> None:
    agentx_db.recall_in_new_conversation(agentx, "fact-102", retrievals=2)
    outcome = Curator(store).promote("agentx:2", reason="seen in two rust chats")
    [new_id] = outcome.ids
    assert outcome.details["promoted_to"] == new_id
    key = int(new_id.split(":")[1])
    copy = agentx.sql("SELECT memory_type, neo4j_node_id, summary, importance_score, access_count, channel, archived, "
                      f"embedding::text, metadata FROM memory_timeline WHERE id = {key}")[0]
    original = agentx.timeline(2)
    assert copy[:8] == ("fact", None, original["summary"], original["importance_score"], 0, "_global", False,
                        original["embedding"])
    assert copy[8]["promoted_from"] == "agentx:2" and copy[8]["promoted_from_channel"] == agentx_db.RUST
    assert agentx.timeline(2)["channel"] == agentx_db.RUST  # the original stays
    promoted = store.get(new_id)
    assert promoted.channel == "_global" and promoted.provenance.promoted_from == "agentx:2"
    [row] = _promote_rows(agentx)
    assert row[:7] == ("promote", agentx_db.RUST, ["_global"], agentx_db.RUST, 0.95, 5, 2)
    assert row[7]["promotion"] == {"confidence": 0.85, "access_count": 5, "conversations": 2}  # config snapshot
    assert row[8]["promoted_ids"] == [key] and row[8]["fact_id"] == "fact-102"
    assert row[8]["reason"] == "seen in two rust chats"
    assert store.promotion_candidates() == []  # promoted: no longer a candidate
    with pytest.raises(NothingToDoError, match="already"):
        Curator(store).promote("agentx:2")

    Curator(store).undo()
    assert agentx.sql(f"SELECT count(*) FROM memory_timeline WHERE id = {key}") == [(0,)]
    assert [r[0] for r in _promote_rows(agentx)] == ["promote", "delete"]
    assert [m.id for m in store.promotion_candidates()] == ["agentx:2"]
    Curator(store).redo()
    assert agentx.sql(f"SELECT channel FROM memory_timeline WHERE id = {key}") == [("_global",)]
    assert [r[0] for r in _promote_rows(agentx)] == ["promote", "delete", "promote"]
    assert [e.operation for e in store.history(target="agentx:2")] == ["redo", "undo", "promote"]


def test_below_the_thresholds_promote_is_refused_unless_forced(store: Any, agentx: Any) -> None:
    with pytest.raises(BelowThresholdError, match="access_count 3 < 5.*conversations 1 < 2"):
        Curator(store).promote("agentx:2")
    assert _promote_rows(agentx) == []
    outcome = Curator(store).promote("agentx:2", force=True)
    [row] = _promote_rows(agentx)
    assert row[5:7] == (3, 1)  # the values it had, as the audit row records them
    assert any("below the thresholds" in note for note in outcome.notes)


def test_undo_refuses_a_copy_changed_since_and_mnemoscope_removes_no_other_row(store: Any, agentx: Any) -> None:
    outcome = Curator(store).promote("agentx:2", force=True)
    key = int(outcome.ids[0].split(":")[1])
    agentx.sql(f"UPDATE memory_timeline SET access_count = 1 WHERE id = {key}")  # AgentX retrieved it meanwhile
    with pytest.raises(ConflictError):
        Curator(store).undo()
    assert agentx.sql(f"SELECT count(*) FROM memory_timeline WHERE id = {key}") == [(1,)]
    source = store._sources[0]
    snap = curation.read_snapshot(source, "agentx:1")
    with pytest.raises(ReadOnlyError, match="neither adds nor removes"):
        curation.write_record(source, "agentx:1", snap, None)
