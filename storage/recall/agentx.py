"""AgentX's retrieval (seed 002, "Retrieval Layer"), and the native store's, whose channels follow
AgentX's model.

What the seed fixes: retrieval always queries the active channel and ``_global``, merged and
deduplicated; it over-fetches 2x top_k to leave room for filtering; it weighs episodic 0.3,
semantic facts 0.25, semantic entities 0.2, procedural 0.15 and recency 0.1; salience boosts in
reranking, current facts 1.2x and past ones 0.7x. Where the seed is silent, AgentX's own
reranker (memory/retrieval.py, ``MemoryRetriever._rerank``) decides, and so does this preview:
a fact's similarity is weighed by its confidence and an entity's by its salience (0.5 where the
memory keeps none), recency halves every 24 hours since the memory was made, top_k is 10, and at
most 3 turns of one conversation are kept. Mnemoscope's own choices, where neither says: the
similarity is the raw cosine of the question's vector (AgentX min-max normalises it per list,
which lifts the best of a weak list to 1), recency counts for every memory (the seed lists it
beside the others, AgentX's code adds it to turns only), and the native layers that AgentX does
not name are weighed as their nearest kind: working as episodic, core as a fact, social as an
entity.

score = weight(kind) x cosine [x confidence | x salience] + 0.1 x recency, then x 1.2 (current)
or x 0.7 (past) where the memory's temporal tag says so.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from ..model import GLOBAL_CHANNEL, Layer, Memory, Status
from ..query import MemoryQuery
from ..store import MemoryStore
from ..timeutil import as_utc, utcnow
from .candidates import Candidate, gather, left_out, similarity
from .result import NEAR_MISSES, Ask, Dropped, RecallResult, Scored, Term, ranked

SYSTEM = "AgentX"
NATIVE_SYSTEM = "Mnemoscope (AgentX's retrieval rules)"
WEIGHTS = {"episodic": 0.3, "fact": 0.25, "entity": 0.2, "procedural": 0.15}
RECENCY_WEIGHT = 0.1
HALF_LIFE_HOURS = 24.0
TEMPORAL_BOOST = {"current": 1.2, "past": 0.7}
TOP_K = 10
OVER_FETCH = 2
PER_CONVERSATION = 3
INACTIVE = (Status.ARCHIVED, Status.DELETED, Status.EXPIRED)
DOCUMENTED_BY = ("seed 002 (AgentX Memory System Architecture: Retrieval Layer, Reinforcement Signals, "
                 "Vector Search Optimization); AgentX memory/retrieval.py where the seed is silent")
RULES = ("active channel + _global merged; over-fetch 2x top_k; weight(kind) x similarity "
         "[x confidence | x salience] + 0.1 x recency (24 h half-life); current x1.2, past x0.7")

_BY_TYPE = {"turn": "episodic", "episode": "episodic", "conversation": "episodic", "episodic": "episodic",
            "fact": "fact", "semantic": "fact", "entity": "entity", "strategy": "procedural",
            "procedure": "procedural", "procedural": "procedural", "tool": "procedural", "working": "episodic"}
GOAL = "goal"
GOALS_READ = 200
_BY_LAYER = {Layer.EPISODIC: "episodic", Layer.WORKING: "episodic", Layer.SEMANTIC: "fact", Layer.CORE: "fact",
             Layer.SOCIAL: "entity", Layer.PROCEDURAL: "procedural"}


def stored(memory: Memory, key: str) -> str:
    """A value AgentX keeps with the memory, lower-cased ("" when none): on the native store under
    its own name, on AgentX's database in the row's metadata (``metadata.<key>``)."""
    for name in (key, f"metadata.{key}"):
        value = memory.metadata.get(name)
        if value not in (None, ""):
            return str(value).strip().lower()
    return ""


def kind_of(memory: Memory) -> str:
    """The retrieval weight's kind: AgentX's memory_type where the memory keeps it, else its layer's."""
    stored_type = stored(memory, "memory_type")
    return _BY_TYPE.get(stored_type) or _BY_LAYER[memory.layer]


def recency(memory: Memory, now: datetime) -> float:
    age_hours = max(0.0, (as_utc(now) - as_utc(memory.created_at)).total_seconds() / 3600)
    return float(0.5 ** (age_hours / HALF_LIFE_HOURS))


def scored(memory: Memory, signal: str, value: float, now: datetime) -> Scored:
    """A memory's score by the rules above, with its terms and the formula as numbers."""
    kind = kind_of(memory)
    weight = WEIGHTS[kind]
    terms = [Term(signal, value, weight)]
    relevance = weight * value
    formula = f"{weight:g} x {signal} {value:.3f}"
    factor = {"fact": ("confidence", memory.confidence), "entity": ("salience", memory.salience)}.get(kind)
    if factor is not None:
        name, kept = factor
        multiplier = 0.5 if kept is None else float(kept)
        terms.append(Term(name, multiplier))
        relevance *= multiplier
        formula += f" x {name} {multiplier:.2f}" + (" (none kept: 0.5)" if kept is None else "")
    fresh = recency(memory, now)
    terms.append(Term("recency", fresh, RECENCY_WEIGHT))
    score = relevance + RECENCY_WEIGHT * fresh
    formula += f" + {RECENCY_WEIGHT:g} x recency {fresh:.3f}"
    temporal = stored(memory, "temporal") or stored(memory, "temporal_tag")
    if temporal in TEMPORAL_BOOST:
        boost = TEMPORAL_BOOST[temporal]
        terms.append(Term(temporal, boost))
        score *= boost
        formula = f"({formula}) x {temporal} {boost:g}"
    return Scored(memory, score, tuple(terms), formula, found_by=f"{kind} ({memory.channel})")


