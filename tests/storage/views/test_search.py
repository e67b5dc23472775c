"""Search (storage/views/search.py), the one search of the window and the CLI. Its scores are
relevances on one 0-1 scale (storage/views/relevance.py), worked out here again by hand from the
store's own words and vectors: the share of the query's words weighted by idf, how far a cosine
stands above the store's usual one, and both together for hybrid; each hit says which list(s) it
came from and what its score came from."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Kind, Layer, Memory, MemoryQuery, open_store
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder
from mnemoscope.storage.errors import NotFoundError, UnsupportedError
from mnemoscope.storage.model import SourceRef
from mnemoscope.storage.views.relevance import FLOORS, MATCH
from mnemoscope.storage.views.search import SCORE_MEANINGS, cosine, keyword_hits, rrf, search, similar, words_of

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


def _idf(store, prefix: str) -> float:
    """BM25's idf of a word, counted here by hand: the memories one of whose words (text or tags)
    starts with prefix, among every memory the search could list."""
    memories = store.page(MemoryQuery(), 10_000)
    holding = sum(any(w.startswith(prefix) for w in words_of(" ".join([m.content, *m.tags]))) for m in memories)
    return math.log(1 + (len(memories) - holding + 0.5) / (holding + 0.5))


def test_keyword_relevance_is_the_share_of_the_querys_words_weighted_by_rarity(store) -> None:
    both = store.add_memory("Stripe payments webhooks are retried for three days.", channel="webshop")
    one = store.add_memory("Refunds reach the payments ledger overnight.", channel="webshop")
    result = search(store, "the stripe payments", mode="keyword", k=20)  # "the": a stopword, left out
    scores = {h.memory.id: h.score for h in result.hits}
    assert result.mode == "keyword" and result.to_dict()["score"] == SCORE_MEANINGS["keyword"]
    stripe, payments = _idf(store, "stripe"), _idf(store, "payment")  # "payments" counted by its stem's prefix
    assert scores[both] == pytest.approx(1.0)
    one_share = payments / (stripe + payments)
    candidates = {h.memory.id: h.score for h in keyword_hits(store, "the stripe payments", MemoryQuery(), 30)}
    assert candidates[one] == pytest.approx(one_share, rel=1e-6)
    assert one_share < 0.5 and one not in [h.memory.id for h in result.hits if h.match]
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    assert result.hits[0].strength == "strong" and result.hits[0].signals["bm25"] > 0


def test_a_word_whose_stem_is_no_prefix_of_it_is_counted_by_what_they_share(store) -> None:
    """"policy" stems to "polici": the memories saying "policy" are counted by "polic", so a word
    forty memories hold weighs what it should, and the two memories about refunds come first."""
    for n in range(40):
        store.add_memory(f"Travel policy note {n}: economy class for trips under six hours.", channel="_global")
    refunds = [store.add_memory("Refund policy: thirty days, receipt needed.", channel="webshop"),
               store.add_memory("Refunds go back to the card they came from.", channel="webshop")]
    result = search(store, "refund policy", mode="keyword", k=10)
    assert [h.memory.id for h in result.hits[:2]] == refunds
    assert all("refund" in h.memory.content.lower() for h in result.hits if h.match)


def test_a_memory_found_by_its_tags_is_a_hit(store) -> None:
    tagged = store.add_memory("Cluster notes for the platform team.", channel="_global", tags=["kubernetes"])
    result = search(store, "kubernetes", mode="keyword", k=10)
    assert [h.memory.id for h in result.hits if h.match] == [tagged]


def test_keyword_relevance_weighs_rare_words_above_common_ones(store) -> None:
    """idf: "stripe" is in two memories of the store, "webshop" in dozens: holding "stripe" is a
    match, holding "webshop" alone is not."""
    rare = store.add_memory("Stripe is the card processor.", channel="_global")
    common = store.add_memory("The webshop is the shop on the web.", channel="_global")
    candidates = {h.memory.id: h for h in keyword_hits(store, "stripe webshop", MemoryQuery(), 100)}
    assert candidates[rare].score > MATCH > candidates[common].score
    shown = {h.memory.id for h in search(store, "stripe webshop", mode="keyword", k=100).hits if h.match}
    assert rare in shown and common not in shown


def test_keyword_search_respects_the_query_filters(store) -> None:
    in_global = store.add_memory("Stripe payments for the personal blog.", channel="_global")
    hits = search(store, "stripe payments", mode="keyword", k=20, query=MemoryQuery(channels=("webshop",))).hits
    assert hits and all(h.memory.channel == "webshop" for h in hits)
    assert in_global not in {h.memory.id for h in hits}


def _background(store, query: list[float]) -> tuple[float, float]:
    """The mean and spread of the query's cosines to every vector of the demo (41, under the sample)."""
    cosines = [cosine(query, store.embedding_of(m.id)) for m in store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1000)]
    mean = sum(cosines) / len(cosines)
    return mean, math.sqrt(sum((c - mean) ** 2 for c in cosines) / len(cosines))


