"""Search: keyword (SQLite FTS5 and per-store text match), vector (Chroma and the vector stores
of other tools) and hybrid. The window and the CLI both call search().

Each store finds its keyword candidates with its own engine, and its vector candidates with its
own index; every candidate then gets one relevance on a 0-1 scale (relevance.py says how for each
mode): at or above 0.5 it is a match ("strong"), below it a weak match. A result lists its
matches, best first, up to k; under them, while room is left, at most three weak matches, labelled
so; when nothing matches it says so ("No memories match ...") instead of ranking noise as hits.
Each hit keeps the signals its score came from (BM25, the share of the query's words, the cosine
and how far it stands above the store's usual cosine, the reciprocal rank fusion of both lists).

A text query is embedded by the store's embedder (StoreSettings: an OpenAI-compatible
endpoint, the local model, the hashing one), else by the one a collection records when it
runs here; one whose model or dimension is not the vectors' is refused (EmbedderMismatchError).
When none runs, vector and hybrid searches fall back to keyword search and say so. Every
result names its mode and the embedder that ranked its vector list, and whether that
embedder's floor was fitted.
"""

from __future__ import annotations

import itertools
import math
import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..embedders.base import Embedder, check_match
from ..errors import NotFoundError, UnsupportedError
from ..model import Kind, Memory
from ..query import MemoryQuery
from ..store import MemoryStore
from .relevance import (
    BACKGROUND_LEAST,
    BACKGROUND_SAMPLE,
    MATCH,
    UNFITTED,
    WEAK_LEAST,
    WEAK_SHOWN,
    Background,
    VectorFloor,
    background_of,
    content_terms,
    floor_for,
    hybrid_relevance,
    idf,
    keyword_relevance,
    stems,
    strength,
    term_frequency,
    term_weight,
    vector_relevance,
)

RRF_K = 60
MODES = ("keyword", "vector", "hybrid")
STORED_SAMPLE = 200  # memories whose vectors are read one by one for a background no collection gives
CANDIDATES = 30  # keyword candidates read before relevance orders them: a match its engine ranks low still shows
MAX_QUERY_WORDS = 64  # a longer query (a pasted page) is searched for by its first words: each word costs every part
_SCALE = "relevance 0-1, 0.5 and above a match"
SCORE_MEANINGS = {
    "keyword": f"{_SCALE}: the share of the query's words, each weighted by how rare it is, the memory holds",
    "vector": f"{_SCALE}: how far the memory's cosine to the query stands above the store's usual cosine to it",
    "hybrid": f"{_SCALE}: the better of the keyword and the vector relevance, raised where both lists agree",
}
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float  # relevance, 0-1 (relevance.py)
    ranks: dict[str, int]  # the list(s) the hit came from, and its rank in each
    signals: dict[str, float] = field(default_factory=dict)  # what the score came from

    @property
    def match(self) -> bool:
        return self.score >= MATCH

    @property
    def strength(self) -> str:
        return strength(self.score)

    def to_dict(self) -> dict[str, Any]:
        return {**self.memory.to_dict(), "score": round(self.score, 4), "strength": self.strength,
                "signals": {name: round(value, 4) for name, value in self.signals.items()},
                "ranks": self.ranks, "from": sorted(self.ranks)}


@dataclass
class SearchResult:
    requested_mode: str
    mode: str
    hits: list[Hit]  # the matches, best first, then the weak matches shown under them
    notices: list[str] = field(default_factory=list)
    # What ranked the vector list: the embedder's label (None: no vector list was used).
    embedder: str | None = None
    floor: str | None = None  # how the vector list's floor was set (None: no vector list)

    @property
    def score_meaning(self) -> str:
        return SCORE_MEANINGS[self.mode]

    @property
    def matched(self) -> int:
        """How many hits are matches (the rest are weak matches shown under them)."""
        return sum(1 for h in self.hits if h.match)

    @property
    def weak(self) -> int:
        """How many weak matches are shown under the matches."""
        return len(self.hits) - self.matched

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested_mode": self.requested_mode,
            "mode": self.mode,
            "score": self.score_meaning,
            "embedder": self.embedder,
            "floor": self.floor,
            "matched": self.matched,
            "notices": self.notices,
            "hits": [h.to_dict() for h in self.hits],
        }


