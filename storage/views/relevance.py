"""How relevant a search hit is, on one 0-1 scale for every mode: at or above MATCH (0.5) the hit
is a match ("strong"), below it a weak match, shown only under the matches and never as one.

Keyword: the share of the query's information the memory holds. Each content word of the query
(stopwords left out, unless the query is nothing else; words compared by their English Snowball
stems, so "leads" holds "lead") weighs its BM25 idf, so a rare word counts for more than "Dana" in
a store about Dana. A memory holds a word it has whole, half a word it has only as the start of a
longer one ("42" in "420"; never for a one-letter word); a memory's words are its text's and its
tags' (memory.db's full-text index holds both):
  relevance = sum over words w of idf(w) * held(w) / sum over words w of idf(w)
A memory holding half the query's information is a match; BM25 orders equal ones. A query word no
memory holds has the largest idf there is, so "weather on mars" matches nothing in a store that
never says "weather".

Vector: how far the memory's cosine to the query stands above the store's usual cosine to it.
The background is the mean and spread of the query's cosines to a sample of the store's vectors
(up to BACKGROUND_SAMPLE); z = (cosine - mean) / spread. A static or lexical embedder gives every
memory of a store about one project a high cosine to any question about that project, and any
model gives some pair of unrelated texts a cosine that looks high on its own: the spread tells a
memory that answers from the crowd. relevance = 0 at z = 1, MATCH at the embedder's fitted z
floor, 1 at twice the floor's distance from 1; a cosine under the embedder's fitted cosine floor
is never a match, and one of NEAR_COPY (0.9) or more, only a near copy of the text reaches, always
is (a store of a few memories, several of them copies of one text, has a high background). Where no background can be read (too few vectors, or vectors another engine
holds) the cosine alone is scaled the same way between the median unrelated cosine and the
cosine floor.

Each floor is fitted per embedder on tests/quality/fit_pairs.json (40 questions, each with the
fact that answers it, on topics no test store holds): the z floor is the smallest (in steps of
0.25) above the z of every unrelated pair, so that no question has an unrelated fact at or above
it (it keeps 72% of the related pairs for WordLlama at 256 dimensions), and the cosine floor
is the 99th percentile of the unrelated pairs' cosines (fit_floor). tests/quality/test_floors.py
fits them again and holds these constants to what it finds. An embedder with no fitted floor (a
model behind an endpoint) gets UNFITTED, and its results say so.

Hybrid: the better of the two relevances; where both lists found the memory and it holds at least
a quarter of the query's words (KEYWORD_SUPPORT), the vector list's adds to the keyword's:
1 - (1 - keyword) (1 - vector / 2). So a memory with no keyword hit and a cosine under the floor is
never a match, and neither is one that shares only a common word with the query ("Dana").
Equal relevances are ordered by the Reciprocal Rank Fusion (k=60) of the two lists. The
combination and KEYWORD_SUPPORT were chosen on the demo's labelled queries (tests/quality); the
floors they combine were not.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..embedders.base import HASHING_PREFIX

MATCH = 0.5
WEAK_SHOWN = 3  # weak matches listed under the matches (or alone, when nothing matches)
WEAK_LEAST = 0.1  # below it a hit is noise, not even a weak match
KEYWORD_SUPPORT = 0.25  # a hybrid hit's keyword relevance from which the vector list's adds to it
BACKGROUND_SAMPLE = 1_000
BACKGROUND_LEAST = 20  # fewer vectors than this tell no spread worth trusting
BM25_K1 = 1.2
BM25_B = 0.75
PREFIX_WEIGHT = 0.5  # a word the query term only begins ("42" in "420") counts half a whole match
_Z_ZERO = 1.0  # z at which a vector hit's relevance is 0
NEAR_COPY = 0.9  # (not fitted: far above any unrelated pair's cosine, 0.37 at most on the fitting pairs)

STOPWORDS = frozenset(
    "a about after all also am an and any are as at be been before being but by can could did do does doing "
    "done for from had has have having he her here hers him his how i if in into is it its itself just me "
    "more most my no nor not of off on once only or other our ours out over own s same she should so some "
    "such t than that the their theirs them then there these they this those through to too under until up "
    "very was we were what when where which while who whom why will with would you your yours".split()
)


@dataclass(frozen=True)
class VectorFloor:
    """An embedder's floors: z, how many spreads above the store's mean cosine to the query a
    match lies; cosine, the least cosine a match has; noise, the median cosine of unrelated texts
    (relevance 0 when no background is read). fitted: how the floors were found. copy: a cosine
    only a near copy of the text reaches, a match whatever the background (a store whose few
    memories are mostly copies of one text gives them all a high background)."""

    z: float
    cosine: float
    noise: float
    fitted: str
    copy: float = NEAR_COPY


_FITTED = "fitted on tests/quality/fit_pairs.json (see storage/views/relevance.py)"
# (model, dimensions) -> floors; tests/quality/test_floors.py refits them.
FLOORS: dict[tuple[str, int], VectorFloor] = {
    ("wordllama-l2_supercat", 256): VectorFloor(3.25, 0.23, 0.02, _FITTED),
    ("wordllama-l2_supercat", 128): VectorFloor(3.0, 0.27, 0.03, _FITTED),
    ("wordllama-l2_supercat", 64): VectorFloor(2.75, 0.37, 0.04, _FITTED),
    (HASHING_PREFIX + "256", 256): VectorFloor(4.5, 0.28, 0.01, _FITTED),
}
UNFITTED = VectorFloor(3.0, 0.3, 0.0, "not fitted for this embedder: a z floor of 3 and a cosine floor of 0.3",
                       0.97)


def floor_for(model: str | None, dimensions: int | None) -> VectorFloor:
    """The floors fitted for an embedder (the hashing one's 256 for any of its sizes), else UNFITTED."""
    if model is not None and model.startswith(HASHING_PREFIX):
        return FLOORS[(HASHING_PREFIX + "256", 256)]
    return FLOORS.get((model or "", dimensions or 0), UNFITTED)


def fit_floor(questions: object, facts: object, fitted: str = _FITTED) -> VectorFloor:
    """The floors of an embedder from the vectors it gives questions and, row for row, the facts
    that answer them (see the module's docstring): every other fact is an unrelated one."""
    import numpy as np

    q = np.asarray(questions, dtype=np.float64)
    f = np.asarray(facts, dtype=np.float64)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    f /= np.linalg.norm(f, axis=1, keepdims=True)
    cosines = q @ f.T
    unrelated = ~np.eye(len(q), dtype=bool)
    z = (cosines - cosines.mean(axis=1, keepdims=True)) / cosines.std(axis=1, keepdims=True)
    z_floor = math.floor(float(z[unrelated].max()) * 4 + 1) / 4  # (in steps of 0.25)
    return VectorFloor(z_floor, round(float(np.percentile(cosines[unrelated], 99)), 2),
                       round(float(np.median(cosines[unrelated])), 2), fitted)


def content_terms(words: Sequence[str]) -> dict[str, str]:
    """The query words that carry its meaning (stopwords left out, all of them kept when the
    query is nothing else), each once: its stem, and the prefix the store counts the memories
    holding it by (the part the word and its stem share: "policy" and "polici" by "polic", as a
    prefix search finds every memory saying "policy"; the stem is no prefix of the word)."""
    unique = list(dict.fromkeys(words))
    kept = [w for w in unique if w not in STOPWORDS and len(w) > 1] or unique
    terms: dict[str, str] = {}
    for word in kept:
        stemmed = stem(word)
        terms.setdefault(stemmed, os.path.commonprefix([word, stemmed]) or word)
    return terms


def stems(words: Sequence[str]) -> list[str]:
    """Each word's stem: "leads" and "lead" count as one word, "payments" as "payment"."""
    return [stem(w) for w in words]


@functools.lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A word's English Snowball stem (a word in another script comes back as it is)."""
    with _STEMMER_LOCK:  # (a Snowball stemmer keeps its state in the object)
        return str(_stemmer().stemWord(word))


@functools.cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


_STEMMER_LOCK = threading.Lock()


def idf(total: int, holding: int) -> float:
    """BM25's idf of a word that holding of total memories hold."""
    holding = min(holding, total)
    return math.log(1.0 + (total - holding + 0.5) / (holding + 0.5))


def term_weight(tf: float, length: int, average: float) -> float:
    """BM25's weight of a term found tf times in a memory of length words."""
    return tf * (BM25_K1 + 1.0) / (tf + BM25_K1 * (1.0 - BM25_B + BM25_B * length / (average or 1.0)))


def term_frequency(term: str, words: Sequence[str]) -> float:
    """How often a memory's words hold term: whole words count one, words term only begins half
    (a term of one character begins too many words to count that way)."""
    partial = PREFIX_WEIGHT if len(term) > 1 else 0.0
    return sum(1.0 if w == term else partial for w in words if w.startswith(term))


def held(term: str, words: Sequence[str]) -> float:
    """How much of term a memory's words hold: 1 as a whole word, PREFIX_WEIGHT as the start of
    longer ones only (however many), else 0."""
    if term in words:
        return 1.0
    return PREFIX_WEIGHT if len(term) > 1 and any(w.startswith(term) for w in words) else 0.0


def keyword_relevance(weights: dict[str, float], words: Sequence[str]) -> float:
    """The share of the query's information (its terms' idf, weights) a memory's words hold (held)."""
    total = sum(weights.values())
    if not total:
        return 0.0
    return sum(weight * held(term, words) for term, weight in weights.items()) / total


@dataclass(frozen=True)
class Background:
    """The query's cosines to a sample of the store's vectors: their mean and spread."""

    mean: float
    spread: float
    sampled: int

    def z(self, cosine: float) -> float:
        return (cosine - self.mean) / self.spread if self.spread > 0 else 0.0


def background_of(query: Sequence[float], vectors: object) -> Background | None:
    """The background of a query vector among vectors (a 2-D array of a sample of the store's),
    or None when there are too few to tell a spread."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or len(matrix) < BACKGROUND_LEAST or matrix.shape[1] != len(query):
        return None
    q = np.asarray(query, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * (float(np.linalg.norm(q)) or 1.0)
    cosines = (matrix @ q) / np.where(norms > 0, norms, 1.0)
    return Background(float(cosines.mean()), float(cosines.std()), len(matrix))


def vector_relevance(cosine: float, floor: VectorFloor, background: Background | None) -> float:
    """A vector hit's relevance (see the module's docstring)."""
    if background is not None:
        z = background.z(cosine)
        relevance = MATCH * (z - _Z_ZERO) / (floor.z - _Z_ZERO)
    else:
        span = floor.cosine - floor.noise
        relevance = MATCH * (cosine - floor.noise) / span if span > 0 else 0.0
    relevance = min(1.0, max(0.0, relevance))
    if cosine < floor.cosine:
        relevance = min(relevance, math.nextafter(MATCH, 0.0))
    if cosine >= floor.copy:  # a near copy: a match from MATCH at the copy cosine to 1 at 1
        relevance = max(relevance, MATCH + (1.0 - MATCH) * (cosine - floor.copy) / (1.0 - floor.copy))
    return min(1.0, relevance)


def hybrid_relevance(keyword: float | None, vector: float | None) -> float:
    """A memory's relevance from what the keyword and vector lists say of it (None: not in that
    list): the better one, or, where the memory holds at least KEYWORD_SUPPORT of the query's
    words, both together (1 - (1 - keyword) (1 - vector / 2))."""
    found = [r for r in (keyword, vector) if r is not None]
    if not found:
        return 0.0
    best = max(found)
    if keyword is None or vector is None or keyword < KEYWORD_SUPPORT:
        return best
    return max(best, 1.0 - (1.0 - keyword) * (1.0 - vector / 2.0))


def strength(relevance: float) -> str:
    """What a person is told of a hit: "strong" for a match, "weak" under the floor."""
    return "strong" if relevance >= MATCH else "weak"
