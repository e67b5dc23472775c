"""SynthOrg's context injection (seed 004, "Memory Injection Strategies", linear ranking).

For one agent, SynthOrg fetches candidates by dense search from the agent's own memories
(``MemoryBackend.retrieve``) and, in parallel, from the shared knowledge base
(``SharedKnowledgeStore.search_shared(..., exclude_agent=agent)``: what the agent published
itself is not fetched back as shared), max_memories of each; drops what has expired; ranks
them together:

    relevance = the backend's score (the cosine), else default_relevance
    personal entries: relevance = min(relevance + personal_boost, 1)   (no boost for shared)
    recency = exp(-recency_decay_rate x age in hours)
    combined = relevance_weight x relevance + recency_weight x recency

keeps those with combined >= min_relevance, then (with non_inferable_only) only those tagged
``non-inferable`` (Decision Log D23), best first, up to max_memories. The numbers are
SynthOrg's MemoryRetrievalConfig defaults (relevance 0.7, recency 0.3, decay 0.01 per hour,
personal boost 0.1, min_relevance 0.3, max_memories 20, default_relevance 0.5,
non_inferable_only off), overridden by a ``memory.retrieval`` section of the company's
synthorg.yaml where it has one. The greedy token-budget packing after them is not previewed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any

from ..errors import UnsupportedError
from ..formats import synthorg as owner
from ..formats.mem0_qdrant import SYNTHORG_LABEL
from ..model import Memory, Status
from ..query import MemoryQuery
from ..store import MemoryStore
from ..timeutil import as_utc, utcnow
from .candidates import Candidate, gather, left_out, similarity
from .result import NEAR_MISSES, Ask, Dropped, RecallResult, Scored, Term, ranked

SYSTEM = "SynthOrg"
DOCUMENTED_BY = ("seed 004 (SynthOrg Memory: Memory Injection Strategies, Ranking Algorithm, Non-Inferable "
                 "Filter); defaults from SynthOrg's MemoryRetrievalConfig")


@dataclass(frozen=True)
class Settings:
    relevance_weight: float = 0.7
    recency_weight: float = 0.3
    recency_decay_rate: float = 0.01
    personal_boost: float = 0.1
    min_relevance: float = 0.3
    max_memories: int = 20
    default_relevance: float = 0.5
    include_shared: bool = True
    non_inferable_only: bool = False

    def rules(self) -> str:
        return (f"personal + shared dense search; relevance (+{self.personal_boost:g} personal) x "
                f"{self.relevance_weight:g} + recency exp(-{self.recency_decay_rate:g} x hours) x "
                f"{self.recency_weight:g}; combined >= {self.min_relevance:g}"
                + ("; non-inferable only" if self.non_inferable_only else "") + f"; up to {self.max_memories}")


def owns(store: MemoryStore) -> bool:
    return any(getattr(s, "label", "") == SYNTHORG_LABEL for s in store.foreign)


def settings_of(store: MemoryStore) -> tuple[Settings, str]:
    """The retrieval settings, and where they come from."""
    source = next(s for s in store.foreign if getattr(s, "label", "") == SYNTHORG_LABEL)
    config, _notes = owner.find_config(source.root.parent)
    section: Any = config.memory.get("retrieval") if config is not None else None
    if not isinstance(section, dict):
        return Settings(), "SynthOrg's defaults"
    defaults = Settings()
    chosen: dict[str, Any] = {}
    for name, value in section.items():
        default = getattr(defaults, name, None) if name in {f.name for f in fields(Settings)} else None
        if isinstance(default, bool):
            if isinstance(value, bool):
                chosen[name] = value
        elif isinstance(default, int):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value == int(value) and value >= 1:
                chosen[name] = int(value)
        elif isinstance(default, float):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
                chosen[name] = float(value)
    return replace(defaults, **chosen), f"{config.path} memory.retrieval" if config else ""


def agents(store: MemoryStore) -> list[str]:
    """The agents whose memories the store holds (by their mem0 user_id)."""
    counts = store.counts(MemoryQuery(statuses=()), ["channels"]).get("channels", {})
    return sorted(c[len(owner.AGENT_CHANNEL):] for c in counts if c.startswith(owner.AGENT_CHANNEL))


def run(store: MemoryStore, ask: Ask) -> RecallResult:
    settings, origin = settings_of(store)
    agent = _agent(store, ask)
    now = ask.now or utcnow()
    k = ask.k or settings.max_memories
    personal_channel = owner.AGENT_CHANNEL + agent
    personal = gather(store, ask.question, settings.max_memories,
                      MemoryQuery(channels=(personal_channel,), statuses=()), keyword=False)
    result = RecallResult(
        system=SYSTEM, rules=settings.rules(), documented_by=f"{DOCUMENTED_BY}; settings: {origin}", documented=True,
        question=ask.question, scope={"as": agent}, hits=[], notices=list(personal.notices),
        signal="vector" if personal.by_vector else "keyword", embedder=personal.embedder,
    )
    if not personal.by_vector:
        personal = gather(store, ask.question, settings.max_memories,
                          MemoryQuery(channels=(personal_channel,), statuses=()), vector=False)
        result.notices.append("No vector list ran: relevance is search's keyword relevance, where SynthOrg "
                              "would use its backend's dense score.")
    lists = [(personal.candidates, True)]
    if settings.include_shared:
        shared = gather(store, ask.question, settings.max_memories,
                        MemoryQuery(channels=(owner.SHARED_CHANNEL,), statuses=()),
                        vector=personal.by_vector, keyword=not personal.by_vector)
        lists.append((shared.candidates, False))
    kept: list[Scored] = []
    for candidates, is_personal in lists:
        for candidate in candidates:
            one = scored(candidate, personal.by_vector, is_personal, settings, now)
            reason = _dropped_because(candidate.memory, one, agent, is_personal, settings)
            if reason:
                result.dropped.append(Dropped(candidate.memory, reason, one))
            else:
                kept.append(one)
    kept = ranked(kept)
    result.hits, result.near_misses = kept[:k], kept[k:k + NEAR_MISSES]
    if not settings.non_inferable_only:
        result.notices.append("non_inferable_only is off (SynthOrg's default): memories not tagged non-inferable "
                              "are injected too; each hit says whether it is tagged.")
    _other_agents(store, ask.question, personal_channel, settings, result)
    return result


def scored(candidate: Candidate, by_vector: bool, personal: bool, settings: Settings, now: datetime) -> Scored:
    memory = candidate.memory
    name, value = similarity(candidate, by_vector)
    relevance = value if (candidate.cosine is not None or not by_vector) else settings.default_relevance
    terms = [Term(name, relevance, settings.relevance_weight)]
    formula_relevance = f"{name} {relevance:.3f}"
    if personal:
        boosted = min(relevance + settings.personal_boost, 1.0)
        formula_relevance = f"min({formula_relevance} + {settings.personal_boost:g}, 1)"
        terms.append(Term("personal boost", boosted - relevance))
        relevance = boosted
    age_hours = max(0.0, (as_utc(now) - as_utc(memory.created_at)).total_seconds() / 3600)
    fresh = math.exp(-settings.recency_decay_rate * age_hours)
    terms.append(Term("recency", fresh, settings.recency_weight))
    tagged = owner.NON_INFERABLE in memory.tags
    terms.append(Term("non-inferable", 1.0 if tagged else 0.0))
    combined = settings.relevance_weight * relevance + settings.recency_weight * fresh
    formula = (f"{settings.relevance_weight:g} x {formula_relevance} + {settings.recency_weight:g} x recency "
               f"{fresh:.3f} (age {age_hours:.0f} h)")
    return Scored(memory, combined, tuple(terms), formula,
                  found_by=("personal" if personal else "shared") + ("" if tagged else ", not tagged non-inferable"))


def _dropped_because(memory: Memory, one: Scored, agent: str, personal: bool, settings: Settings) -> str:
    if memory.status is Status.EXPIRED:
        return "expired: SynthOrg never returns an entry past its expiry"
    if memory.status is not Status.ACTIVE:
        return f"{memory.status.value}: not returned by the backend"
    if not personal and str(memory.metadata.get("publisher") or "") == agent:
        return f"published by {agent} itself: search_shared excludes the asking agent's own"
    if one.score < settings.min_relevance:
        return f"combined {one.score:.3f} under min_relevance {settings.min_relevance:g}"
    if settings.non_inferable_only and owner.NON_INFERABLE not in memory.tags:
        return "not tagged non-inferable (non_inferable_only)"
    return ""


def _agent(store: MemoryStore, ask: Ask) -> str:
    known = agents(store)
    if ask.as_agent:
        agent = ask.as_agent[len(owner.AGENT_CHANNEL):] if ask.as_agent.startswith(owner.AGENT_CHANNEL) else ask.as_agent
        if agent not in known:
            raise UnsupportedError(f"SynthOrg holds no memories of agent {agent!r} (agents: {', '.join(known) or 'none'}).")
        return agent
    if len(known) == 1:
        return known[0]
    raise UnsupportedError("SynthOrg retrieves for one agent: give --as AGENT (one of: "
                           f"{', '.join(known) or 'none'}).")


def _other_agents(store: MemoryStore, question: str, personal_channel: str, settings: Settings,
                  result: RecallResult) -> None:
    """Other agents' personal memories the same search would find: never given to this agent."""
    def reason(memory: Memory) -> str:
        channel = memory.channel
        if not channel.startswith(owner.AGENT_CHANNEL) or channel == personal_channel:
            return ""
        return (f"{channel[len(owner.AGENT_CHANNEL):]}'s personal memory: SynthOrg searches only the asking "
                "agent's own and the shared")

    result.dropped += left_out(store, question, settings.max_memories, result.signal == "vector", reason)
