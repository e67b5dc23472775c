"""Search: keyword (SQLite FTS5 and per-store text match), vector (Chroma) and
hybrid (Reciprocal Rank Fusion, k=60).

A text query is embedded by the store's embedder (StoreSettings: an OpenAI-compatible
endpoint, the local model, the hashing one), else by the one a collection records when it
runs here; one whose model or dimension is not the vectors' is refused (EmbedderMismatchError).
When none runs, vector and hybrid searches fall back to keyword search and say so. Every
result names the embedder that ranked its vector list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..embedding import Embedder, check_match
from ..errors import NotFoundError, UnsupportedError
from ..model import Kind, Memory
from ..query import MemoryQuery
from ..store import MemoryStore

RRF_K = 60
MODES = ("keyword", "vector", "hybrid")


@dataclass(frozen=True)
class Hit:
    memory: Memory
    score: float
    ranks: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {**self.memory.to_dict(), "score": round(self.score, 6), "ranks": self.ranks}


@dataclass
class SearchResult:
    requested_mode: str
    mode: str
    hits: list[Hit]
    notices: list[str] = field(default_factory=list)
    # What ranked the vector list: the embedder's label (None: no vector list was used).
    embedder: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "requested_mode": self.requested_mode,
            "mode": self.mode,
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


def keyword_lists(store: MemoryStore, text: str, query: MemoryQuery, k: int) -> dict[str, list[Memory]]:
    # One ranked list per source, named for it: two SQLite files of one store are two lists.
    lists: dict[str, list[Memory]] = {}
    for s in store.sources:
        per_part = s.keyword_lists(text, query, k) if s is store.workspace else {s.label: s.keyword_search(text, query, k)}
        for name, ranked in per_part.items():
            name = name or s.kind.value
            while name in lists:
                name += "'"
            lists[name] = ranked
    return lists


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


def vector_list(
    store: MemoryStore, text: str | None, query: MemoryQuery, k: int, embedding: list[float] | None = None
) -> tuple[list[Memory], list[str]]:
    ranked, notices, _label = _vector_list(store, text, query, k, embedding)
    return ranked, notices


def _vector_list(
    store: MemoryStore, text: str | None, query: MemoryQuery, k: int, embedding: list[float] | None = None
) -> tuple[list[Memory], list[str], str | None]:
    """The k nearest memories, the notices, and the label of the embedder that embedded text."""
    notices: list[str] = []
    vector_sources = store.vector_sources()
    if not vector_sources:
        return [], ["This store has no vector collection; vector search is not available."], None
    label = None
    if embedding is None:
        embedders, notices = query_embedders(store)
        if not embedders:
            return [], notices, None
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
        out: list[Memory] = []
        seen: set[str] = set()
        for memory, _distance in found:
            memory = _canonical(store, memory)
            if memory.id in seen:
                continue
            if query.statuses and memory.status not in query.statuses:
                continue
            seen.add(memory.id)
            out.append(memory)
        if len(out) >= k or len(found) < wanted:  # enough, or every source gave all it has
            return out[:k], notices, label
        wanted *= 4


def search(
    store: MemoryStore,
    text: str,
    *,
    mode: str = "hybrid",
    k: int = 10,
    query: MemoryQuery = MemoryQuery(),
) -> SearchResult:
    if mode not in MODES:
        raise UnsupportedError(f"Unknown search mode {mode!r}; use one of {', '.join(MODES)}.")
    keyword = rrf(keyword_lists(store, text, query, k)) if mode != "vector" else []
    if mode == "keyword":
        return SearchResult(mode, "keyword", keyword[:k])
    vectors, notices, label = _vector_list(store, text, query, k)
    if notices and not vectors:
        if mode == "vector":
            keyword = rrf(keyword_lists(store, text, query, k))
        notices.append("Showing keyword results instead.")
        return SearchResult(mode, "keyword", keyword[:k], notices)
    if mode == "vector":
        hits = [Hit(m, 1.0 / (RRF_K + r), {"vector": r}) for r, m in enumerate(vectors, 1)]
        return SearchResult(mode, "vector", hits, notices, label)
    fused = rrf({"keyword": [h.memory for h in keyword], "vector": vectors})
    return SearchResult(mode, "hybrid", fused[:k], notices, label)


def similar(store: MemoryStore, memory_id: str, *, k: int = 10, query: MemoryQuery = MemoryQuery()) -> SearchResult:
    """Memories whose stored vectors are nearest to this memory's vector (no embedder needed)."""
    if not store.vector_sources():
        raise UnsupportedError("This store has no vector collection; 'similar to' needs one.")
    memory = store.get(memory_id)
    embedding = store.embedding_of(memory.id)
    if embedding is None:
        raise NotFoundError(f"{memory_id} has no stored vector to compare with.")
    vectors, notices = vector_list(store, None, query, k + 1, embedding=embedding)
    vectors = [m for m in vectors if m.id != memory_id][:k]
    hits = [Hit(m, 1.0 / (RRF_K + r), {"vector": r}) for r, m in enumerate(vectors, 1)]
    return SearchResult("similar", "vector", hits, notices, f"the stored vector of {memory_id} (no embedder)")

