"""The five-layer system's recall (seed 003: Layer 2's "3-tier retrieval: categories -> scoped
facts -> flat fallback", "reinforcement scoring", Layer 1's "high-salience facts auto-surface in
initial context"), over its structured memory DB (formats/facts_db.py).

The seed names the tiers; the agent's memory store (``MemoryStore.search_hierarchical``) fixes
the numbers, and so does this preview:

- tier 1: the 3 categories nearest the question, by 1 / (1 + L2 distance) to each category's
  vector. The agent keeps that vector as the mean of its facts' (recomputed every 10 facts);
  Mnemoscope computes the mean of the vectors of up to 50 of each category's facts;
- tier 2: facts of those categories among the 3 x top_k nearest by vector and the 3 x top_k
  best by keyword, each scored
      combined = 0.7 x vector + 0.3 x keyword, x decay_score
  where vector = 1 / (1 + L2 distance) and keyword = the fact's BM25 min-max normalised over
  the keyword list (1 the best; Mnemoscope's BM25 stands in for FTS5's bm25());
- tier 3, only when tier 2 gives fewer than top_k (10): the same score over the 2 x top_k
  nearest and best of all facts, appended after tier 2's in their own order.

Layer 1's initial context, the 20 facts of highest decay score, is listed beside the hits: the
agent sees them whatever it asks. Workspace markdown is memory_search's, not memory_recall's: a
markdown entry the question finds is listed as dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ..model import Kind, Memory, Status
from ..query import MemoryQuery, Order
from ..store import MemoryStore
from .candidates import Candidate, Gathered, gather
from .result import NEAR_MISSES, Ask, Dropped, RecallResult, Scored, Term, ranked

SYSTEM = "five-layer agent memory"
FORMAT = "facts-db"
DOCUMENTED_BY = ("seed 003 (Memory Layers: Layer 2 3-tier retrieval and reinforcement scoring, Layer 1 salience); "
                 "the agent's MemoryStore.search_hierarchical for the numbers")
RULES = ("tier 1: 3 nearest categories; tier 2: their facts, (0.7 x vector + 0.3 x keyword) x decay_score; "
         "tier 3: the same over all facts when tier 2 gives fewer than top_k")
TOP_K = 10
CATEGORIES = 3
VECTOR_WEIGHT, KEYWORD_WEIGHT = 0.7, 0.3
CATEGORY_SAMPLE = 50
CATEGORY_PAGE = 5_000  # facts read to find each category's members
INITIAL_CONTEXT = 20
FACTS = MemoryQuery(kinds=(Kind.SQLITE,), statuses=())


def owns(store: MemoryStore) -> bool:
    return any(getattr(s, "format", "") == FORMAT for s in store.foreign)


def run(store: MemoryStore, ask: Ask) -> RecallResult:
    k = ask.k or TOP_K
    gathered = gather(store, ask.question, 3 * k, FACTS)
    result = RecallResult(
        system=SYSTEM, rules=RULES, documented_by=DOCUMENTED_BY, documented=True, question=ask.question,
        scope={}, hits=[], notices=list(gathered.notices),
        signal="hybrid" if gathered.by_vector else "keyword", embedder=gathered.embedder,
    )
    facts = [c for c in gathered.candidates if c.memory.status is Status.ACTIVE]
    hits: list[Scored] = []
    rest: list[Scored] = []  # the last tier's scored facts the cut left out: the near misses
    if gathered.by_vector:
        categories = set(nearest_categories(store, gathered, result))
        tier2 = ranked(_scored(facts, 3 * k, lambda c: bool(set(c.memory.tags) & categories),
                               "tier 2: scoped to " + ", ".join(sorted(categories))))
        hits, rest = tier2[:k], tier2[k:]
    else:
        result.notices.append("No vector list ran: tiers 1 and 2 need the question's vector; the flat "
                              "fallback ranks by keyword alone, as the agent does when embedding fails.")
    if len(hits) < k:
        seen = {h.memory.id for h in hits}
        tier3 = [h for h in ranked(_scored(facts, 2 * k, lambda c: True, "tier 3: flat fallback"))
                 if h.memory.id not in seen]
        hits, rest = hits + tier3[: k - len(hits)], tier3[k - len(hits):]
    result.hits, result.near_misses = hits, rest[:NEAR_MISSES]
    result.extra["initial context (highest decay score, given whatever is asked)"] = initial_context(store)
    _markdown_dropped(store, ask.question, k, result)
    return result


def decay_score(memory: Memory) -> float:
    raw = memory.metadata.get("decay_score")
    try:
        return float(raw) if raw is not None else float(memory.salience or 0.0)
    except (TypeError, ValueError):
        return float(memory.salience or 0.0)


def _scored(facts: Sequence[Candidate], n: int, wanted: Callable[[Candidate], bool], found_by: str) -> list[Scored]:
    """The facts among the n nearest by vector or the n best by keyword that wanted keeps, scored as
    the agent scores them: the vector term for those of the vector list, the keyword term (BM25
    min-max normalised over the whole keyword list) for those of the keyword list."""
    listed_by_keyword = [c for c in facts if _ranked_within(c.keyword_rank, n) and c.bm25 is not None]
    keywords = [c.bm25 for c in listed_by_keyword if c.bm25 is not None]
    low, high = (min(keywords), max(keywords)) if keywords else (0.0, 0.0)
    span = high - low if high != low else 1.0
    out = []
    for c in facts:
        by_vector, by_keyword = _ranked_within(c.vector_rank, n), c in listed_by_keyword
        if not (by_vector or by_keyword) or not wanted(c):
            continue
        vector = 1.0 / (1.0 + c.distance) if by_vector and c.distance is not None else 0.0
        keyword = 1.0 - (high - c.bm25) / span if by_keyword and c.bm25 is not None else 0.0
        decay = decay_score(c.memory)
        score = (VECTOR_WEIGHT * vector + KEYWORD_WEIGHT * keyword) * decay
        formula = (f"({VECTOR_WEIGHT:g} x vector {vector:.3f} + {KEYWORD_WEIGHT:g} x keyword {keyword:.3f}) "
                   f"x decay_score {decay:.3f}")
        terms = (Term("vector", vector, VECTOR_WEIGHT), Term("keyword", keyword, KEYWORD_WEIGHT),
                 Term("decay_score", decay))
        out.append(Scored(c.memory, score, terms, formula, found_by=found_by))
    return out


def _ranked_within(rank: int | None, n: int) -> bool:
    return rank is not None and rank <= n


def nearest_categories(store: MemoryStore, gathered: Gathered, result: RecallResult) -> list[str]:
    """Tier 1: the CATEGORIES categories whose mean vector is nearest the question's."""
    import numpy as np

    question = gathered.embedding
    if question is None:
        return []
    members: dict[str, list[str]] = {}
    for fact in store.page(MemoryQuery(kinds=(Kind.SQLITE,)), CATEGORY_PAGE):
        for category in fact.tags:
            if len(members.setdefault(category, [])) < CATEGORY_SAMPLE:
                members[category].append(fact.id)
    nearness: dict[str, float] = {}
    for category, ids in members.items():
        vectors = [v for i in ids if (v := store.embedding_of(i)) is not None and len(v) == len(question)]
        if vectors:
            mean = np.mean(np.asarray(vectors, dtype=np.float64), axis=0)
            nearness[category] = 1.0 / (1.0 + math.dist(question, mean.tolist()))
    chosen = sorted(nearness, key=lambda c: (-nearness[c], c))[:CATEGORIES]
    result.notices.append("Tier 1 chose " + ", ".join(f"{c} ({nearness[c]:.3f})" for c in chosen) + "."
                          if chosen else "Tier 1 found no category with vectors.")
    return chosen


def initial_context(store: MemoryStore) -> list[Scored]:
    facts = store.page(MemoryQuery(kinds=(Kind.SQLITE,), order=Order.SALIENCE), 10 * INITIAL_CONTEXT)
    best = sorted(facts, key=lambda m: (-decay_score(m), m.id))[:INITIAL_CONTEXT]
    return [Scored(m, decay_score(m), (Term("decay_score", decay_score(m)),), f"decay_score {decay_score(m):.3f}",
                   found_by="Layer 1: high salience") for m in best]


def _markdown_dropped(store: MemoryStore, question: str, k: int, result: RecallResult) -> None:
    markdown = gather(store, question, k, MemoryQuery(kinds=(Kind.MARKDOWN,)), vector=False)
    for candidate in markdown.candidates:
        result.dropped.append(Dropped(candidate.memory, "workspace markdown: memory_recall searches the structured "
                                      "DB (memory_search would find it)"))