def test_vector_relevance_is_how_far_the_cosine_stands_above_the_stores_usual_one(store) -> None:
    result = search(store, "photos of items", mode="vector", k=10)
    assert result.mode == "vector" and result.hits and result.floor == FLOORS[(LOCAL_MODEL, 256)].fitted
    query = LocalEmbedder().embed(["photos of items"])[0]
    mean, spread = _background(store, query)
    floor = FLOORS[(LOCAL_MODEL, 256)]
    for hit in result.hits:
        similarity = cosine(query, store.embedding_of(hit.memory.id))
        z = (similarity - mean) / spread
        expected = min(1.0, max(0.0, 0.5 * (z - 1) / (floor.z - 1)))
        if similarity < floor.cosine:
            expected = min(expected, 0.4999)
        if similarity >= floor.copy:
            expected = max(expected, 0.5 + 0.5 * (similarity - floor.copy) / (1 - floor.copy))
        assert hit.signals["cosine"] == pytest.approx(similarity, abs=1e-5)
        assert hit.signals["z"] == pytest.approx(z, abs=1e-3)
        assert hit.score == pytest.approx(expected, abs=1e-3) and hit.to_dict()["from"] == ["vector"]
    # The answer shares no word with the question; it is the one match.
    assert [h.memory.content for h in result.hits if h.match] == [
        "webshop product images are served from an S3 bucket via CloudFront."]


def test_hybrid_relevance_combines_the_lists_where_the_memory_holds_a_quarter_of_the_words(store) -> None:
    text = "how does the webshop take payments"
    result = search(store, text, mode="hybrid", k=10)
    keyword = {h.memory.id: h.score for h in keyword_hits(store, text, MemoryQuery(), 30)}
    for hit in result.hits:
        k, v = hit.signals.get("keyword"), hit.signals.get("vector")
        assert k is None or k == pytest.approx(keyword[hit.memory.id])
        if k is not None and v is not None and k >= 0.25:
            expected = max(k, v, 1 - (1 - k) * (1 - v / 2))
        else:
            expected = max(x for x in (k, v) if x is not None)
        assert hit.score == pytest.approx(expected, abs=1e-9)
        assert (hit.score >= MATCH) == hit.match
        if hit.match:  # a keyword share of a quarter, or one list's match
            assert (k or 0) >= 0.25 or max(k or 0, v or 0) >= MATCH
    top = result.hits[0]
    assert top.memory.content.startswith("webshop payments go through Stripe")
    assert top.to_dict()["from"] == ["keyword", "vector"] and top.match
    assert set(top.signals) == {"keyword", "bm25", "vector", "cosine", "z", "rrf"}
    assert top.signals["keyword"] < MATCH and top.signals["vector"] < MATCH  # a match only as both


@pytest.mark.parametrize("mode", ["keyword", "vector", "hybrid"])
def test_a_query_about_nothing_the_store_holds_matches_nothing_and_says_so(store, mode: str) -> None:
    result = search(store, "weather on mars", mode=mode, k=10)
    assert result.matched == 0 and not any(h.match for h in result.hits)
    assert len(result.hits) <= 3 and all(h.strength == "weak" for h in result.hits)
    assert result.notices[-1].startswith("No memories match 'weather on mars'")


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
    first = search(store, "public API stability decision", mode="vector", k=1).hits[0].memory
    result = similar(store, first.id, k=5)
    assert result.requested_mode == "similar" and result.mode == "vector"
    assert result.embedder == f"the stored vector of {first.id} (no embedder)"
    assert first.id not in {h.memory.id for h in result.hits}
    # The other decisions to keep the API stable are its matches.
    assert result.matched >= 2 and all("keep the public API stable" in h.memory.content for h in result.hits if h.match)
    mine = store.embedding_of(first.id)
    for hit in result.hits:
        assert hit.signals["cosine"] == pytest.approx(cosine(mine, store.embedding_of(hit.memory.id)), abs=1e-6)
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    with pytest.raises(NotFoundError):
        similar(store, "m-no-such-memory")


def test_words_are_casefolded_unicode_words_and_cosine_stays_in_range() -> None:
    assert words_of("Stripe-Webhooks, café NÜRNBERG 42!") == ["stripe", "webhooks", "café", "nürnberg", "42"]
    assert cosine([1.0, 0.0], [2.0, 0.0]) == pytest.approx(1.0)
    assert cosine([1.0, 0.0], [-3.0, 0.0]) == pytest.approx(-1.0)
    assert cosine([1.0, 0.0], [0.0, 5.0]) == pytest.approx(0.0)
    assert cosine([0.0, 0.0], [1.0, 1.0]) == 0.0  # no direction: no similarity, not a division by zero


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_a_pasted_page_is_searched_for_by_its_first_words_in_moments(store, mode: str) -> None:
    """5,000 words once cost every part a count per word (80 s); a 100,000-character word was past
    SQLite's longest LIKE pattern. Both answer within a second or two, the first with a notice."""
    import time

    from mnemoscope.storage.views.search import MAX_QUERY_WORDS

    started = time.monotonic()
    result = search(store, " ".join(["webshop", "release"] * 2_500), mode=mode)
    assert time.monotonic() - started < 5
    assert result.hits and f"first {MAX_QUERY_WORDS} words" in " ".join(result.notices)
    result = search(store, "webshop " + "x" * 100_000, mode=mode)
    assert result.hits and not store.problems()  # (Chroma's part read: not taken for damaged)
