"""The five-layer system's memory_recall on its structured memory DB, written as the agent writes
it (formats/test_facts_db.py's helpers, vectors of 256 dimensions), checked against a hand
computation of its three tiers: the 3 categories nearest the question (1 / (1 + L2) to the mean
of their facts' vectors), their facts by (0.7 x 1 / (1 + L2) + 0.3 x keyword) x decay_score, and
the flat fallback after them when tier 2 gives fewer than top_k."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.owners import require
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.model import Kind
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.query import MemoryQuery
from mnemoscope.storage.recall import recall
from mnemoscope.storage.views.search import search

require("pysqlite3")
require("sqlite_vec")

from formats.test_facts_db import SCHEMA, agent_connection, store_fact  # noqa: E402

QUESTION = "felines and their dinner"
# id, key, value, category, access_count, last_accessed, created_at, decay_score
FACTS = [
    ("f_cat", "cat name", "My cat's name is Whiskerino", "pets", 7, "2026-03-04 10:00:00", "2026-03-01 09:00:00", 2.9),
    ("f_food", "cat food", "Whiskerino eats salmon on Fridays", "pets", 2, "2026-03-02 08:00:00", "2026-03-01 09:05:00", 1.4),
    ("f_deploy", "deploy", "Deploys go out on Tuesdays after the standup", "project", 0, None, "2026-03-02 14:00:00", 0.6),
    ("f_ci", "ci", "The CI pipeline runs on every push to main", "project", 1, None, "2026-03-02 15:00:00", 0.9),
    ("f_tz", "timezone", "The user works in Europe/Lisbon time", "identity", 4, "2026-03-03 12:00:00", "2026-03-02 15:00:00", 1.0),
    ("f_trip", "trip", "Flights to Porto are booked for May", "travel", 1, None, "2026-03-03 09:00:00", 1.2),
]


def vector_of(key: str, value: str) -> list[float]:
    return HashingEmbedder().embed([f"{key}: {value}"])[0]  # what the agent embeds: "key: value"


@pytest.fixture
def agent_db(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "memory").mkdir(parents=True)
    con = agent_connection(root / "facts.db")
    con.executescript(SCHEMA.replace("float[4]", "float[256]"))
    for fact in FACTS:
        store_fact(con, *fact, vector_of(fact[1], fact[2]))
    con.close()
    (root / "MEMORY.md").write_text("# Facts\n\n- Felines need fresh water with their dinner\n", encoding="utf-8")
    return root


def opened(root: Path):
    store = open_store(root)
    store.use_embedder(HashingEmbedder())
    return store


def hand_tiers(question: str) -> tuple[list[str], dict[str, float]]:
    """The 3 nearest categories, and every fact's score with keyword 0 (the question shares no word)."""
    q = np.asarray(HashingEmbedder().embed([question])[0])
    vectors = {f[0]: np.asarray(vector_of(f[1], f[2])) for f in FACTS}
    categories = {f[3] for f in FACTS}
    nearness = {c: 1 / (1 + np.linalg.norm(q - np.mean([vectors[f[0]] for f in FACTS if f[3] == c], axis=0)))
                for c in categories}
    chosen = sorted(categories, key=lambda c: (-nearness[c], c))[:3]
    scores = {f[0]: 0.7 * (1 / (1 + float(np.linalg.norm(q - vectors[f[0]])))) * f[7] for f in FACTS}
    return chosen, scores


def test_tier_two_ranks_the_facts_of_the_three_nearest_categories_by_the_agents_formula(agent_db) -> None:
    chosen, scores = hand_tiers(QUESTION)
    category = {f[0]: f[3] for f in FACTS}
    scoped = sorted((i for i in scores if category[i] in chosen), key=lambda i: (-scores[i], i))
    with opened(agent_db) as store:
        result = recall(store, QUESTION, k=2)
    assert [h.memory.id.rsplit(":", 1)[1] for h in result.hits] == scoped[:2]
    for hit in result.hits:
        assert hit.score == pytest.approx(scores[hit.memory.id.rsplit(":", 1)[1]], abs=1e-4)
        assert hit.found_by.startswith("tier 2: scoped to ")
    assert f"Tier 1 chose {chosen[0]} " in " ".join(result.notices)
    assert result.hits[0].explanation().endswith(f") x decay_score 2.900 = {result.hits[0].score:.3f}")


def test_the_flat_fallback_comes_after_tier_two_when_it_gives_fewer_than_top_k(agent_db) -> None:
    chosen, scores = hand_tiers(QUESTION)
    category = {f[0]: f[3] for f in FACTS}
    scoped = sorted((i for i in scores if category[i] in chosen), key=lambda i: (-scores[i], i))
    rest = sorted((i for i in scores if category[i] not in chosen), key=lambda i: (-scores[i], i))
    with opened(agent_db) as store:
        result = recall(store, QUESTION)
    assert [h.memory.id.rsplit(":", 1)[1] for h in result.hits] == scoped + rest
    tiers = [h.found_by.split(":")[0] for h in result.hits]
    assert tiers == ["tier 2"] * len(scoped) + ["tier 3"] * len(rest)


def test_high_salience_facts_are_listed_as_the_initial_context_and_markdown_is_memory_searchs(agent_db) -> None:
    with opened(agent_db) as store:
        result = recall(store, QUESTION)
    [initial] = [hits for title, hits in result.extra.items() if title.startswith("initial context")]
    assert [h.memory.id.rsplit(":", 1)[1] for h in initial] == [f[0] for f in sorted(FACTS, key=lambda f: -f[7])]
    [markdown] = [d for d in result.dropped if "Felines need fresh water" in d.memory.content]
    assert markdown.reason.startswith("workspace markdown: memory_recall searches the structured DB")


def test_a_word_the_question_shares_gives_the_keyword_term(agent_db) -> None:
    with opened(agent_db) as store:
        result = recall(store, "when do deploys go out", k=10)
    deploy = next(h for h in result.hits if h.memory.id.endswith(":f_deploy"))
    assert dict((t.name, t.value) for t in deploy.terms)["keyword"] == pytest.approx(1.0)


def test_the_keyword_term_is_bm25_min_max_normalised_over_the_keyword_list(agent_db) -> None:
    question = "Whiskerino salmon Porto"
    with opened(agent_db) as store:
        result = recall(store, question)
        bm25 = {h.memory.id.rsplit(":", 1)[1]: h.signals["bm25"]
                for h in search(store, question, mode="keyword", k=30, query=MemoryQuery(kinds=(Kind.SQLITE,))).hits}
    low, high = min(bm25.values()), max(bm25.values())
    assert len(bm25) == 3 and high > low  # three facts hold a word, with different weights
    q = np.asarray(HashingEmbedder().embed([question])[0])
    decay = {f[0]: f[7] for f in FACTS}
    for hit in result.hits:
        fact = hit.memory.id.rsplit(":", 1)[1]
        row = next(f for f in FACTS if f[0] == fact)
        vector = 1 / (1 + float(np.linalg.norm(q - np.asarray(vector_of(row[1], row[2])))))
        keyword = 1 - (high - bm25[fact]) / (high - low) if fact in bm25 else 0.0
        assert hit.score == pytest.approx((0.7 * vector + 0.3 * keyword) * decay[fact], abs=1e-4), fact
