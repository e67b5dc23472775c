"""How close AgenticX is to its own limits: a session's context to ContextCompactor's
compaction, a workspace file to MemoryHook's caps.

The rules are seed 000's ("Context compaction", "MemoryHook"): before each turn
``ContextCompactor.maybe_compact`` compacts the model's context (``agent_messages``,
persisted as ``sessions/<id>/agent_messages.json``) when it holds more than 20 messages or
more than 48,000 characters of content; the older part is replaced by one ``[compacted]``
system message and the last 8 messages stay verbatim (floors: 8 messages, 4,000 characters,
4 retained). From agenticx 0.6.5's compactor (runtime/compactor.py): after a compaction only
the messages after the summary count, nothing is compacted while no more than the retained
number are there, and the retained tail never starts with a tool message (its assistant call
would be summarised away). MemoryHook appends a day's Session Facts block only while the daily
log plus the block stays within 8,000 characters, appends Auto-extracted sections to MEMORY.md
only while it is under 4,000, and deduplicates today's log once it is over 2,000.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import CompactionDistance

THRESHOLD_MESSAGES = 20
THRESHOLD_CHARS = 48_000
RETAIN_RECENT_MESSAGES = 8
COMPACTION_RULE = (
    f"ContextCompactor: compacts past {THRESHOLD_MESSAGES} messages or {THRESHOLD_CHARS:,} characters, "
    f"keeps the last {RETAIN_RECENT_MESSAGES} verbatim (seed 000)"
)
COMPACTED_MARKER = "[compacted]"

DAILY_LOG_CAP = 8000  # characters: no block is appended that would take a daily log past it
MEMORY_MD_CAP = 4000  # characters: Auto-extracted sections are appended only below it
DAILY_COMPACT_ABOVE = 2000  # characters: past it the day's log is deduplicated


def compaction_distance(
    messages: Sequence[dict[str, Any]], measured_on: str, text_of: Callable[[dict[str, Any]], str]
) -> CompactionDistance:
    """How far ``messages`` (the model's context, oldest first) are from compaction."""
    compacted_before = bool(messages) and _is_compacted_summary(messages[0], text_of)
    working = list(messages[1:] if compacted_before else messages)
    summarised = _split_at(working)
    return CompactionDistance(
        rule=COMPACTION_RULE,
        measured_on=measured_on,
        messages=len(working),
        message_threshold=THRESHOLD_MESSAGES,
        characters=sum(len(text_of(m)) for m in working),
        character_threshold=THRESHOLD_CHARS,
        retained=len(working) - summarised,
        summarised=summarised,
        compacted_before=compacted_before,
    )


def _is_compacted_summary(message: dict[str, Any], text_of: Callable[[dict[str, Any]], str]) -> bool:
    """ContextCompactor's ``_has_compacted_prefix``: a system message holding the marker."""
    return str(message.get("role", "")).strip().lower() == "system" and COMPACTED_MARKER in text_of(message)


def _role(message: dict[str, Any]) -> str:
    return str(message.get("role", "")).strip().lower()


def _split_at(items: list[dict[str, Any]]) -> int:
    """How many of the oldest messages a compaction now would summarise (its ``_split_for_compaction``)."""
    retain = RETAIN_RECENT_MESSAGES
    if len(items) <= retain:
        return 0
    split = len(items) - retain
    while split > 0 and _role(items[split]) == "tool":
        split -= 1
    if split < len(items) and _role(items[split]) == "assistant" and items[split].get("tool_calls"):
        end = split + 1
        while end < len(items) and _role(items[end]) == "tool":
            end += 1
        if end - split > retain:
            split = max(0, end - retain)
            while split > 0 and _role(items[split]) == "tool":
                split -= 1
    return split


@dataclass(frozen=True)
class FileCap:
    """One workspace file against the MemoryHook cap that governs it."""

    file: str
    characters: int
    cap: int
    rule: str
    dedup_above: int | None = None  # a daily log: deduplicated once it is over this (when it is today's)

    @property
    def left(self) -> int:
        return max(0, self.cap - self.characters)

    def describe(self) -> str:
        if self.file == "MEMORY.md":
            state = (f"{self.left:,} left before MemoryHook stops appending Auto-extracted sections"
                     if self.characters < self.cap else "at its cap: MemoryHook appends no more Auto-extracted sections")
        else:
            state = (f"{self.left:,} left for MemoryHook's Session Facts blocks (a block that would take it past "
                     f"{self.cap:,} is not appended)" if self.left else "at its cap: MemoryHook appends no more")
        text = f"{self.file}: {self.characters:,} of {self.cap:,} characters; {state}"
        if self.dedup_above is not None:
            text += (f"; over {self.dedup_above:,}, so deduplicated on the day it is today's log"
                     if self.characters > self.dedup_above
                     else f"; {self.dedup_above - self.characters:,} more before it is deduplicated (on its day)")
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "characters": self.characters, "cap": self.cap, "left": self.left,
                "rule": self.rule, "dedup_above": self.dedup_above}


def file_cap(rel: str, text: str) -> FileCap:
    """The cap of MEMORY.md or of a daily log (``memory/<date>.md``), measured on its text as
    MemoryHook reads it (``len`` of the decoded file: characters, not bytes)."""
    if rel == "MEMORY.md":
        return FileCap(rel, len(text), MEMORY_MD_CAP, "MemoryHook appends Auto-extracted sections only under 4,000")
    return FileCap(rel, len(text), DAILY_LOG_CAP, "MemoryHook keeps a daily log within 8,000", DAILY_COMPACT_ABOVE)
