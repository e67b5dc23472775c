"""The protocol every store kind implements.

Reads go through count/page/get with a MemoryQuery the store evaluates itself.
Writes go through one primitive, ``write_record(record_id, expected, new)``:
``expected`` is the snapshot the caller read (None: the record must not exist),
``new`` is the snapshot to leave (None: remove it). A store refuses with
ConflictError when the current record is not ``expected``. Curation, undo and
redo are all sequences of that primitive, so undo is the same call with the
two snapshots swapped.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Protocol, runtime_checkable

from .model import Kind, Memory
from .query import MemoryQuery, sort_key

Snapshot = dict[str, Any]


@dataclass(frozen=True)
class Capabilities:
    read_only: bool = False
    read_only_reason: str = ""
    editable_fields: tuple[str, ...] = ()
    can_promote: bool = False
    can_soft_delete: bool = False
    # Keeps an access count that retrieval (and a pin by hand) raises.
    can_reinforce: bool = False
    keyword_search: bool = False
    vector_search: bool = False
    sessions: bool = False
    graph: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "read_only": self.read_only,
            "read_only_reason": self.read_only_reason,
            "editable_fields": list(self.editable_fields),
            "can_promote": self.can_promote,
            "can_soft_delete": self.can_soft_delete,
            "can_reinforce": self.can_reinforce,
            "keyword_search": self.keyword_search,
            "vector_search": self.vector_search,
            "sessions": self.sessions,
            "graph": self.graph,
        }


@runtime_checkable
class Source(Protocol):
    kind: Kind
    root: Path

    def capabilities(self) -> Capabilities: ...

    def count(self, query: MemoryQuery) -> int: ...

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]: ...

    def get(self, memory_id: str) -> Memory | None: ...

    def owns(self, record_id: str) -> bool: ...

    def read_record(self, record_id: str) -> Snapshot | None: ...

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None: ...

    def change_token(self) -> str: ...

    def counts_by(self, column: str) -> dict[str, int]: ...

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """Counts of memories per (time bin, group value); bin_format is a strftime format."""
        ...

    def keyword_search(self, text: str, query: MemoryQuery, k: int) -> list[Memory]: ...

    def close(self) -> None: ...


def revision_of(snapshot: Snapshot | None) -> str:
    """A short stable hash of a record snapshot (embeddings rounded)."""
    if snapshot is None:
        return ""
    return hashlib.sha1(canonical_json(snapshot).encode("utf-8")).hexdigest()[:12]


def canonical_json(value: Any) -> str:
    return json.dumps(_rounded(value), sort_keys=True, ensure_ascii=False, default=str)


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def same_record(a: Snapshot | None, b: Snapshot | None) -> bool:
    return canonical_json(a) == canonical_json(b)


def _label(value: Any) -> str:
    return value.value if hasattr(value, "value") else str(value)


def count_by(memories: Iterable[Memory], column: str) -> dict[str, int]:
    """counts_by for stores that filter in Python (markdown files, Chroma metadata)."""
    counts: dict[str, int] = {}
    for memory in memories:
        key = _label(getattr(memory, column))
        counts[key] = counts.get(key, 0) + 1
    return counts


def bin_by(memories: Iterable[Memory], bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
    """bin_counts for stores that filter in Python; group_by "kind" groups by source kind."""
    counts: dict[tuple[str, str], int] = {}
    for memory in memories:
        group = memory.source.kind if group_by == "kind" else getattr(memory, group_by)
        key = (memory.created_at.strftime(bin_format), _label(group))
        counts[key] = counts.get(key, 0) + 1
    return counts


def keyword_rank(memories: Iterable[Memory], text_query: str, k: int) -> list[Memory]:
    """keyword_search for stores that filter in Python: word hits, most first."""
    words = [w.lower() for w in re.findall(r"\w+", text_query)]
    if not words:
        return []
    scored = []
    for memory in memories:
        body = memory.content.lower()
        score = sum(body.count(w) for w in words)
        if score:
            scored.append((score, memory.id, memory))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [m for _, _, m in scored[:k]]

def matches(memory: Memory, query: MemoryQuery) -> bool:
    """The query's filters, evaluated in Python for stores that cannot run them."""
    if query.statuses and memory.status not in query.statuses:
        return False
    if query.channels and memory.channel not in query.channels:
        return False
    if query.layers and memory.layer not in query.layers:
        return False
    if query.since and memory.created_at < query.since:
        return False
    if query.until and memory.created_at >= query.until:
        return False
    if query.contains and query.contains.lower() not in memory.content.lower():
        return False
    return True


def page_of(memories: list[Memory], query: MemoryQuery, limit: int, offset: int) -> list[Memory]:
    """page for stores that filter in Python: sorted by the query's order, then sliced."""
    found = sorted(memories, key=sort_key(query.order), reverse=query.descending)
    return found[offset : offset + limit]
