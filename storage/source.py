"""The protocol every store kind implements.

Reads go through count/page/get with a MemoryQuery the store evaluates itself.
Writes go through one primitive, ``write_record(record_id, expected, new)``:
``expected`` is the snapshot the caller read (None: the record must not exist),
``new`` is the snapshot to leave (None: remove it). A store refuses with
ConflictError when the current record is not ``expected``. Curation, undo and
redo are all sequences of that primitive, so undo is the same call with the
two snapshots swapped.

What a curation step writes is the source's answer to one planning call,
``plan(operation, memory, fields, context)``: the record changes over every copy
the source keeps of that memory. The Curator never asks what kind a source is.
A source whose writer can fail on damage it could have seen first also offers
``prepare_write(changes)`` (PreparedWrites), called before a step writes anything.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .errors import NotFoundError
from .model import Kind, Memory, ScratchEntry, Session, Status, Turn
from .query import MemoryQuery, Order, sort_key

Snapshot = dict[str, Any]

# What plan() is asked to do.
EDIT, PROMOTE, DELETE, PURGE, RESTORE, REINFORCE, REEMBED = (
    "edit", "promote", "delete", "purge", "restore", "reinforce", "reembed"
)


def changed_values(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """after's values that differ from before's, in value or in type (1, 1.0 and True are not the
    same value stored), with any before has not; a value a step left is mostly before's own
    object, which `is` settles."""
    return {k: v for k, v in after.items()
            if k not in before or ((was := before[k]) is not v and (was != v or type(was) is not type(v)))}


@dataclass
class Change:
    """One record written by a curation step: before and after snapshots.

    writer: the source (a native part, a format's source) that writes the record, set by whoever
    planned the change, so that applying, reverting and undoing it never ask which source holds
    the record again. A change read back from the journal has none until the store routes it."""

    record: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    writer: Any = field(default=None, compare=False, repr=False)
    # after's columns that differ from before's (changed_values), where the planner or the writer
    # worked them out: what the journal keeps of after (journal.log._kept_as), not found again.
    sets: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"record": self.record, "before": self.before, "after": self.after}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Change:
        return cls(data["record"], data.get("before"), data.get("after"))


@dataclass
class Plan:
    """A source's answer to plan(): the changes over every copy, in the order to write them."""

    changes: list[Change] = field(default_factory=list)
    # The memory's id once the step is done (a promoted copy, an edited markdown block).
    new_id: str | None = None
    notes: list[str] = field(default_factory=list)
    # For REEMBED: the text whose vector goes into every change that carries "embedding".
    embed_text: str | None = None


@dataclass(frozen=True)
class RowHead:
    """What a bulk step's checks read of a memory planned from its row alone (plan_rows), where
    building every Memory would cost more than the step's own SQL."""

    id: str
    channel: str
    status: Status
    content: str


class Checked(Protocol):
    """What a curation step's check reads of a memory: a Memory, or a RowHead."""

    @property
    def id(self) -> str: ...
    @property
    def channel(self) -> str: ...
    @property
    def status(self) -> Status: ...
    @property
    def content(self) -> str: ...


@dataclass(frozen=True)
class PlanContext:
    """What a plan may need beyond the memory: the time of the step and the store's embedder."""

    now: str
    embed: Callable[[str], list[float] | None]
    # The store's promotion target for markdown (MEMORY.md) and its thresholds are settings.
    settings: Any = None


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
    # Optional parts of the protocol a source offers, announced here rather than probed:
    # sessions/turns/turn_bin_counts, scratch_entries, history (the owner's own log),
    # entities/relations/memories_about, stale_ids (vectors to re-embed).
    sessions: bool = False
    scratchpad: bool = False
    history: bool = False
    graph: bool = False
    reembed: bool = False

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
            "scratchpad": self.scratchpad,
            "history": self.history,
            "graph": self.graph,
            "reembed": self.reembed,
        }


