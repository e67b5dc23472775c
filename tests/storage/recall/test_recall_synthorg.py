"""SynthOrg's context injection on a company the real mem0 library wrote (formats/test_synthorg.py's
fixture), checked against a hand computation of the seed's linear ranking:
relevance (+0.1 personal, capped at 1) x 0.7 + exp(-0.01 x age hours) x 0.3, kept from 0.3;
shared memories come in without the personal boost; expired ones and other agents' never."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from formats.test_synthorg import _company, company  # noqa: F401  (fixtures)
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.recall import recall, who_asks

QUESTION = "what should run before the tests"


def data_of(project: Path) -> Path:
    return project / "data" / "memory"


def opened(project: Path, retrieval: str = ""):
    if retrieval:
        config = project / "synthorg.yaml"
        config.write_text(config.read_text(encoding="utf-8").replace("memory:\n", f"memory:\n  retrieval:\n{retrieval}", 1),
                          encoding="utf-8")
    store = open_store(data_of(project))
    store.use_embedder(HashingEmbedder())  # the model the company's vectors were written with
    return store


def by_hand(question: str, content: str, created: datetime, now: datetime, personal: bool) -> float:
    q, m = (np.asarray(v) for v in HashingEmbedder().embed([question, content]))
    relevance = float(q @ m / (np.linalg.norm(q) * np.linalg.norm(m)))
    if personal:
        relevance = min(relevance + 0.1, 1.0)
    hours = (now - created).total_seconds() / 3600
    return 0.7 * relevance + 0.3 * math.exp(-0.01 * hours)


def test_personal_and_shared_memories_rank_by_the_seeds_linear_formula(company) -> None:
    project, ids = company
    now = datetime.now(UTC)
    with opened(project) as store:
        assert who_asks(store) == ("agent", ["ceo", "qa-lead"])
        result = recall(store, QUESTION, as_agent="qa-lead", now=now)
        memories = {i: store.get(i) for i in (ids["qa"], ids["lesson"], ids["prs"])}
    expected = {i: by_hand(QUESTION, m.content, m.created_at, now, personal=m.channel != "shared")
                for i, m in memories.items()}
    kept = sorted((i for i in expected if expected[i] >= 0.3), key=lambda i: (-expected[i], i))
    assert len(kept) == 3, expected  # all three clear min_relevance: the order is what is checked
    assert [h.memory.id for h in result.hits] == kept
    for hit in result.hits:
        assert hit.score == pytest.approx(expected[hit.memory.id], abs=1e-4)
    shared = next(h for h in result.hits if h.memory.id == ids["prs"])
    assert shared.found_by.startswith("shared") and "+ 0.1" not in shared.explanation()
    personal = next(h for h in result.hits if h.memory.id == ids["lesson"])
    assert personal.found_by == "personal" and "+ 0.1, 1)" in personal.explanation()
    assert result.system == "SynthOrg" and result.scope["as"] == "qa-lead"


def test_expired_entries_another_agents_memories_and_its_own_publications_are_dropped(company) -> None:
    project, ids = company
    with opened(project) as store:
        result = recall(store, "JWT sessions auth endpoint Litestar approvals", as_agent="ceo")
    reasons = {d.memory.id: d.reason for d in result.dropped}
    assert reasons[ids["build"]].startswith("expired")
    assert "published by ceo itself" in reasons[ids["prs"]]
    assert ids["jwt"] in {h.memory.id for h in result.hits}
    assert any(r.startswith("qa-lead's personal memory") for r in reasons.values())
    # Written in 2020: its recency is gone, and 0.7 x its boosted relevance stays under 0.3.
    assert reasons[ids["litestar"]].startswith("combined 0.2") and reasons[ids["litestar"]].endswith("under min_relevance 0.3")
    assert ids["litestar"] not in {h.memory.id for h in result.near_misses}
    assert result.explain(ids["litestar"])["status"].startswith("dropped: combined")


def test_the_non_inferable_filter_drops_what_is_not_tagged_when_the_company_asks_for_it(company) -> None:
    project, ids = company
    with opened(project, retrieval="    non_inferable_only: true\n    min_relevance: 0.0\n") as store:
        result = recall(store, QUESTION, as_agent="qa-lead")
    reasons = {d.memory.id: d.reason for d in result.dropped}
    assert reasons[ids["prs"]] == "not tagged non-inferable (non_inferable_only)"
    assert {h.memory.id for h in result.hits} == {ids["qa"], ids["lesson"]}
    assert "non-inferable only" in result.rules and "memory.retrieval" in result.documented_by


def test_settings_of_the_wrong_type_are_left_at_synthorgs_defaults(company) -> None:
    project, _ids = company
    with opened(project, retrieval="    max_memories: 2.0\n    min_relevance: nope\n    personal_boost: 0.2\n") as store:
        result = recall(store, QUESTION, as_agent="qa-lead")
    assert "up to 2" in result.rules and ">= 0.3" in result.rules and "+0.2 personal" in result.rules
    assert len(result.hits) <= 2


def test_with_several_agents_the_agent_must_be_named(company) -> None:
    project, _ids = company
    with opened(project) as store, pytest.raises(UnsupportedError, match="give --as AGENT .*ceo, qa-lead"):
        recall(store, QUESTION)