def counted(n: int, what: str = "match") -> str:
    """n matches, or weak matches (what): "1 match", "3 weak matches"."""
    return f"{n:,} {what}{'' if n == 1 else 'es'}"


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
    """The stores' keyword candidates, each with its relevance (relevance.py) and BM25 (see
    bm25), best first."""
    lists = store.keyword_lists(text, query, k)
    candidates: dict[str, Memory] = {}
    ranks: dict[str, dict[str, int]] = {}
    for name, ranked in lists.items():
        for rank, memory in enumerate(ranked, start=1):
            candidates.setdefault(memory.id, memory)
            ranks.setdefault(memory.id, {})[name] = rank
    if not candidates:
        return []
    scored = bm25(store, content_terms(words_of(text)), query, list(candidates.values()))
    first_rank = {i: min(r.values()) for i, r in ranks.items()}
    order = sorted(candidates, key=lambda i: (-scored[i][0], -scored[i][1], first_rank[i], i))
    return [Hit(candidates[i], scored[i][0], ranks[i], {"keyword": scored[i][0], "bm25": scored[i][1]})
            for i in order[:k]]


def bm25(store: MemoryStore, terms: Mapping[str, str], query: MemoryQuery,
         memories: Sequence[Memory]) -> dict[str, tuple[float, float]]:
    """Each memory's keyword relevance and BM25 score for terms (stem -> the prefix its memories
    are counted by, relevance.content_terms; k1 1.2, b 0.75; a word a stem only begins counts
    half; idf from document frequencies the store counts: memory.db's FTS vocabulary index-wide,
    else under the query's filters), over the stems of each memory's text and tags:
      bm25 = sum over terms t of idf(t) * tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen))"""
    prefixes = sorted(set(terms.values()))
    total, frequencies = store.document_frequencies(prefixes, query)
    total = max(total, len(memories))
    weights = {term: idf(total, frequencies[prefix]) for term, prefix in terms.items()}
    tokens = {m.id: stems(words_of(" ".join([m.content, *m.tags]))) for m in memories}
    average = sum(len(t) for t in tokens.values()) / len(tokens) or 1.0
    scored: dict[str, tuple[float, float]] = {}
    for memory in memories:
        words = tokens[memory.id]
        score = 0.0
        for term in weights:
            tf = term_frequency(term, words)
            score += weights[term] * term_weight(tf, len(words), average) if tf else 0.0
        scored[memory.id] = (keyword_relevance(weights, words), score)
    return scored


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return max(-1.0, min(1.0, dot / norm)) if norm else 0.0


def vector_list(
    store: MemoryStore, text: str | None, query: MemoryQuery, k: int, embedding: list[float] | None = None
) -> tuple[list[Memory], list[str]]:
    ranked, notices, _embedders, _embedding = nearest_memories(store, text, query, k, embedding)
    return [m for m, _d in ranked], notices


def vector_hits(store: MemoryStore, ranked: Sequence[tuple[Memory, float]], embedding: Sequence[float] | None,
                floor: VectorFloor = UNFITTED) -> list[Hit]:
    """Nearest memories with their relevance (relevance.py), from their cosine to the query's
    vector (from the stored vectors; where the query was embedded per collection, 1 - the
    collection's distance) and the store's background for it, best first."""
    background = _background(store, embedding) if embedding is not None and ranked else None
    hits = []
    for rank, (memory, distance) in enumerate(ranked, 1):
        stored = store.embedding_of(memory.id) if embedding is not None else None
        similarity = cosine(embedding, stored) if embedding is not None and stored else 1.0 - distance
        signals = {"cosine": similarity}
        if background is not None:
            signals["z"] = background.z(similarity)
        relevance = vector_relevance(similarity, floor, background)
        hits.append(Hit(memory, relevance, {"vector": rank}, {"vector": relevance, **signals}))
    return sorted(hits, key=lambda h: -h.score)


