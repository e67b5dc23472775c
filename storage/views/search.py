"""Search: keyword (SQLite FTS5 and per-store text match), vector (Chroma) and
hybrid (Reciprocal Rank Fusion, k=60). The window and the CLI both call search().

Each store finds its keyword candidates with its own engine; every candidate is then scored
with one BM25 (k1 1.2, b 0.75) so that lists from different engines compare and merge:
  score = sum over query words w of idf(w) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))
  tf: the memory's words equal to w, plus half of those that only start with w (FTS5's prefix
  match), len: its word count, avglen: the candidates' mean word count,
  idf(w) = ln(1 + (N - n + 0.5) / (n + 0.5)) with N the memories and n those holding a word that
  starts with w: from memory.db's FTS vocabulary (index-wide), else counted under the filters.
Vector scores are cosine similarities of the query's vector and each memory's stored one;
hybrid scores are the RRF sums divided by their maximum (first in every list), so 0..1.

A text query is embedded by the store's embedder (StoreSettings: an OpenAI-compatible
endpoint, the local model, the hashing one), else by the one a collection records when it
runs here; one whose model or dimension is not the vectors' is refused (EmbedderMismatchError).
When none runs, vector and hybrid searches fall back to keyword search and say so. Every
result names the embedder that ranked its vector list.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..embedders.base import Embedder, check_match
from ..errors import NotFoundError, UnsupportedError
from ..model import Kind, Memory
from ..query import MemoryQuery
from ..store import MemoryStore

RRF_K = 60
MODES = ("keyword", "vector", "hybrid")
BM25_K1 = 1.2
BM25_B = 0.75
PREFIX_WEIGHT = 0.5  # a word the query term only begins ("42" in "420") counts half a whole match
SCORE_MEANINGS = {
    "keyword": "BM25 relevance of the query's words (higher is better, 0: no whole word matched)",
    "vector": "cosine similarity of the query's vector and the memory's (-1 to 1)",
    "hybrid": "Reciprocal Rank Fusion (k=60) of the keyword and vector lists, normalised to 0-1",
}
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float
    ranks: dict[str, int]  # the list(s) the hit came from, and its rank in each

    def to_dict(self) -> dict[str, Any]:
        return {**self.memory.to_dict(), "score": round(self.score, 6), "ranks": self.ranks,
                "from": sorted(self.ranks)}


@dataclass
class SearchResult:
    requested_mode: str
    mode: str
    hits: list[Hit]
    notices: list[str] = field(default_factory=list)
    # What ranked the vector list: the embedder's label (None: no vector list was used).
    embedder: str | None = None

    @property
    def score_meaning(self) -> str:
        return SCORE_MEANINGS[self.mode]

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested_mode": self.requested_mode,
            "mode": self.mode,
            "score": self.score_meaning,
            "embedder": self.embedder,
            "notices": self.notices,
            "hits": [h.to_dict() for h in self.hits],
        }


def rrf(ranked_lists: Mapping[str, Sequence[Memory]], k: int = RRF_K) -> list[Hit]:
    """Fuse ranked lists: score(d) = sum over lists of 1 / (k + rank)."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    memories: dict[str, Memory] = {}
    for name, ranked in ranked_lists.items():
        for rank, memory in enumerate(ranked, start=1):
            scores[memory.id] = scores.get(memory.id, 0.0) + 1.0 / (k + rank)
            ranks.setdefault(memory.id, {})[name] = rank
            memories.setdefault(memory.id, memory)
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [Hit(memories[i], scores[i], ranks[i]) for i in order]


def _canonical(store: MemoryStore, memory: Memory) -> Memory:
    """A vector copy of a memory.db memory stands for that memory."""
    return store.find(memory.id) or memory if memory.source.kind is Kind.CHROMA else memory


def query_embedders(store: MemoryStore) -> tuple[list[Embedder], list[str]]:
    """The embedders a text query is embedded with, checked against the vectors they rank:
    the store's own (one, for every collection), else those the collections record that run
    here. Empty, with a notice saying why, when none runs."""
    notices: list[str] = []
    settings = store.settings
    if settings.embedder:
        configured = store.configured_embedder()
        if configured is not None:
            check_match(configured, store.recorded_embedders())
            return [configured], notices
        notices.append(f"This store's embedder {settings.embedder!r} does not run here (no endpoint is configured).")
    vector_sources = store.vector_sources()
    collections = [(v, n) for v in vector_sources for n in v.collections()]
    found: dict[tuple[str, int | None], Embedder] = {}
    for v, n in collections:
        embedder = v.embedder_for(n)
        if embedder is not None:
            found.setdefault((embedder.name, embedder.dimensions), embedder)
    if not found:
        infos = [v.embedding_function_info(n) for v, n in collections]
        recorded = sorted({str(i["recorded_embedding_function"]) for i in infos})
        notices.append(
            "No embedder runs offline for these collections (recorded: "
            + ", ".join(recorded)
            + "); text queries cannot be embedded. Set one with 'mnemoscope embedder PATH', use keyword "
            "search, or 'similar to' a stored memory."
        )
        return [], notices
    if len(found) == 1:
        check_match(next(iter(found.values())), store.recorded_embedders())
    return list(found.values()), notices


