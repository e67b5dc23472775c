"""What a store's owner will expire, archive or clean up, and when, by the owner's own rule.

A source whose system drops memory on its own (SynthOrg's retention and expiry, AgentX's 90-day
archive, LangGraph's TTLs, mem0's expiration dates, Redis key TTLs) implements
``RetentionSource.upcoming``; the store gathers them for ``mnemoscope retention`` and the window.
Nothing here changes a store: it previews what the owner will do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

EXPIRE = "expire"  # the owner stops returning it (it may stay on disk)
ARCHIVE = "archive"  # the owner moves it out of the live set
CLEAN_UP = "clean up"  # the owner deletes it
ACTIONS = (EXPIRE, ARCHIVE, CLEAN_UP)


@dataclass(frozen=True)
class Upcoming:
    """One record the owner will act on, when and by which of its rules."""

    record_id: str  # a memory id, or a scratchpad key
    action: str  # one of ACTIONS
    when: datetime  # UTC; in the past when the owner is overdue (it runs its rule lazily)
    rule: str  # the owner's rule in words, e.g. "SynthOrg retention: episodic 30 days (agent override)"
    owner: str  # the format's label
    preview: str = ""  # the first words of the content, for a person to recognise it

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.record_id,
            "action": self.action,
            "when": self.when.isoformat(),
            "rule": self.rule,
            "owner": self.owner,
            "preview": self.preview,
        }


@runtime_checkable
class RetentionSource(Protocol):
    """A source whose owner expires, archives or cleans up records by a rule of its own."""

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        """Every record the owner will act on before ``until`` (overdue ones included)."""
        ...
