"""The conversations AgentX saw each memory in, counted from its audit log (agentx_counts), and the
promotion candidates its thresholds (0.85 / 5 / 2) select by those counts, on a real PostgreSQL
holding the seed's schema and rows."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.formats import agentx_counts
from mnemoscope.storage.salience import PromotionThresholds


@pytest.fixture
def store(agentx: Any) -> Any:
    opened = open_store(agentx.url)
    yield opened
    opened.close()


def test_each_memory_counts_the_distinct_conversations_its_audit_rows_were_written_in(store: Any, agentx: Any) -> None:
    # fact-102 stored in the rust chat; fact-101 stored in the preferences chat (its retrieval and
    # promotion rows name no conversation); the strategy's row names none; the entity: the travel chat.
    seen = {m.id: m.conversations for m in store.page(MemoryQuery(statuses=()), 10)}
    assert seen == {"agentx:1": 1, "agentx:2": 1, "agentx:3": 0, "agentx:4": 0, "agentx:5": 1, "agentx:6": 0,
                    "agentx:7": 0}
    agentx_db.recall_in_new_conversation(agentx, "fact-102", retrievals=3)  # three retrievals, one conversation
    assert store.get("agentx:2").conversations == 2
    # by the timeline id too, and the conversation the row itself names
    agentx.sql("UPDATE memory_timeline SET metadata = metadata || %s::jsonb WHERE id = 4",
               (json.dumps({"conversation_id": agentx_db.TRAVEL_CHAT}),))
    agentx.sql("UPDATE memory_audit_log SET conversation_id = %s WHERE metadata->'affected_ids' = '[4]'",
               (agentx_db.RUST_CHAT,))
    assert store.get("agentx:4").conversations == 2


def test_without_the_audit_logs_conversations_the_count_is_not_kept(store: Any, agentx: Any) -> None:
    agentx.sql("ALTER TABLE memory_audit_log DROP COLUMN conversation_id")
    reopened = open_store(agentx.url)
    try:
        memory = reopened.get("agentx:2")
        assert memory.conversations is None and memory.to_dict()["conversations"] is None
        assert reopened.promotion_candidates() == []
    finally:
        reopened.close()


def test_candidates_are_the_project_facts_meeting_every_threshold_by_agentx_counts(store: Any, agentx: Any) -> None:
    assert store.promotion_candidates() == []  # fact-102: 3 accesses, 1 conversation
    agentx_db.recall_in_new_conversation(agentx, "fact-102", retrievals=2)
    found = store.promotion_candidates()
    assert [m.id for m in found] == ["agentx:2"]
    assert (found[0].confidence, found[0].access_count, found[0].conversations) == (0.95, 5, 2)
    assert store.settings.promotion.check(found[0])["all_met"]
    stricter = agentx_counts.promotion_candidates(store._sources[0], PromotionThresholds(conversations=3), 10)
    assert stricter == []
    # a _global fact with the same claim (AgentX keeps one per claim) takes it off the list
    agentx.sql("INSERT INTO memory_timeline (memory_type, event_time, summary, channel, metadata) "
               "SELECT memory_type, now(), summary, '_global', '{}' FROM memory_timeline WHERE id = 2")
    assert store.promotion_candidates() == []


def test_a_goal_meeting_the_numbers_is_no_fact_to_promote(store: Any, agentx: Any) -> None:
    agentx.sql("UPDATE memory_timeline SET metadata = metadata || '{\"confidence\": 0.9}' WHERE id = 7")
    agentx_db.recall_in_new_conversation(agentx, "goal-501", retrievals=1)
    agentx.sql("INSERT INTO memory_audit_log (timestamp, operation, memory_type, conversation_id, metadata) "
               "VALUES ('2025-04-06T16:00:01+00', 'store', 'working', %s, '{\"record_ids\": [\"goal-501\"]}')",
               (agentx_db.TRAVEL_CHAT,))
    goal = store.get("agentx:7")
    assert (goal.confidence, goal.access_count, goal.conversations) == (0.9, 6, 2)
    assert store.settings.promotion.check(goal)["all_met"]
    assert store.promotion_candidates() == []
