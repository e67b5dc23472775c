"""mem0's search (``Memory.search``, mem0 1.x), as an agent calls it to recall.

mem0 needs at least one scope: ``user_id``, ``agent_id`` or ``run_id``; a memory is a candidate
only when every id given is its own. The vector store returns the ``limit`` (default 100) points
nearest the query's vector under that filter, each with the store's score (the cosine for Qdrant
and pgvector); with a ``threshold`` (default none) those under it are dropped. mem0 ranks by that
score alone: no recency, no access count. Graph memory and the optional reranker are not previewed.
"""

from __future__ import annotations

import re

from ..errors import UnsupportedError
from ..formats.mem0 import SCOPE_KEYS
from ..model import Status
from ..query import MemoryQuery
from ..store import MemoryStore
from .candidates import gather, left_out, similarity
from .result import NEAR_MISSES, Ask, Dropped, RecallResult, Scored, Term, ranked

SYSTEM = "mem0"
DOCUMENTED_BY = "mem0 1.x Memory.search (docs.mem0.ai: Search Memory; mem0/memory/main.py)"
RULES = "scope filter (user_id / agent_id / run_id), the vector store's score alone, limit 100, no threshold"
LIMIT = 100
_PARTS = re.compile(r"/(?=(?:user|agent|run):)")  # an id may hold "/" itself: split only before a key


def owns(store: MemoryStore) -> bool:
    return any(getattr(s, "format", "") == "mem0" for s in store.foreign)


def scope_of(text: str) -> dict[str, str]:
    """A scope as --as gives it, "dana", "user:dana" or "user:dana/agent:helper", as mem0's filter."""
    scope: dict[str, str] = {}
    for part in (p for p in _PARTS.split(text) if p):
        key, _, value = part.partition(":")
        if not value:
            key, value = "user", key
        name = f"{key}_id"
        if name not in SCOPE_KEYS:
            raise UnsupportedError(f"mem0 scopes by {', '.join(SCOPE_KEYS)}; {part!r} names none of them.")
        scope[name] = value
    return scope


def scopes(store: MemoryStore) -> list[str]:
    counts = store.counts(MemoryQuery(statuses=()), ["channels"]).get("channels", {})
    return sorted(counts)


def _in_scope(channel: str, scope: dict[str, str]) -> bool:
    try:
        own = scope_of(channel) if ":" in channel else {}
    except UnsupportedError:
        return False
    return all(own.get(key) == value for key, value in scope.items())


def _holds(metadata: dict[str, object], scope: dict[str, str]) -> bool:
    """mem0's filter on a memory's own ids (kept in its metadata): every id asked for is its own."""
    return all(str(metadata.get(key) or "") == value for key, value in scope.items())


def run(store: MemoryStore, ask: Ask) -> RecallResult:
    if not ask.as_agent:
        raise UnsupportedError("mem0 searches one scope: give --as SCOPE (user:ID, agent:ID or run:ID; one of: "
                               + ", ".join(scopes(store)[:8]) + ").")
    scope = scope_of(ask.as_agent)
    limit = ask.k or LIMIT
    channels = tuple(c for c in scopes(store) if _in_scope(c, scope))
    if not channels:
        raise UnsupportedError(f"mem0 holds no memories in scope {ask.as_agent!r} (scopes: "
                               + ", ".join(scopes(store)[:8]) + ").")
    within = MemoryQuery(channels=channels, statuses=())
    gathered = gather(store, ask.question, limit + NEAR_MISSES, within, keyword=False)
    result = RecallResult(system=SYSTEM, rules=RULES, documented_by=DOCUMENTED_BY, documented=True,
                          question=ask.question, scope={"as": ask.as_agent}, hits=[],
                          notices=list(gathered.notices), signal="vector", embedder=gathered.embedder)
    if not gathered.by_vector:
        gathered = gather(store, ask.question, limit + NEAR_MISSES, within, vector=False)
        result.signal = "keyword"
        result.notices.append("No vector list ran: mem0 ranks by its embedder's vectors alone; search's keyword "
                              "relevance stands in.")
    kept = []
    for candidate in gathered.candidates:
        if not _holds(candidate.memory.metadata, scope):  # a channel that only reads like the scope
            continue
        name, value = similarity(candidate, gathered.by_vector)
        one = Scored(candidate.memory, value, (Term(name, value, 1.0),), f"{name} {value:.3f}",
                     found_by=candidate.memory.channel)
        if candidate.memory.status is not Status.ACTIVE:
            result.dropped.append(Dropped(candidate.memory, f"{candidate.memory.status.value}: mem0 no longer "
                                          "returns it", one))
        else:
            kept.append(one)
    kept = ranked(kept)
    result.hits, result.near_misses = kept[:limit], kept[limit:limit + NEAR_MISSES]
    wanted = "/".join(f"{k}={v}" for k, v in scope.items())
    result.dropped += left_out(store, ask.question, 10, result.signal == "vector",
                               lambda m: "" if m.channel in channels else f"scope {m.channel}: mem0's filter asks for {wanted}")
    return result