def words_of(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def keyword_hits(store: MemoryStore, text: str, query: MemoryQuery, k: int) -> list[Hit]:
    """The stores' keyword candidates, scored by one BM25 (see the module's docstring), best first."""
    lists = store.keyword_lists(text, query, k)
    candidates: dict[str, Memory] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ranked in lists.items():
        for rank, memory in enumerate(ranked, start=1):
            candidates.setdefault(memory.id, memory)
            ranks.setdefault(memory.id, {})[name] = rank
    if not candidates:
        return []
    terms = list(dict.fromkeys(words_of(text)))
    scores = bm25_scores(store, terms, query, list(candidates.values()))
    first_rank = {i: min(r.values()) for i, r in ranks.items()}
    order = sorted(candidates, key=lambda i: (-scores[i], first_rank[i], i))
    return [Hit(candidates[i], scores[i], ranks[i]) for i in order[:k]]


def bm25_scores(store: MemoryStore, terms: Sequence[str], query: MemoryQuery,
                memories: Sequence[Memory]) -> dict[str, float]:
    """Each memory's BM25 score for terms, with document frequencies counted by the store."""
    total, frequencies = store.document_frequencies(terms, query)
    total = max(total, len(memories))
    idf = {}
    for term in terms:
        n = min(frequencies[term], total)
        idf[term] = math.log(1.0 + (total - n + 0.5) / (n + 0.5))
    tokens = {m.id: words_of(m.content) for m in memories}
    avg = sum(len(t) for t in tokens.values()) / len(tokens) or 1.0
    scores: dict[str, float] = {}
    for memory in memories:
        words = tokens[memory.id]
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len(words) / avg)
        score = 0.0
        for term in terms:
            tf = sum(1.0 if w == term else PREFIX_WEIGHT for w in words if w.startswith(term))
            score += idf[term] * tf * (BM25_K1 + 1.0) / (tf + norm) if tf else 0.0
        scores[memory.id] = score
    return scores


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return max(-1.0, min(1.0, dot / norm)) if norm else 0.0


def vector_list(
    store: MemoryStore, text: str | None, query: MemoryQuery, k: int, embedding: list[float] | None = None
) -> tuple[list[Memory], list[str]]:
    ranked, notices, _label, _embedding = _vector_list(store, text, query, k, embedding)
    return [m for m, _d in ranked], notices


def vector_hits(store: MemoryStore, ranked: Sequence[tuple[Memory, float]], embedding: Sequence[float] | None) -> list[Hit]:
    """Nearest memories with their cosine similarity to the query's vector (from the stored
    vectors; where the query was embedded per collection, 1 - the collection's distance)."""
    hits = []
    for rank, (memory, distance) in enumerate(ranked, 1):
        stored = store.embedding_of(memory.id) if embedding is not None else None
        score = cosine(embedding, stored) if embedding is not None and stored else 1.0 - distance
        hits.append(Hit(memory, score, {"vector": rank}))
    return hits


def _vector_list(
    store: MemoryStore, text: str | None, query: MemoryQuery, k: int, embedding: list[float] | None = None
) -> tuple[list[tuple[Memory, float]], list[str], str | None, list[float] | None]:
    """The k nearest memories with their distances, the notices, the label of the embedder that
    embedded text, and the query's vector (None: embedded per collection)."""
    notices: list[str] = []
    vector_sources = store.vector_sources()
    if not vector_sources:
        return [], ["This store has no vector collection; vector search is not available."], None, None
    label = None
    if embedding is None:
        embedders, notices = query_embedders(store)
        if not embedders:
            return [], notices, None, None
        label = "; ".join(e.label for e in embedders)
        if len(embedders) == 1 and text is not None:
            # Embedded once here, for every collection (mem0's and a crew's too, which record
            # no embedder of their own); several recorded embedders embed per collection.
            unknown = embedders[0].dimensions is None  # an endpoint told no dimensions: known now
            embedding = embedders[0].embed([text])[0]
            if unknown:
                check_match(embedders[0], store.recorded_embedders())
    vector_query = MemoryQuery(
        channels=query.channels, layers=query.layers, statuses=query.statuses, order=query.order
    )
    # Ask each source for k nearest first, and for more only if copies of one memory, or
    # memories whose owner's status the query leaves out, left fewer than k: every hit read is
    # a record fetched and a Memory built.
    wanted = k
    while True:
        found = sorted(
            (hit for v in vector_sources for hit in v.vector_search(embedding, text, vector_query, wanted)),
            key=lambda hit: hit[1],
        )
        out: list[tuple[Memory, float]] = []
        seen: set[str] = set()
        for memory, distance in found:
            memory = _canonical(store, memory)
            if memory.id in seen or not _kept(memory, query):
                continue
            seen.add(memory.id)
            out.append((memory, distance))
        if len(out) >= k or len(found) < wanted:  # enough, or every source gave all it has
            return out[:k], notices, label, embedding
        wanted *= 4