def run(store: MemoryStore, ask: Ask, *, native: bool = False) -> RecallResult:
    now = ask.now or utcnow()
    k = ask.k or TOP_K
    active = ask.channel or GLOBAL_CHANNEL
    channels = tuple(dict.fromkeys([active, GLOBAL_CHANNEL]))
    gathered = gather(store, ask.question, OVER_FETCH * k, MemoryQuery(channels=channels))
    signal = "cosine" if gathered.by_vector else "keyword"
    result = RecallResult(
        system=NATIVE_SYSTEM if native else SYSTEM, rules=RULES, documented_by=DOCUMENTED_BY, documented=True,
        question=ask.question, scope={"channel": active}, hits=[], notices=list(gathered.notices),
        signal="vector" if gathered.by_vector else "keyword", embedder=gathered.embedder,
    )
    if not gathered.by_vector:
        result.notices.append("No vector list ran: similarity is search's keyword relevance, where AgentX "
                              "would rank by its own embedder's cosine.")
    kept: list[Scored] = []
    goals = active_goals(store)
    if goals:
        result.extra["active goals (AgentX gives every active goal, whatever is asked)"] = goals
    for candidate in _by_similarity(gathered.candidates, gathered.by_vector):
        if not _is_goal(candidate.memory):
            kept.append(scored(candidate.memory, signal, similarity(candidate, gathered.by_vector)[1], now))
    inactive = gather(store, ask.question, k, MemoryQuery(channels=channels, statuses=INACTIVE),
                      keyword=not gathered.by_vector)
    for candidate in _by_similarity(inactive.candidates, gathered.by_vector):
        one = scored(candidate.memory, signal, similarity(candidate, gathered.by_vector)[1], now)
        result.dropped.append(Dropped(candidate.memory, f"{candidate.memory.status.value}: AgentX retrieves "
                                      "active memories only", one))
    kept = _diverse(ranked(kept), result)
    result.hits, result.near_misses = kept[:k], kept[k:k + NEAR_MISSES]
    _other_channels(store, ask.question, channels, k, result)
    return result


def _is_goal(memory: Memory) -> bool:
    return stored(memory, "memory_type") == GOAL


def _goal_status(memory: Memory) -> str:
    """A goal's lifecycle status: agentx_goals' (goal.status), else the one its row keeps."""
    return str(memory.metadata.get("goal.status") or stored(memory, "status") or "active").lower()


def active_goals(store: MemoryStore) -> list[Scored]:
    """AgentX's "Strategy 4": the user's active goals, in every channel, not ranked by the question."""
    working = store.page(MemoryQuery(layers=(Layer.WORKING,)), GOALS_READ)
    goals = [m for m in working if _is_goal(m) and _goal_status(m) == "active"]
    return [Scored(m, 0.0, (), "not scored: every active goal is given", found_by=f"goal ({m.channel})")
            for m in goals]


def _by_similarity(candidates: list[Candidate], by_vector: bool) -> list[Candidate]:
    """The over-fetched list: the vector list where one ran (keyword candidates the vector list
    did not reach are not what AgentX's vector search returns)."""
    if by_vector:
        return [c for c in candidates if c.vector_rank is not None]
    return candidates


def _diverse(hits: list[Scored], result: RecallResult) -> list[Scored]:
    """At most PER_CONVERSATION turns of one conversation, best first (AgentX's diversity rule)."""
    seen: Counter[str] = Counter()
    out = []
    for hit in hits:
        conversation = stored(hit.memory, "conversation_id") if kind_of(hit.memory) == "episodic" else None
        if conversation:
            seen[str(conversation)] += 1
            if seen[str(conversation)] > PER_CONVERSATION:
                result.dropped.append(Dropped(hit.memory, f"turn {seen[str(conversation)]} of conversation "
                                              f"{conversation}: AgentX keeps {PER_CONVERSATION} per conversation", hit))
                continue
        out.append(hit)
    return out


def _other_channels(store: MemoryStore, question: str, channels: tuple[str, ...], k: int,
                    result: RecallResult) -> None:
    """What the same question finds in channels the agent does not search, listed as dropped."""
    def reason(memory: Memory) -> str:
        if memory.channel in channels or _is_goal(memory):
            return ""
        return f"channel {memory.channel}: neither the active channel ({channels[0]}) nor {GLOBAL_CHANNEL}"

    result.dropped += left_out(store, question, OVER_FETCH * k, result.embedder is not None, reason)
