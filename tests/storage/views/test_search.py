"""Search (storage/views/search.py), the one search of the window and the CLI. Its scores are
real: BM25 relevance for keyword, cosine similarity for vector, a normalised fused score for
hybrid; and each hit says which list(s) it came from."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Kind, Layer, Memory, MemoryQuery, open_store
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import NotFoundError, UnsupportedError
from mnemoscope.storage.model import SourceRef
from mnemoscope.storage.views.search import RRF_K, SCORE_MEANINGS, cosine, rrf, search, similar, words_of

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def memory(**kw) -> Memory:
    base = dict(
        id="m-1", source=SourceRef(Kind.SQLITE, "x"), layer=Layer.SEMANTIC, channel="p",
        content="c", created_at=T0, updated_at=T0, last_accessed=T0,
    )
    return Memory(**{**base, **kw})


@pytest.fixture
def store(demo_path: Path):
    with open_store(demo_path) as opened:
        yield opened


def test_rrf_rewards_agreement() -> None:
    a, b, c = memory(id="a"), memory(id="b"), memory(id="c")
    fused = rrf({"keyword": [a, b], "vector": [b, c]})
    assert [h.memory.id for h in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)


def test_keyword_relevance_ranks_a_two_word_match_above_a_one_word_match(store) -> None:
    both = store.add_memory("Stripe payments webhooks are retried for three days.", channel="webshop")
    one = store.add_memory("Refunds reach the payments ledger overnight.", channel="webshop")
    result = search(store, "stripe payments", mode="keyword", k=20)
    scores = {h.memory.id: h.score for h in result.hits}
    assert result.mode == "keyword" and result.to_dict()["score"] == SCORE_MEANINGS["keyword"]
    assert scores[both] > scores[one] > 0
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    # Not rank positions: no score is 1/(60 + rank).
    assert all(not math.isclose(h.score, 1 / (RRF_K + r)) for r, h in enumerate(result.hits, 1))


def test_keyword_relevance_weighs_rare_words_above_common_ones(store) -> None:
    """idf: "stripe" is in one memory of the store, "webshop" in dozens."""
    rare = store.add_memory("Stripe is the card processor.", channel="_global")
    common = store.add_memory("The webshop is the shop on the web.", channel="_global")
    scores = {h.memory.id: h.score for h in search(store, "stripe webshop", mode="keyword", k=100).hits}
    assert scores[rare] > scores[common]


def test_keyword_search_respects_the_query_filters(store) -> None:
    in_global = store.add_memory("Stripe payments for the personal blog.", channel="_global")
    hits = search(store, "stripe payments", mode="keyword", k=20, query=MemoryQuery(channels=("webshop",))).hits
    assert hits and all(h.memory.channel == "webshop" for h in hits)
    assert in_global not in {h.memory.id for h in hits}


def test_vector_scores_are_cosine_similarities(store) -> None:
    result = search(store, "stripe payments", mode="vector", k=10)
    assert result.mode == "vector" and result.hits
    query = HashingEmbedder().embed(["stripe payments"])[0]
    for hit in result.hits:
        stored = store.embedding_of(hit.memory.id)
        dot = sum(a * b for a, b in zip(query, stored, strict=True))
        cosine = dot / (math.sqrt(sum(a * a for a in query)) * math.sqrt(sum(b * b for b in stored)))
        assert -1.0 <= hit.score <= 1.0
        assert hit.score == pytest.approx(cosine, abs=1e-6)
        assert hit.to_dict()["from"] == ["vector"]
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)


def test_hybrid_scores_are_normalised_rrf_with_their_lists(store) -> None:
    result = search(store, "stripe payments", mode="hybrid", k=10)
    keyword = search(store, "stripe payments", mode="keyword", k=10)
    vector = search(store, "stripe payments", mode="vector", k=10)
    fused = rrf({"keyword": [h.memory for h in keyword.hits], "vector": [h.memory for h in vector.hits]})
    assert [h.memory.id for h in result.hits] == [h.memory.id for h in fused][:10]
    best = 2 / (RRF_K + 1)
    for hit, raw in zip(result.hits, fused, strict=False):
        assert 0.0 < hit.score <= 1.0
        assert hit.score == pytest.approx(raw.score / best)
    top = result.hits[0]
    assert top.memory.content.startswith("webshop payments go through Stripe")
    assert top.score == pytest.approx(1.0) and top.to_dict()["from"] == ["keyword", "vector"]
    assert any(h.to_dict()["from"] == ["vector"] for h in result.hits)


def test_an_unknown_mode_is_refused(store) -> None:
    with pytest.raises(UnsupportedError, match="use one of keyword, vector, hybrid"):
        search(store, "stripe", mode="fuzzy")


def test_without_vectors_a_vector_search_says_so_and_shows_keyword_results(markdown_only: Path) -> None:
    with open_store(markdown_only) as store:
        result = search(store, "Litestar shop", mode="vector", k=5)
        assert (result.requested_mode, result.mode, result.embedder) == ("vector", "keyword", None)
        assert result.notices == ["This store has no vector collection; vector search is not available.",
                                  "Showing keyword results instead."]
        assert result.hits and all("vector" not in h.ranks for h in result.hits)
        assert result.to_dict()["score"] == SCORE_MEANINGS["keyword"]
        with pytest.raises(UnsupportedError, match="'similar to' needs one"):
            similar(store, result.hits[0].memory.id)


def test_similar_ranks_by_the_stored_vector_and_leaves_the_memory_out(store) -> None:
    first = search(store, "stripe payments", mode="vector", k=1).hits[0].memory
    result = similar(store, first.id, k=5)
    assert result.requested_mode == "similar" and result.mode == "vector"
    assert result.embedder == f"the stored vector of {first.id} (no embedder)"
    assert len(result.hits) == 5 and first.id not in {h.memory.id for h in result.hits}
    mine = store.embedding_of(first.id)
    for hit in result.hits:
        assert hit.score == pytest.approx(cosine(mine, store.embedding_of(hit.memory.id)), abs=1e-6)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    with pytest.raises(NotFoundError):
        similar(store, "m-no-such-memory")


def test_words_are_casefolded_unicode_words_and_cosine_stays_in_range() -> None:
    assert words_of("Stripe-Webhooks, café NÜRNBERG 42!") == ["stripe", "webhooks", "café", "nürnberg", "42"]
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [-3.0, 0.0]) == pytest.approx(-1.0)
    assert cosine([1.0, 0.0], [0.0, 5.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0  # no direction: no similarity, not a division by zero