def _kept(memory: Memory, query: MemoryQuery) -> bool:
    """The filters a vector search cannot hand its sources, applied to what they found."""
    if query.statuses and memory.status not in query.statuses:
        return False
    if not query.wants_kind(memory.source.kind):
        return False
    if query.since is not None and memory.created_at < query.since:
        return False
    if query.until is not None and memory.created_at >= query.until:
        return False
    ids = getattr(query, "ids", None)
    return not ids or memory.id in ids


def search(
    store: MemoryStore,
    text: str,
    *,
    mode: str = "hybrid",
    k: int = 10,
    query: MemoryQuery = MemoryQuery(),
) -> SearchResult:
    """The one search of the window and the CLI: the same text, mode, k and query give the same
    hits, in the same order, with the same scores (SCORE_MEANINGS says what each mode's means).
    Filtered by channel on a store whose agent also retrieves other channels, a notice says so."""
    result = _ranked(store, text, mode, k, query)
    note = retrieval_note(store, query.channels)
    if note:
        result.notices.append(note)
    return result


def retrieval_note(store: MemoryStore, channels: Sequence[str]) -> str:
    """What a search filtered to channels leaves out that the owning agent would also be given
    (AgentX's retrieval always merges the active channel with _global); "" when nothing."""
    notes = []
    for source in store.foreign:
        merged = [c for c in getattr(source, "retrieval_channels", ()) if c not in channels]
        if channels and merged:
            notes.append(f"{source.label}'s retrieval always merges the active channel with {', '.join(merged)}: "
                         f"the agent would also be given {', '.join(merged)} (this search stays filtered to "
                         f"{', '.join(channels)}).")
    return " ".join(dict.fromkeys(notes))


def _ranked(store: MemoryStore, text: str, mode: str, k: int, query: MemoryQuery) -> SearchResult:
    if mode not in MODES:
        raise UnsupportedError(f"Unknown search mode {mode!r}; use one of {', '.join(MODES)}.")
    query = replace(query, contains=None)
    keyword = keyword_hits(store, text, query, k) if mode != "vector" else []
    if mode == "keyword":
        return SearchResult(mode, "keyword", keyword)
    vectors, notices, label, embedding = _vector_list(store, text, query, k)
    if notices and not vectors:
        if mode == "vector":
            keyword = keyword_hits(store, text, query, k)
        notices.append("Showing keyword results instead.")
        return SearchResult(mode, "keyword", keyword, notices)
    if mode == "vector":
        return SearchResult(mode, "vector", vector_hits(store, vectors, embedding), notices, label)
    lists = {"keyword": [h.memory for h in keyword], "vector": [m for m, _d in vectors]}
    best = sum(1.0 / (RRF_K + 1) for ranked in lists.values() if ranked) or 1.0
    fused = [Hit(h.memory, h.score / best, h.ranks) for h in rrf(lists)[:k]]
    return SearchResult(mode, "hybrid", fused, notices, label)


def similar(store: MemoryStore, memory_id: str, *, k: int = 10, query: MemoryQuery = MemoryQuery()) -> SearchResult:
    """Memories whose stored vectors are nearest to this memory's vector (no embedder needed)."""
    if not store.vector_sources():
        raise UnsupportedError("This store has no vector collection; 'similar to' needs one.")
    memory = store.get(memory_id)
    embedding = store.embedding_of(memory.id)
    if embedding is None:
        raise NotFoundError(f"{memory_id} has no stored vector to compare with.")
    ranked, notices, _label, _embedding = _vector_list(store, None, query, k + 1, embedding=embedding)
    ranked = [(m, d) for m, d in ranked if m.id != memory_id][:k]
    hits = vector_hits(store, ranked, embedding)
    notices += [note] if (note := retrieval_note(store, query.channels)) else []
    return SearchResult("similar", "vector", hits, notices, f"the stored vector of {memory_id} (no embedder)")
