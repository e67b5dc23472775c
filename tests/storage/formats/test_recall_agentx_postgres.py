"""AgentX's retrieval on its own PostgreSQL database (the seed's DDL and rows, helpers/agentx_db.py):
the rust channel merged with _global, each kind weighed as the seed says, the travel channel and
the archived fact dropped, the active goals given whatever is asked."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.recall import recall

QUESTION = "borrow checker errors in rust"
NOW = datetime(2025, 4, 10, 12, 0, tzinfo=UTC)
WEIGHT = {"fact": 0.25, "episodic": 0.3, "strategy": 0.15, "entity": 0.2}


def by_hand(kind: str, summary: str, importance: float, at: str) -> float:
    embedder = HashingEmbedder(dimensions=agentx_db.DIMENSIONS)
    q, m = (np.asarray(v) for v in embedder.embed([QUESTION, summary]))
    cosine = float(q @ m / (np.linalg.norm(q) * np.linalg.norm(m)))
    factor = {"fact": 0.95, "entity": importance}.get(kind, 1.0)  # the fact's confidence, the entity's salience
    hours = (NOW - datetime.fromisoformat(at)).total_seconds() / 3600
    return WEIGHT[kind] * cosine * factor + 0.1 * 0.5 ** (hours / 24)


def test_the_rust_channel_and_global_in_the_seeds_weighted_order(agentx: Any, tmp_path: Path) -> None:
    if not agentx_db.pgvector_computes(agentx.server):
        pytest.skip("this server's pgvector dies computing distances on this CPU (see helpers/postgres_server.py)")
    with open_store(agentx.url) as store:
        store.use_embedder(HashingEmbedder(dimensions=agentx_db.DIMENSIONS))
        result = recall(store, QUESTION, channel=agentx_db.RUST, now=NOW)
    expected = {f"agentx:{row_id}": by_hand(kind, summary, importance, at)
                for row_id, kind, _node, at, summary, importance, _n, channel, archived in agentx_db.MEMORIES
                if channel in (agentx_db.RUST, "_global") and not archived and kind != "goal"}
    assert [h.memory.id for h in result.hits] == sorted(expected, key=lambda i: (-expected[i], i))
    for hit in result.hits:
        assert hit.score == pytest.approx(expected[hit.memory.id], abs=1e-4)
    reasons = {d.memory.id: d.reason for d in result.dropped}
    assert reasons["agentx:6"].startswith("archived")
    assert reasons["agentx:5"].startswith(f"channel {agentx_db.TRAVEL}")
    [goals] = result.extra.values()
    assert [g.memory.id for g in goals] == ["agentx:7"] and result.system == "AgentX"


def test_agentxs_own_metadata_drives_the_temporal_boost_and_the_goals(agent_db_tags: Any) -> None:
    agentx = agent_db_tags
    with open_store(agentx.url) as store:
        store.use_embedder(HashingEmbedder(dimensions=agentx_db.DIMENSIONS))
        result = recall(store, QUESTION, channel=agentx_db.RUST, now=NOW)
    fact = next(h for h in result.hits if h.memory.id == "agentx:2")
    assert fact.explanation().endswith(f") x past 0.7 = {fact.score:.3f}")
    assert fact.score == pytest.approx(0.7 * by_hand("fact", agentx_db.MEMORIES[1][4], 0.6, agentx_db.MEMORIES[1][3]),
                                       abs=1e-4)
    assert result.extra == {}  # the one goal is completed: AgentX gives active goals only


@pytest.fixture
def agent_db_tags(agentx: Any) -> Any:
    if not agentx_db.pgvector_computes(agentx.server):
        pytest.skip("this server's pgvector dies computing distances on this CPU (see helpers/postgres_server.py)")
    agentx.sql("UPDATE memory_timeline SET metadata = metadata || '{\"temporal\": \"past\"}' WHERE id = 2")
    agentx.sql("UPDATE memory_timeline SET metadata = metadata || '{\"status\": \"completed\"}' WHERE id = 7")
    return agentx
