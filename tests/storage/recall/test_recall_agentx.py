"""AgentX's retrieval rules on a native store (whose channels follow AgentX's model), checked
against a hand computation of the seed's formula: weight(kind) x cosine [x confidence | x
salience] + 0.1 x recency (24 h half-life), x1.2 current / x0.7 past; active channel + _global."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from mnemoscope.storage.embedders.choice import default_embedder
from mnemoscope.storage.model import Layer, Status
from mnemoscope.storage.opening import create_workspace, open_store
from mnemoscope.storage.recall import recall
from mnemoscope.storage.recall.agentx import kind_of

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
QUESTION = "which payment provider does the shop use"
SEED_WEIGHTS = {Layer.EPISODIC: 0.3, Layer.SEMANTIC: 0.25, Layer.SOCIAL: 0.2, Layer.PROCEDURAL: 0.15}

# content, layer, channel, confidence, salience, hours before NOW, metadata, status
MEMORIES = [
    ("The webshop takes card payments through Stripe", Layer.SEMANTIC, "webshop", 0.9, None, 48, {}, Status.ACTIVE),
    ("Yesterday we talked about Stripe webhooks failing at checkout", Layer.EPISODIC, "webshop", None, None, 20, {},
     Status.ACTIVE),
    ("Stripe is the payment provider for every project", Layer.SEMANTIC, "_global", 0.5, None, 200,
     {"temporal": "past"}, Status.ACTIVE),
    ("Retry a failed card charge three times before alerting", Layer.PROCEDURAL, "_global", None, None, 5, {},
     Status.ACTIVE),
    ("Dana owns the payments integration", Layer.SOCIAL, "_global", None, 0.8, 30, {"temporal": "current"},
     Status.ACTIVE),
    ("The command line tool bills customers through Stripe", Layer.SEMANTIC, "rust-cli", 0.95, None, 1, {},
     Status.ACTIVE),
    ("The webshop used PayPal for payments before", Layer.SEMANTIC, "webshop", 0.9, None, 3, {}, Status.ARCHIVED),
]


@pytest.fixture
def shop(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "shop"
    ids = {}
    with create_workspace(path, default_embedder()) as store:
        for content, layer, channel, confidence, salience, hours, metadata, status in MEMORIES:
            ids[content] = store.add_memory(content, layer=layer, channel=channel, confidence=confidence,
                                            salience=salience, created_at=NOW - timedelta(hours=hours),
                                            metadata=metadata, status=status)
    return path, ids


def by_hand(content: str, layer: Layer, confidence: float | None, salience: float | None, hours: float,
            metadata: dict[str, str]) -> float:
    """The seed's formula, computed apart from the product: the cosine of the two embeddings."""
    embedder = default_embedder()
    q, m = (np.asarray(v, dtype=np.float64) for v in embedder.embed([QUESTION, content]))
    cosine = float(q @ m / (np.linalg.norm(q) * np.linalg.norm(m)))
    relevance = SEED_WEIGHTS[layer] * cosine
    if layer is Layer.SEMANTIC:
        relevance *= 0.5 if confidence is None else confidence
    if layer is Layer.SOCIAL:
        relevance *= 0.5 if salience is None else salience
    score = relevance + 0.1 * 0.5 ** (hours / 24)
    return score * {"current": 1.2, "past": 0.7}.get(metadata.get("temporal", ""), 1.0)


def test_the_active_channel_and_global_come_in_the_seeds_weighted_order(shop) -> None:
    path, ids = shop
    with open_store(path, read_only=True) as store:
        result = recall(store, QUESTION, channel="webshop", now=NOW)
    expected = {ids[c]: by_hand(c, layer, conf, sal, hours, meta)
                for c, layer, channel, conf, sal, hours, meta, status in MEMORIES
                if channel in ("webshop", "_global") and status is Status.ACTIVE}
    order = sorted(expected, key=lambda i: (-expected[i], i))
    assert [h.memory.id for h in result.hits] == order
    for hit in result.hits:
        assert hit.score == pytest.approx(expected[hit.memory.id], abs=1e-4)
    assert {h.memory.channel for h in result.hits} == {"webshop", "_global"}
    assert result.scope["channel"] == "webshop"
    assert result.signal == "vector" and "wordllama" in (result.embedder or "")


def test_each_hit_shows_its_signals_and_weights(shop) -> None:
    path, ids = shop
    with open_store(path, read_only=True) as store:
        result = recall(store, QUESTION, channel="webshop", now=NOW)
    fact = next(h for h in result.hits if h.memory.id == ids["The webshop takes card payments through Stripe"])
    assert fact.explanation().startswith("0.25 x cosine ")
    assert "x confidence 0.90 + 0.1 x recency 0.250" in fact.explanation()  # 48 h: two half-lives
    past = next(h for h in result.hits if h.memory.id == ids["Stripe is the payment provider for every project"])
    assert past.explanation().endswith(f") x past 0.7 = {past.score:.3f}")
    entity = next(h for h in result.hits if h.memory.id == ids["Dana owns the payments integration"])
    assert "x salience 0.80" in entity.explanation() and "x current 1.2" in entity.explanation()


def test_what_the_agent_would_not_be_given_is_listed_with_the_reason(shop) -> None:
    path, ids = shop
    with open_store(path, read_only=True) as store:
        result = recall(store, QUESTION, channel="webshop", now=NOW)
    reasons = {d.memory.id: d.reason for d in result.dropped}
    assert "channel rust-cli" in reasons[ids["The command line tool bills customers through Stripe"]]
    assert reasons[ids["The webshop used PayPal for payments before"]].startswith("archived")
    shown = {h.memory.id for h in result.hits}
    assert not shown & set(reasons)


def test_without_a_channel_only_global_is_searched_and_k_cuts_the_list(shop) -> None:
    path, ids = shop
    with open_store(path, read_only=True) as store:
        result = recall(store, QUESTION, k=2, now=NOW)
        explained = result.explain(result.near_misses[0].memory.id)
    assert {h.memory.channel for h in result.hits} == {"_global"}
    assert len(result.hits) == 2 and result.near_misses
    assert result.near_misses[0].score <= result.hits[-1].score
    assert explained["status"].startswith("near miss at rank 3")
    assert any("channel webshop" in d.reason for d in result.dropped)


def test_layers_agentx_does_not_name_are_weighed_as_their_nearest_kind(shop) -> None:
    path, _ids = shop
    with open_store(path, read_only=True) as store:
        memory = store.page(limit=1)[0]
    assert kind_of(memory.with_changes(layer=Layer.WORKING)) == "episodic"
    assert kind_of(memory.with_changes(layer=Layer.CORE)) == "fact"
    assert kind_of(memory.with_changes(layer=Layer.SEMANTIC, metadata={"memory_type": "entity"})) == "entity"
