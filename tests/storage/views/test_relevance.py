"""The relevance scale (storage/views/relevance.py), worked by hand: the keyword share, the vector
relevance from z and from the cosine alone, the near copy, hybrid's rule that a match needs a
quarter of the query's words or one list's match, and the labels a person reads."""

from __future__ import annotations

import math

import pytest
from mnemoscope.storage.views.relevance import (
    MATCH,
    Background,
    VectorFloor,
    background_of,
    content_terms,
    hybrid_relevance,
    idf,
    keyword_relevance,
    stem,
    strength,
)

FLOOR = VectorFloor(z=3.0, cosine=0.25, noise=0.05, fitted="by hand")


def test_content_terms_leave_out_stopwords_and_compare_stems() -> None:
    assert content_terms(["who", "leads", "the", "qa", "for", "s", "webshop"]) == {
        "lead": "lead", "qa": "qa", "webshop": "webshop"}
    assert list(content_terms(["what", "is", "it"])) == ["what", "is", "it"]  # nothing else: kept
    # Counted by what the word and its stem share: "polici" is no prefix of "policy".
    assert content_terms(["policy", "policies"]) == {"polici": "polic"}
    assert stem("payments") == "payment" and stem("leads") == stem("lead") and stem("Lisboa") == "Lisboa"


def test_keyword_relevance_is_the_idf_weighted_share_of_the_query_held() -> None:
    weights = {"stripe": idf(100, 1), "webshop": idf(100, 60)}
    assert weights["stripe"] == pytest.approx(math.log(1 + 99.5 / 1.5))
    assert keyword_relevance(weights, ["stripe", "is", "the", "card"]) == pytest.approx(
        weights["stripe"] / sum(weights.values()))
    assert keyword_relevance(weights, ["webshop", "stripe"]) == pytest.approx(1.0)
    # "stripe" only as the start of a longer word: half of it, however many such words.
    half = 0.5 * weights["stripe"] / sum(weights.values())
    assert keyword_relevance(weights, ["stripes"]) == pytest.approx(half)
    assert keyword_relevance(weights, ["stripes", "striped", "stripey"]) == pytest.approx(half)
    # A one-letter word counts only whole: "c" does not half-match "coffee".
    assert keyword_relevance({"c": 1.0}, ["coffee", "comes", "from", "colombia"]) == 0.0
    assert keyword_relevance({"c": 1.0}, ["the", "c", "language"]) == 1.0
    assert keyword_relevance({}, ["anything"]) == 0.0


def test_vector_relevance_from_the_background() -> None:
    background = Background(mean=0.2, spread=0.05, sampled=100)
    from mnemoscope.storage.views.relevance import vector_relevance

    assert vector_relevance(0.25, FLOOR, background) == pytest.approx(0.0)  # z = 1
    assert vector_relevance(0.35, FLOOR, background) == pytest.approx(MATCH)  # z = 3, the floor
    assert vector_relevance(0.45, FLOOR, background) == pytest.approx(1.0)  # z = 5
    # A high z with a cosine under the embedder's floor is never a match.
    low = Background(mean=0.05, spread=0.02, sampled=100)
    assert vector_relevance(0.20, FLOOR, low) < MATCH
    # Without a background the cosine alone, between the noise (0) and the floor (MATCH).
    assert vector_relevance(0.15, FLOOR, None) == pytest.approx(0.5 * 0.10 / 0.20)
    # A near copy is a match whatever the background.
    crowded = Background(mean=0.7, spread=0.2, sampled=30)
    assert vector_relevance(0.95, FLOOR, crowded) == pytest.approx(MATCH + 0.5 * 0.05 / 0.1)


def test_the_background_is_the_mean_and_spread_of_the_querys_cosines() -> None:
    sample = [[1.0, 0.0]] * 10 + [[0.0, 1.0]] * 10
    found = background_of([1.0, 0.0], sample)
    assert found is not None and (found.mean, found.spread, found.sampled) == (pytest.approx(0.5), pytest.approx(0.5), 20)
    assert background_of([1.0, 0.0], sample[:5]) is None  # too few to tell a spread


def test_a_hybrid_match_needs_a_quarter_of_the_words_or_one_lists_match() -> None:
    assert hybrid_relevance(0.4, 0.45) == pytest.approx(1 - 0.6 * (1 - 0.225))  # both weak, with a keyword share: a match
    assert hybrid_relevance(0.2, 0.45) == 0.45  # under a quarter of the words: the better one alone
    assert hybrid_relevance(None, 0.45) == 0.45 and hybrid_relevance(0.3, None) == 0.3
    assert hybrid_relevance(0.0, 0.49) < MATCH  # no keyword hit and a cosine under the floor: no match
    assert hybrid_relevance(0.9, 0.8) == pytest.approx(1 - 0.1 * 0.6)
    assert hybrid_relevance(None, None) == 0.0


def test_what_a_person_is_told() -> None:
    assert (strength(0.5), strength(0.49), strength(1.0)) == ("strong", "weak", "strong")
