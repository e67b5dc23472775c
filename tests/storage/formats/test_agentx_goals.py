"""AgentX's goals and strategies with their lifecycle, success rates and tool stats
(agentx_goals), as Memory metadata and as info's section, on a real PostgreSQL holding the seed's
schema and rows."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import open_store
from mnemoscope.storage.formats.agentx_goals import success_rate, tool_stats


@pytest.fixture
def store(agentx: Any) -> Any:
    opened = open_store(agentx.url)
    yield opened
    opened.close()


def test_a_goal_shows_its_status_priority_and_deadline(store: Any, agentx: Any) -> None:
    goal = store.get("agentx:7").metadata
    assert (goal["goal.status"], goal["goal.priority"], goal["goal.deadline"]) == ("active", 2, "2025-04-30T00:00:00+00:00")
    assert goal["goal.completed_at"] is None and goal["goal.result"] is None  # not completed: not kept
    agentx.sql("UPDATE memory_timeline SET metadata = metadata || '{\"status\": \"completed\", "
               "\"completed_at\": \"2025-04-20T10:00:00+00:00\", \"result\": \"Booked TAP, 189 EUR\"}' WHERE id = 7")
    done = store.get("agentx:7").metadata
    assert (done["goal.status"], done["goal.result"]) == ("completed", "Booked TAP, 189 EUR")
    assert not any(key.startswith("goal.") for key in store.get("agentx:2").metadata)  # a fact is no goal


def test_a_strategy_shows_its_success_rate_and_the_stats_of_its_tools(store: Any) -> None:
    strategy = store.get("agentx:4").metadata
    assert strategy["strategy.success_rate"] == 0.75  # 3 succeeded, 1 failed
    assert strategy["strategy.tool_sequence"] == ["cargo_check", "cargo_test"]
    assert strategy["strategy.tool.cargo_check"] == "1 uses, 1 succeeded (100% success), 2300 ms average"
    assert strategy["strategy.tool.cargo_test"] == "no invocation logged"
    assert tool_stats(store._sources[0])["web_search"] == {
        "usage_count": 2, "success_count": 1, "success_rate": 0.5, "avg_latency_ms": 5900.0}


def test_info_lists_goals_by_status_and_strategies_by_success_rate(store: Any) -> None:
    [agentx] = store.info()["formats"]
    view = agentx["owner_view"]
    assert view[0] == "goals: 1 (1 active)"
    assert view[1].startswith("  agentx:7 [active, priority 2] Book flights to Lisbon")
    assert view[2] == "strategies: 1" and "agentx:4 success rate 75% (3 succeeded, 1 failed)" in view[3]
    assert view[4].startswith("tools: cargo_check 1 uses") and "web_search 2 uses, 1 succeeded (50% success)" in view[4]


def test_a_rate_is_absent_until_anything_was_tried() -> None:
    assert success_rate(None, None) is None
    assert success_rate(0, 0) is None
    assert success_rate(2, None) == 1.0