@runtime_checkable
class Source(Protocol):
    kind: Kind
    root: Path
    format: str  # "mnemoscope" for the native workspace, else the tool ("mem0", "chroma", ...)
    label: str  # what a person calls it

    def describe(self) -> dict[str, Any]:
        """What `info` shows of the source beyond the counts."""
        ...

    def problems(self) -> list[str]:
        """What a user should know: drift, dangling rows, unread tables."""
        ...

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        """What the source can do; with record_id, what it can do to that record."""
        ...

    def count(self, query: MemoryQuery) -> int: ...

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        """limit memories in the query's order from offset. A source that can seek sets
        `seeks = True` and takes after=<Memory> too: the memories after that one."""
        ...

    def get(self, memory_id: str) -> Memory | None: ...

    def owns(self, record_id: str) -> bool: ...

    def read_record(self, record_id: str) -> Snapshot | None: ...

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None: ...

    def change_token(self) -> str: ...

    def counts_by(self, column: str, query: MemoryQuery = ...) -> dict[str, int]:
        """How many memories the query matches, per value of column (channel, layer, status,
        or kind: the kind of store each one lives in). Copies of one memory count once."""
        ...

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """Counts of memories per (time bin, group value); bin_format is a strftime format."""
        ...

    def keyword_search(self, text: str, query: MemoryQuery, k: int) -> list[Memory]: ...

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        """The record changes that carry out operation on memory (fields: what EDIT sets,
        PROMOTE's "to" and "reason"). Raises UnsupportedError for what the source cannot do."""
        ...

    def close(self) -> None: ...


@dataclass
class StoreParts:
    """What an opener found at a path or a server: its sources and its journal, from which
    ``opening`` builds the one MemoryStore (openers never build it themselves).
    location: what a person is shown and what reopens it (a URL without secrets; None: root);
    opened_as: what open_store takes to open it again (target, vectors URL)."""

    root: Path
    sources: list[Source]
    journal: Any  # journal.Journal, a layer above this module
    read_only: bool = False
    location: str | None = None
    opened_as: tuple[str, str | None] | None = None

    def close(self) -> None:
        for source in self.sources:
            source.close()
        self.journal.close()


class SessionSource(Protocol):
    """Sessions and their turns (Capabilities.sessions), and their scratchpads (.scratchpad)."""

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]: ...

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]: ...

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]: ...


@runtime_checkable
class PreparedWrites(Protocol):
    """A source whose writes can fail on what it could find out first (Chroma's client, which
    writes as it opens, on damage its files show; a trigger another program put on memory.db):
    before a curation step writes anything, its journal entry included, the Curator hands it
    every change the step makes there. It refuses with a StoreError."""

    def prepare_write(self, changes: Sequence[Change]) -> None: ...


def prepare_writes(changes: Iterable[Change]) -> None:
    """Hand each source that prepares its writes (PreparedWrites) the changes it will write, as
    each change names its writer."""
    by_source: dict[int, tuple[Any, list[Change]]] = {}
    for change in changes:
        by_source.setdefault(id(change.writer), (change.writer, []))[1].append(change)
    for source, own in by_source.values():
        if isinstance(source, PreparedWrites):
            source.prepare_write(own)


@runtime_checkable
class ScratchWriter(Protocol):
    """A source whose scratchpad keys are records of its write primitive (read_record /
    write_record), so that editing and deleting one is a curation step like any other."""

    scratch_note: str  # what a user should know when writing there ("" for nothing)

    def scratch_record(self, session_id: str, key: str) -> str:
        """The record id of one key; raises UnsupportedError for a key that is no scratchpad row."""
        ...

    def is_scratch_record(self, record_id: str) -> bool: ...

    def scratch_snapshot(self, current: Snapshot | None, session_id: str, key: str, value: Any, now: str) -> Snapshot:
        """The record holding value as the owner writes it (current itself if the owner would read
        the same value back from it)."""
        ...

    def scratch_entry(self, snapshot: Snapshot) -> ScratchEntry: ...


@runtime_checkable
class PurgeResidue(Protocol):
    """A source whose files can keep a purged record's text beyond the record itself: the owner's
    own log of it, a full-text index's segments, a queue of the writes it took, the pages SQLite
    freed, a -wal. Once a purge has removed records, the Curator hands each such source the changes
    it wrote; it removes what remains of their text and returns what it could not (notes)."""

    def forget_purged(self, removed: Sequence[Change]) -> list[str]: ...