# Per store: (collection, kind, dimension) -> (its count when read, a copy of its first vectors);
# ("stored", dimension) -> (the store's change token, the vectors read one by one).
_BACKGROUNDS: weakref.WeakKeyDictionary[MemoryStore, dict[tuple[Any, ...], tuple[Any, Any]]] = (
    weakref.WeakKeyDictionary())


def _background(store: MemoryStore, embedding: Sequence[float]) -> Background | None:
    """The query vector's cosines to a sample of the store's vectors of its dimension: the first
    BACKGROUND_SAMPLE of each collection, read again when its count changes."""
    import numpy as np

    samples = _BACKGROUNDS.setdefault(store, {})
    dimension = len(embedding)
    rows = []
    collections, _notes = store.vector_collections()
    for collection in collections:
        if collection.dimension != dimension or collection.count < 1:
            continue
        key: tuple[Any, ...] = (collection.name, collection.kind, dimension)
        if samples.get(key, (None, None))[0] != collection.count:
            _ids, matrix = next(iter(collection.batches(BACKGROUND_SAMPLE)), ([], None))
            sample = np.array(matrix, dtype=np.float32) if matrix is not None else np.zeros((0, dimension))
            samples[key] = (collection.count, sample.reshape(len(sample), dimension))  # a copy: no view of the whole
        rows.append(samples[key][1])
    if sum(len(r) for r in rows) < BACKGROUND_LEAST:  # vectors no collection hands out (Qdrant, pgvector, ...)
        key = ("stored", dimension)
        token = store.change_token()
        if samples.get(key, (None, None))[0] != token:
            samples[key] = (token, _stored_sample(store, dimension))
        rows = [samples[key][1]]
    return background_of(embedding, np.concatenate(rows)[:BACKGROUND_SAMPLE])


def _stored_sample(store: MemoryStore, dimension: int) -> Any:
    """The stored vectors (of dimension) of the first STORED_SAMPLE memories of the store's
    vector sources, read one by one: the background where no collection hands them out."""
    import numpy as np

    vectors = []
    memories = store.page(MemoryQuery(statuses=()), STORED_SAMPLE) if store.vector_sources() else []
    for memory in memories:
        stored = store.embedding_of(memory.id)
        if stored is not None and len(stored) == dimension:
            vectors.append(stored)
    return np.asarray(vectors, dtype=np.float32).reshape(len(vectors), dimension)


def nearest_memories(
    store: MemoryStore, text: str | None, query: MemoryQuery, k: int, embedding: list[float] | None = None
) -> tuple[list[tuple[Memory, float]], list[str], list[Embedder], list[float] | None]:
    """The k nearest memories with their distances, the notices, the embedders that embedded
    text, and the query's vector (None: embedded per collection)."""
    notices: list[str] = []
    vector_sources = store.vector_sources()
    if not vector_sources:
        return [], ["This store has no vector collection; vector search is not available."], [], None
    embedders: list[Embedder] = []
    if embedding is None:
        embedders, notices = query_embedders(store)
        if not embedders:
            return [], notices, [], None
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
            return out[:k], notices, embedders, embedding
        wanted *= 4


