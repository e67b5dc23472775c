"""What AgentX's cleanup job will archive or delete, and when (agentx_retention, the
RetentionSource protocol), on a real PostgreSQL holding the seed's schema and rows: conversations
90 days after they started, entities whose decayed salience falls below 0.1 after 30 idle days."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import open_store
from mnemoscope.storage.formats.agentx_retention import idle_days_until_cleanup
from mnemoscope.storage.retention import ARCHIVE, CLEAN_UP, RetentionSource
from mnemoscope.storage.salience import EntityDecay

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)


@pytest.fixture
def source(agentx: Any) -> Any:
    opened = open_store(agentx.url)
    yield opened._sources[0]
    opened.close()


def test_conversations_are_archived_90_days_after_they_started(source: Any) -> None:
    assert isinstance(source, RetentionSource)
    found = {u.record_id: u for u in source.upcoming(NOW, NOW + timedelta(days=30))}
    rust, preferences = found[agentx_db.RUST_CHAT], found[agentx_db.PREFERENCES_CHAT]
    assert (rust.action, rust.when) == (ARCHIVE, datetime(2025, 6, 8, 10, 0, tzinfo=timezone.utc))
    assert preferences.when == datetime(2025, 6, 18, 9, 0, tzinfo=timezone.utc)
    assert agentx_db.TRAVEL_CHAT not in found  # started 5 April: archived on 4 July, after the window
    assert "90 days after it started" in rust.rule and rust.owner == "AgentX PostgreSQL"
    assert rust.preview == "Why does the borrow checker reject my parser?"
    # the episodic memory of that conversation goes with it (its event_time standing for the start)
    turn = found["agentx:3"]
    assert (turn.action, turn.when) == (ARCHIVE, datetime(2025, 6, 8, 10, 0, tzinfo=timezone.utc))
    assert "event_time stands for" in turn.rule
    assert {u.record_id for u in source.upcoming(NOW, NOW + timedelta(days=60))} >= {agentx_db.TRAVEL_CHAT}


def test_an_episodic_row_naming_its_conversation_goes_at_that_conversations_date(source: Any, agentx: Any) -> None:
    agentx.sql("UPDATE memory_timeline SET metadata = metadata || %s::jsonb WHERE id = 3",
               (json.dumps({"conversation_id": agentx_db.PREFERENCES_CHAT}),))
    [turn] = [u for u in source.upcoming(NOW, NOW + timedelta(days=30)) if u.record_id == "agentx:3"]
    assert turn.when == datetime(2025, 6, 18, 9, 0, tzinfo=timezone.utc) and "event_time" not in turn.rule
    agentx.sql("UPDATE memory_timeline SET archived = true WHERE id = 3")  # archived already: nothing to come
    assert "agentx:3" not in {u.record_id for u in source.upcoming(NOW, NOW + timedelta(days=30))}


def test_an_entity_is_deleted_once_its_decayed_salience_is_below_the_threshold_after_30_idle_days(source: Any) -> None:
    # Lisbon: salience 0.5, last accessed 7 April 14:00; 0.5 x 0.95^32 < 0.1 <= 0.5 x 0.95^31
    [entity] = [u for u in source.upcoming(NOW, NOW + timedelta(days=30)) if u.record_id == "agentx:5"]
    assert (entity.action, entity.when) == (CLEAN_UP, datetime(2025, 5, 9, 14, 0, tzinfo=timezone.utc))
    assert entity.when < NOW  # overdue: the daily job runs it at its next pass
    assert "below 0.1" in entity.rule and "30 days" in entity.rule
    early = NOW - timedelta(days=40)
    assert "agentx:5" not in {u.record_id for u in source.upcoming(early, early + timedelta(days=10))}


def test_idle_days_follow_the_decay_and_the_minimum_idle_time() -> None:
    decay = EntityDecay()
    assert idle_days_until_cleanup(0.5, decay) == 32
    assert idle_days_until_cleanup(0.05, decay) == 30  # below already: the 30 idle days decide
    assert idle_days_until_cleanup(0.11, decay) == 30  # 0.11 x 0.95^30 < 0.1
    assert idle_days_until_cleanup(0.5, EntityDecay(rate=1.0)) is None