class HistorySource(Protocol):
    """The owning tool's own log of each memory (Capabilities.history)."""

    def history(self, memory_id: str) -> list[dict[str, Any]]: ...


def revisions_of(source: Any, ids: Sequence[str]) -> dict[str, str]:
    """The revision of each memory of ids source holds: from its own revisions(ids) where it has
    one (a read over the ids where the data lives), else from each memory it gets by id."""
    if not ids:
        return {}
    at_once = getattr(source, "revisions", None)
    if at_once is not None:
        return dict(at_once(ids))
    return {memory_id: memory.revision for memory_id in ids if (memory := source.get(memory_id)) is not None}


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


def in_apply_order(changes: list[Change]) -> list[Change]:
    """The order to write one step's changes in: blocks addressed by their place in a file
    (markdown: text plus which occurrence of it) bottom-up within the file, so that removing
    or rewriting one cannot move the next; every other change keeps its place."""
    slots = [i for i, c in enumerate(changes) if c.before is not None and "line" in c.before and "path" in c.before]
    def place(change: Change) -> tuple[str, int]:
        before = change.before or {}
        return str(before["path"]), -int(before["line"])

    bottom_up = sorted((changes[i] for i in slots), key=place)
    ordered = list(changes)
    for slot, change in zip(slots, bottom_up, strict=True):
        ordered[slot] = change
    return ordered


def same_content(a: Snapshot | None, b: Snapshot | None) -> bool:
    """same_record, except where a markdown block is: its line is where it was read, not what it says."""
    def located(s: Snapshot | None) -> Snapshot | None:
        return {k: v for k, v in s.items() if k != "line"} if s is not None and "text" in s else s

    return same_record(located(a), located(b))


def _label(value: Any) -> str:
    return value.value if hasattr(value, "value") else str(value)


def count_by(memories: Iterable[Memory], column: str) -> dict[str, int]:
    """counts_by for stores that filter in Python (markdown files, Chroma metadata)."""
    counts: dict[str, int] = {}
    for memory in memories:
        key = memory.source.kind.value if column == "kind" else _label(getattr(memory, column))
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
    if query.ids and memory.id not in query.id_set:
        return False
    return True


def page_of(memories: list[Memory], query: MemoryQuery, limit: int, offset: int) -> list[Memory]:
    """page for stores that filter in Python: sorted by the query's order, then sliced."""
    found = sorted(memories, key=sort_key(query.order, query.decay), reverse=query.descending)
    return found[offset : offset + limit]


def merged_page(
    sources: Iterable[Any], query: MemoryQuery, limit: int, offset: int, after: Memory | None = None
) -> list[Memory]:
    """One page over several sources: each pages up to offset + limit (after `after`, if given),
    merged in the query's order."""
    import heapq
    import itertools

    wanted = list(sources)
    if len(wanted) == 1:
        return page_after(wanted[0], query, limit, offset, after)
    pages = [page_after(s, query, offset + limit, 0, after) for s in wanted]
    merged = heapq.merge(*pages, key=sort_key(query.order, query.decay), reverse=query.descending)
    return list(itertools.islice(merged, offset, offset + limit))


def page_after(source: Any, query: MemoryQuery, limit: int, offset: int, after: Memory | None) -> list[Memory]:
    """source's page of limit memories from offset, counted from after the memory `after` if given.
    A source that seeks (its page takes after=) does it where the data lives; for the others the
    pages before it are read and passed over in Python."""
    if query.order is Order.EFFECTIVE_SALIENCE and not getattr(source, "orders_by_effective_salience", False):
        return effective_salience_page(source, query, limit, offset, after)
    if after is None:
        return source.page(query, limit, offset)
    if getattr(source, "seeks", False):
        return source.page(query, limit, offset, after=after)
    return page_after_by_key(source, query, limit, offset, after)