def _floor(embedders: Sequence[Embedder]) -> VectorFloor:
    """The vector floor of the one embedder that embedded the query (UNFITTED for several)."""
    return floor_for(embedders[0].name, embedders[0].dimensions) if len(embedders) == 1 else UNFITTED


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
    words = list(itertools.islice(_WORD.finditer(text), MAX_QUERY_WORDS + 1))
    cut = len(words) > MAX_QUERY_WORDS
    if cut:
        text = text[: words[MAX_QUERY_WORDS - 1].end()]
    result = _ranked(store, text, mode, k, query)
    if cut:
        result.notices.append(f"Only the query's first {MAX_QUERY_WORDS} words were searched for.")
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
    wanted = max(k, CANDIDATES)
    keyword = keyword_hits(store, text, query, wanted) if mode != "vector" else []
    if mode == "keyword":
        return _shown(SearchResult(mode, "keyword", keyword), text, k)
    # (k nearest: relevance keeps their order, and every vector hit read costs its stored vector)
    vectors, notices, embedders, embedding = nearest_memories(store, text, query, k)
    if notices and not vectors:
        if mode == "vector":
            keyword = keyword_hits(store, text, query, wanted)
        notices.append("Showing keyword results instead.")
        return _shown(SearchResult(mode, "keyword", keyword, notices), text, k)
    floor = _floor(embedders)
    label = "; ".join(e.label for e in embedders) or None
    nearest = vector_hits(store, vectors, embedding, floor)
    hits = nearest if mode == "vector" else _fused(keyword, nearest)
    return _shown(SearchResult(mode, mode, hits, notices, label, floor.fitted), text, k)


def _fused(keyword: Sequence[Hit], nearest: Sequence[Hit]) -> list[Hit]:
    """One list of what either list found, by hybrid relevance (relevance.hybrid_relevance),
    equal ones by their Reciprocal Rank Fusion (k=60) of the two lists."""
    fused = {h.memory.id: h for h in rrf({"keyword": [h.memory for h in keyword], "vector": [h.memory for h in nearest]})}
    by_list = {"keyword": {h.memory.id: h for h in keyword}, "vector": {h.memory.id: h for h in nearest}}
    out = []
    for memory_id, joint in fused.items():
        found = {name: hits[memory_id] for name, hits in by_list.items() if memory_id in hits}
        relevance = hybrid_relevance(*(found[n].score if n in found else None for n in ("keyword", "vector")))
        signals = {name: value for hit in found.values() for name, value in hit.signals.items()}
        out.append(Hit(joint.memory, relevance, joint.ranks, {**signals, "rrf": joint.score}))
    return sorted(out, key=lambda h: (-h.score, -h.signals["rrf"]))


def _shown(result: SearchResult, text: str, k: int, nothing: str | None = None) -> SearchResult:
    """result (its hits best first) with its matches (up to k) and under them, while room is left,
    a few weak matches; a notice when nothing matches (nothing: its words, "No memories match 'text'")."""
    matches = [h for h in result.hits if h.match][:k]
    weak = [h for h in result.hits if not h.match and h.score >= WEAK_LEAST][: max(0, min(WEAK_SHOWN, k - len(matches)))]
    if not matches:
        shown = f"; {counted(len(weak), 'weak match')} shown below" if weak else ""
        result.notices.append(f"{nothing or f'No memories match {text!r}'}{shown}.")
    result.hits = matches + weak
    return result


def similar(store: MemoryStore, memory_id: str, *, k: int = 10, query: MemoryQuery = MemoryQuery()) -> SearchResult:
    """Memories whose stored vectors are nearest to this memory's vector (no embedder needed),
    by the relevance the store's embedder's floor gives (relevance.py)."""
    if not store.vector_sources():
        raise UnsupportedError("This store has no vector collection; 'similar to' needs one.")
    memory = store.get(memory_id)
    embedding = store.embedding_of(memory.id)
    if embedding is None:
        raise NotFoundError(f"{memory_id} has no stored vector to compare with.")
    ranked, notices, _embedders, _embedding = nearest_memories(store, None, query, k + 1, embedding=embedding)
    ranked = [(m, d) for m, d in ranked if m.id != memory_id]
    recorded = [r for r in store.recorded_embedders() if r.dimensions in (None, len(embedding))]
    floor = floor_for(recorded[0].model, len(embedding)) if len(recorded) == 1 else UNFITTED
    hits = vector_hits(store, ranked, embedding, floor)
    notices += [note] if (note := retrieval_note(store, query.channels)) else []
    result = SearchResult("similar", "vector", hits, notices, f"the stored vector of {memory_id} (no embedder)",
                          floor.fitted)
    return _shown(result, memory_id, k, nothing=f"No memory's vector is near enough to {memory_id}'s to match")
