"""The memories a system's retrieval would look at for a question, with the raw signals its rules
score them by: the cosine and the L2 distance of each stored vector to the question's vector
(embedded by the store's embedder, as search does), and the keyword relevance and BM25 search
gives. Each system's rules (agentx.py, synthorg.py, ...) fetch as many as the system does."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from ..model import Memory
from ..query import MemoryQuery
from ..store import MemoryStore
from ..views.search import cosine, keyword_hits, nearest_memories
from .result import Dropped


@dataclass
class Candidate:
    memory: Memory
    cosine: float | None = None  # to the question's vector
    distance: float | None = None  # L2, as sqlite-vec and FAISS measure it (None: no vector read)
    keyword: float | None = None  # search's keyword relevance, 0-1
    bm25: float | None = None
    vector_rank: int | None = None
    keyword_rank: int | None = None


@dataclass
class Gathered:
    candidates: list[Candidate] = field(default_factory=list)
    embedder: str | None = None  # what embedded the question (None: no vector list)
    notices: list[str] = field(default_factory=list)
    embedding: list[float] | None = None  # the question's vector (None: not embedded here)

    @property
    def by_vector(self) -> bool:
        return self.embedder is not None

    def ids(self) -> set[str]:
        return {c.memory.id for c in self.candidates}


def gather(store: MemoryStore, question: str, n: int, query: MemoryQuery = MemoryQuery(statuses=()), *,
           vector: bool = True, keyword: bool = True) -> Gathered:
    """The n nearest memories by vector and the n best by keyword under query (every status by
    default, so what the owner filters out can be shown), one Candidate each."""
    query = replace(query, contains=None)
    out = Gathered()
    found: dict[str, Candidate] = {}
    embedding = None
    if vector:
        ranked, notices, embedders, embedding = nearest_memories(store, question, query, n)
        out.notices += notices
        out.embedding = embedding
        if ranked:
            out.embedder = "; ".join(e.label for e in embedders) or "the collections' own embedders"
        for rank, (memory, distance) in enumerate(ranked, 1):
            stored = store.embedding_of(memory.id) if embedding is not None else None
            candidate = found.setdefault(memory.id, Candidate(memory))
            candidate.vector_rank = rank
            if not _measured(candidate, embedding, stored):
                candidate.cosine = 1.0 - distance
    if keyword:
        for rank, hit in enumerate(keyword_hits(store, question, query, n), 1):
            candidate = found.setdefault(hit.memory.id, Candidate(hit.memory))
            candidate.keyword_rank = rank
            candidate.keyword = hit.signals.get("keyword", hit.score)
            candidate.bm25 = hit.signals.get("bm25")
            if candidate.cosine is None and embedding is not None:  # what the vector list did not reach
                _measured(candidate, embedding, store.embedding_of(hit.memory.id))
    out.candidates = list(found.values())
    return out


def _measured(candidate: Candidate, embedding: Sequence[float] | None, stored: Sequence[float] | None) -> bool:
    if embedding is None or stored is None or len(stored) != len(embedding):
        return False
    candidate.cosine = cosine(embedding, stored)
    candidate.distance = math.dist(embedding, stored)
    return True


def left_out(store: MemoryStore, question: str, n: int, by_vector: bool,
             reason: Callable[[Memory], str]) -> list[Dropped]:
    """What the same search over the whole store (by vector where the system's ran, else by
    keyword) finds that the system's own scope leaves out: each memory reason() gives a reason
    for ("": it is in scope)."""
    found = gather(store, question, n, MemoryQuery(), vector=by_vector, keyword=not by_vector)
    return [Dropped(c.memory, why) for c in found.candidates if (why := reason(c.memory))]


def similarity(candidate: Candidate, by_vector: bool) -> tuple[str, float]:
    """The relevance signal a vector-first system ranks by: the cosine where a vector list ran,
    else search's keyword relevance (what a store with no vectors the system could search offers)."""
    if by_vector:
        return "cosine", candidate.cosine if candidate.cosine is not None else 0.0
    return "keyword", candidate.keyword if candidate.keyword is not None else 0.0