def page_after_by_key(source: Any, query: MemoryQuery, limit: int, offset: int, after: Memory) -> list[Memory]:
    """The memories after `after` in the query's order, found by reading source's pages from the
    first and passing over those that come before it in Python."""
    key = sort_key(query.order, query.decay)
    bound = key(after)
    beyond = (lambda m: key(m) < bound) if query.descending else (lambda m: key(m) > bound)
    found: list[Memory] = []
    start, size = 0, max(256, offset + limit)
    while len(found) < offset + limit:
        rows = source.page(query, size, start)
        found += filter(beyond, rows)
        if len(rows) < size:
            break
        start, size = start + size, size * 2
    return found[offset : offset + limit]


def effective_salience_page(
    source: Any, query: MemoryQuery, limit: int, offset: int, after: Memory | None
) -> list[Memory]:
    """A page in effective-salience order from a source that cannot order so where its data
    lives: every memory the query keeps is read (in stored-salience order) and sorted here."""
    key = sort_key(query.order, query.decay)
    by_salience = dataclasses.replace(query, order=Order.SALIENCE)
    found: list[Memory] = []
    start, size = 0, 1024
    while True:
        rows = source.page(by_salience, size, start)
        found += rows
        if len(rows) < size:
            break
        start, size = start + size, size * 2
    found.sort(key=key, reverse=query.descending)
    if after is not None:
        bound = key(after)
        found = [m for m in found if (key(m) < bound if query.descending else key(m) > bound)]
    return found[offset : offset + limit]


def counts_by_columns(source: Any, columns: Sequence[str], query: MemoryQuery) -> dict[str, dict[str, int]]:
    """source.counts_by for several columns at once: in one query where the source can group by
    all of them together (it has counts_by_columns), else one counts_by per column."""
    if hasattr(source, "counts_by_columns"):
        return dict(source.counts_by_columns(columns, query))
    return {column: source.counts_by(column, query) for column in columns}


def summed(dicts: Iterable[dict[Any, int]]) -> dict[Any, int]:
    total: dict[Any, int] = {}
    for d in dicts:
        for key, n in d.items():
            total[key] = total.get(key, 0) + n
    return total


def memories_of(source_for: Callable[[str], Any], ids: Sequence[str],
                sources: dict[str, Any] | None = None) -> dict[str, Memory]:
    """The memory of each id found (a copy's id finds its memory), keyed by the id asked for: ids
    routed by source_for (NotFoundError: none holds it), each source asked for its ids at once
    where it reads many in one query (get_many). sources: filled with each id's source."""
    by_source: dict[int, tuple[Any, list[str]]] = {}
    for memory_id in dict.fromkeys(ids):
        try:
            source = source_for(memory_id)
        except NotFoundError:
            continue
        if sources is not None:
            sources[memory_id] = source
        by_source.setdefault(id(source), (source, []))[1].append(memory_id)
    found: dict[str, Memory] = {}
    for source, wanted in by_source.values():
        if hasattr(source, "get_many"):
            found.update(source.get_many(wanted))
        else:
            found.update((i, m) for i in wanted if (m := source.get(i)) is not None)
    return found


def plans_of(operation: str, chosen: list[tuple[Memory, Any]], fields: dict[str, Any], context: PlanContext) -> list[Plan]:
    """source.plan of each (memory, source), a source that plans many at once (plan_many) asked
    once for all of its memories (even one: it plans from the rows get_many just read)."""
    by_source: dict[int, list[int]] = {}
    for n, (_memory, source) in enumerate(chosen):
        by_source.setdefault(id(source), []).append(n)
    plans: dict[int, Plan] = {}
    for positions in by_source.values():
        source = chosen[positions[0]][1]
        memories = [chosen[n][0] for n in positions]
        if hasattr(source, "plan_many"):
            plans.update(zip(positions, source.plan_many(operation, memories, fields, context), strict=True))
        else:
            plans.update((n, source.plan(operation, chosen[n][0], fields, context)) for n in positions)
    return [plans[n] for n in range(len(chosen))]


def writer_runs(changes: list[Change]) -> list[tuple[Any, list[Change]]]:
    """changes cut into runs of consecutive changes with one writer, in order."""
    runs: list[tuple[Any, list[Change]]] = []
    for change in changes:
        if runs and runs[-1][0] is change.writer:
            runs[-1][1].append(change)
        else:
            runs.append((change.writer, [change]))
    return runs
