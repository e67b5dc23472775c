"""Recall previews: what the agent that owns a store would be given for a question, by that
system's own retrieval rules, with each hit's signals and weights, what its filters dropped and
the near misses under the cut. The window's Recall view and ``mnemoscope recall`` call recall().

Each system's rules are a module here (agentx, synthorg, five_layer, agenticx, mem0), written
from its seed document and, where the seed is silent, from the owner's own code, each saying
which. The native store follows AgentX's channel model, so AgentX's rules rank it. A store whose
owner documents no retrieval rules gets plain hybrid search, labelled so.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..store import MemoryStore
from ..views.search import search
from . import agenticx, agentx, five_layer, mem0, synthorg
from .result import NEAR_MISSES, Ask, Dropped, RecallResult, Scored, Term

__all__ = ["Ask", "Dropped", "RecallResult", "Scored", "Term", "recall", "system_of", "who_asks"]

Rules = Callable[[MemoryStore, Ask], RecallResult]


def _agentx_owns(store: MemoryStore) -> bool:
    return any(getattr(s, "format", "") == "agentx" for s in store.foreign)


def _native(store: MemoryStore, ask: Ask) -> RecallResult:
    return agentx.run(store, ask, native=True)


# In order: SynthOrg's points are mem0's too, so SynthOrg is asked first.
_SYSTEMS: list[tuple[str, Callable[[MemoryStore], bool], Rules]] = [
    (synthorg.SYSTEM, synthorg.owns, synthorg.run),
    (mem0.SYSTEM, mem0.owns, mem0.run),
    (five_layer.SYSTEM, five_layer.owns, five_layer.run),
    (agenticx.SYSTEM, agenticx.owns, agenticx.run),
    (agentx.SYSTEM, _agentx_owns, agentx.run),
    (agentx.NATIVE_SYSTEM, lambda store: not store.foreign, _native),
]


def system_of(store: MemoryStore) -> str | None:
    """Whose retrieval rules a recall on this store follows (None: no documented ones)."""
    return next((name for name, owns, _rules in _SYSTEMS if owns(store)), None)


def who_asks(store: MemoryStore) -> tuple[str, list[str]]:
    """What a recall is asked as on this store, and the choices: ("channel", [...]) for AgentX's
    model, ("agent", [...]) for SynthOrg, ("scope", [...]) for mem0, ("", []) where nothing is chosen."""
    system = system_of(store)
    if system == synthorg.SYSTEM:
        return "agent", synthorg.agents(store)
    if system == mem0.SYSTEM:
        return "scope", mem0.scopes(store)
    if system in (agentx.SYSTEM, agentx.NATIVE_SYSTEM):
        return "channel", sorted(store.counts(axes=["channels"]).get("channels", {}))
    return "", []


def recall(store: MemoryStore, question: str, *, as_agent: str | None = None, channel: str | None = None,
           session: str | None = None, k: int | None = None, now: datetime | None = None) -> RecallResult:
    """The list the owning agent would be given for question (k: how many; None: the system's own
    default), asked as as_agent, in channel and session where the system scopes by them."""
    ask = Ask(question.strip(), as_agent=as_agent, channel=channel, session=session, k=k, now=now)
    rules = next((rules for _name, owns, rules in _SYSTEMS if owns(store)), _plain)
    result = rules(store, ask)
    for name, value in ask.scope().items():
        if name not in result.scope:
            result.notices.append(f"{result.system} does not scope retrieval by --{name}: {value!r} was not used.")
    return result


def _plain(store: MemoryStore, ask: Ask) -> RecallResult:
    owners = ", ".join(dict.fromkeys(str(getattr(s, "label", "") or type(s).__name__) for s in store.foreign))
    k = ask.k or 10
    found = search(store, ask.question, mode="hybrid", k=k + NEAR_MISSES)
    scored = [Scored(h.memory, h.score, tuple(Term(name, value) for name, value in h.signals.items()),
                     f"hybrid relevance {h.score:.3f} ({h.strength})", found_by=", ".join(sorted(h.ranks)))
              for h in found.hits]
    return RecallResult(
        system=f"{owners} (plain search)", rules="Mnemoscope's hybrid search, labelled: no retrieval rules of the owner",
        documented_by="none: the owner documents no retrieval rules Mnemoscope could follow", documented=False,
        question=ask.question, scope={}, hits=scored[:k], near_misses=scored[k:],
        notices=[f"{owners} documents no retrieval rules Mnemoscope could follow: this is plain hybrid search, "
                 "not what the agent would be given.", *found.notices],
        signal=found.mode, embedder=found.embedder,
    )
