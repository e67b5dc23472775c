"""``MemoryStore``: every source found at one path, read and curated as one store (the façade).

It routes ids to the source that holds them, merges pages, counts and searches over sources,
tells listeners of changes, and adds memories in bulk. ``opening.py`` builds it from what the
openers found.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import heapq
import itertools
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .consistency_report import ConsistencyChecks, Progress, Report
from .embedders.base import Embedder, RecordedEmbedder, check_match, recorded_embedders
from .embedders.choice import make_embedder
from .errors import (
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    UnsupportedError,
)
from .extras import UnreadPart
from .journal.baseline import RECORD_PREFIX as BASELINE_RECORD_PREFIX
from .journal.baseline import BaselineRecords
from .journal.log import Journal
from .model import AuditEntry, Entity, Kind, Memory, Relation, ScratchEntry, Session, Status, Turn
from .query import MemoryQuery
from .recovery import pending_notes, recover_interrupted
from .retention import Upcoming, gathered, keeps_rule
from .salience import SalienceModel
from .settings import SETTINGS_KEY, StoreSettings
from .source import (
    Capabilities,
    Change,
    HistorySource,
    Source,
    counts_by_columns,
    merged_page,
    revisions_of,
    summed,
)

if TYPE_CHECKING:
    from .native.chroma.vector_collection import VectorCollection
    from .native.copies.repair import RepairPlan
    from .native.db.tables import NativeDb
    from .native.workspace import NativeWorkspace

@dataclass(frozen=True)
class StoreEvent:
    """What changed in a store: the ids a step touched (empty with everything=True when
    another process wrote and the store cannot say what), and whether the journal moved
    (so Undo and Redo name another step)."""

    ids: tuple[str, ...] = ()
    journal: bool = False
    everything: bool = False


Listener = Callable[[StoreEvent], None]
BULK_BATCH = 20_000  # rows per transaction of add_memories
NOTIFIED_IDS = 10_000  # a bulk add of more says "everything" instead of naming each id


class MemoryStore:
    """Every source found at one path, read and curated as one store.

    Sources are the native workspace (memory.db, vectors/, markdown: one source
    that owns the copies of a memory) and one source per other tool's store.
    Listeners added with subscribe() hear of every change made through this
    object, and of other processes' writes when poll() sees them.
    """

    def __init__(
        self, root: Path, sources: list[Source], journal: Journal, *, read_only: bool = False, location: str | None = None
    ) -> None:
        # root: the folder the store's files (or, for a server, Mnemoscope's own files about it) live in;
        # location: what a person is shown and what reopens it, a path or a server URL without secrets.
        self.root = root if isinstance(root, Path) else Path(root)
        self.location = location or str(self.root)
        # What open_store takes to open it again (the recent list keeps it): target, vectors URL.
        self.opened_as: tuple[str, str | None] = (self.location, None)
        self.read_only = read_only
        self._sources = sources
        self._journal = journal
        self._workspace: NativeWorkspace | None = _workspace_of(sources)
        vectors = self._workspace.vectors if self._workspace is not None else None
        if vectors is not None and self.settings.embedder:
            vectors.embedder_override = self.configured_embedder()
        self._listeners: list[Listener] = []
        self._token = ""
        self.own_steps: collections.deque[int] = collections.deque(maxlen=500)  # made or replayed through this open
        if not read_only:
            self.recovered = recover_interrupted(self)

    @functools.cached_property
    def findings_baseline(self) -> BaselineRecords:
        """The store's accepted findings (storage/findings), kept with its journal."""
        return BaselineRecords(self._journal)

    # Read when first asked for: a read-only open that shows a page never pays for them.
    @functools.cached_property
    def settings(self) -> StoreSettings:
        return StoreSettings.from_dict(self._journal.read_setting(SETTINGS_KEY))

    @functools.cached_property
    def recovered(self) -> list[str]:
        """What opening did about steps a killed process never finished (read-only: would do)."""
        return pending_notes(self)

    def close(self) -> None:
        for source in self._sources:
            source.close()
        self._journal.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- change events ---------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call listener on every change; returns the call that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def notify(self, event: StoreEvent) -> None:
        self._token = self.change_token()
        for listener in list(self._listeners):
            listener(event)

    def poll(self) -> bool:
        """Whether another process changed the store since the last look; tells listeners."""
        token = self.change_token()
        if not self._token:
            self._token = token
            return False
        if token == self._token:
            return False
        self.refresh_copies()
        self.notify(StoreEvent(journal=True, everything=True))
        return True

    def require_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyError(f"{self.location} was opened read-only; nothing was written.")

    def restored_copies(self, memory: Memory | None, removed: list[Change]) -> list[Change]:
        """The records a delete removed, put back by a restore: a markdown copy of a memory.db
        memory edited while deleted says its text as the memory now does."""
        markdown = self._workspace.markdown if self._workspace is not None else None
        if markdown is None or memory is None:
            return removed
        entry = self._journal.last_with(("delete",), memory.id)
        row = next((c.before for c in self._journal.changes(entry.seq) if c.record == memory.id), None) if entry else None
        if not row or row.get("content") == memory.content:
            return removed
        from .native.markdown.blocks import render_block

        out = []
        for c in removed:  # its copy: the block of its file that said its text when it was deleted
            if (c.after is not None and markdown.owns(c.record) and c.after.get("path") == row.get("md_file")
                    and render_block(c.after["text"], row["content"]) == c.after["text"]):
                c = Change(c.record, c.before, {**c.after, "text": render_block(c.after["text"], memory.content)}, c.writer)
            out.append(c)
        return out

    def refresh_copies(self) -> None:
        if self._workspace is not None:
            self._workspace.refresh_copies()

    # -- settings ---------------------------------------------------------------------

    def save_settings(self, settings: StoreSettings) -> None:
        self.require_writable()
        self._journal.write_setting(SETTINGS_KEY, settings.to_dict())
        self.settings = settings

    def configured_embedder(self) -> Embedder | None:
        """The embedder this store's settings name, if it runs here (None: none is set, or it
        names a model with no endpoint configured)."""
        s = self.settings
        return make_embedder(s.embedder, s.embedder_url, s.embedder_dimensions) if s.embedder else None

    def recorded_embedders(self) -> list[RecordedEmbedder]:
        """What each vector collection records about the model that wrote its vectors."""
        return recorded_embedders(self.vector_sources())

    def checked_embedder(self, embedder: Embedder | None = None) -> Embedder | None:
        """embedder (default: the store's own) once its model and dimension are the vectors'
        where the store records them; EmbedderMismatchError naming both where not."""
        embedder = embedder if embedder is not None else self.embedder()
        if embedder is not None:
            check_match(embedder, self.recorded_embedders())
        return embedder

    def use_embedder(self, embedder: Embedder | None) -> None:
        """Make embedder the store's (None: forget it), once it matches the vectors the store
        holds: its model, its endpoint if it has one, and its dimensions go into the settings."""
        if embedder is not None:
            check_match(embedder, self.recorded_embedders())
        self.save_settings(
            dataclasses.replace(
                self.settings,
                embedder=embedder.name if embedder is not None else None,
                embedder_url=getattr(embedder, "base_url", None),
                # What is asked of the model: an endpoint told no dimensions is sent none.
                embedder_dimensions=getattr(embedder, "requested_dimensions", embedder.dimensions)
                if embedder is not None else None,
            )
        )
        vectors = self._workspace.vectors if self._workspace is not None else None
        if vectors is not None:
            vectors.embedder_override = self.configured_embedder()

    def embedder(self) -> Embedder | None:
        """The embedder for new vectors and text queries, if one runs offline here."""
        if self.settings.embedder:
            return self.configured_embedder()
        for vectors in self.vector_sources():
            for name in vectors.collections():
                found = vectors.embedder_for(name)
                if found is not None:
                    return found
        return None

    def vector_sources(self) -> list[Any]:
        """The Chroma directories of the store (the workspace's, a crew's, mem0's)."""
        found: list[Any] = []
        for s in self._sources:
            if s is self._workspace:
                if self._workspace.vectors is not None:
                    found.append(self._workspace.vectors)
            elif s.capabilities().vector_search:
                found.append(s)
        return found

    def vector_collections(self) -> tuple[list[VectorCollection], list[str]]:
        """The collections of every vector source whose vectors can be read a batch at a time
        (Chroma's: the workspace's directory, a server, another tool's Chroma store), empty ones
        too, and a note on each vector source whose vectors cannot be (sqlite-vec, pgvector,
        Qdrant). The workspace's own collections are native when it has a memory.db: their
        mirror records stand for its memories (VectorCollection.mirror_kind: memory.db's kind)."""
        db = self._workspace.db if self._workspace is not None else None
        own = self._workspace.vectors if self._workspace is not None and db is not None else None
        found: list[VectorCollection] = []
        notes: list[str] = []
        for source in self.vector_sources():
            listed = getattr(source, "vector_collections", None)
            if listed is None:
                notes.append(f"{getattr(source, 'label', source)}: its vectors cannot be mapped yet")
            elif source is own and db is not None:
                found += [c.as_native(db.kind) for c in listed()]
            else:
                found += listed()
        return found, notes

    # -- reading -----------------------------------------------------------------------

    @property
    def kinds(self) -> list[Kind]:
        """The kinds of store found, native parts first."""
        kinds = self._workspace.kinds if self._workspace is not None else []
        return kinds + [s.kind for s in self._sources if s is not self._workspace]

    @property
    def foreign(self) -> list[Source]:
        """Sources in formats other tools own (mem0, LangGraph, ...)."""
        return [s for s in self._sources if getattr(s, "format", "") not in NATIVE_FORMATS]

    def unread(self) -> list[UnreadPart]:
        """The parts of the store not read because a package (an extra) is not installed."""
        return [part for s in self._sources if (part := _unread_part(s)) is not None]

    def _with(self, capability: str) -> list[Any]:
        return [s for s in self._sources if getattr(s.capabilities(), capability)]

    def sessions(self, channels: tuple[str, ...] = ()) -> list[Session]:
        return [x for s in self._with("sessions") for x in s.sessions(channels)]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        for source in self._with("sessions"):
            if getattr(source, "holds_session", lambda i, s=source: any(x.id == i for x in s.sessions()))(session_id):
                return list(source.turns(session_id, limit=limit, offset=offset))
        return []

    def turns_are_memories(self, session_id: str) -> bool:
        """Whether a session's turns are memories already (a format that gives each message as one)."""
        for source in self._with("sessions"):
            if getattr(source, "holds_session", lambda i, s=source: any(x.id == i for x in s.sessions()))(session_id):
                return bool(getattr(source, "turns_are_memories", False))
        return False

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return [e for s in self._with("scratchpad") for e in s.scratch_entries(session_id)]

    def turn_bin_counts(self, bin_format: str, since: Any, until: Any) -> dict[str, int]:
        return summed(s.turn_bin_counts(bin_format, since, until) for s in self._with("sessions"))

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """Memories per (time bin, group) over every source the query's kinds take in."""
        return summed(s.bin_counts(query, bin_format, group_by) for s in self._sources if query.wants_kind(s.kind))

    def salience_spread(
        self, model: SalienceModel, at: datetime, bins: int, lowest: int
    ) -> tuple[list[int], list[Memory]]:
        """Active memories' effective salience at ``at``: how many fall in each of ``bins`` equal
        bins of [0, 1], and the ``lowest`` least salient, weakest first (a salience its owner
        decays itself as it is; none where the owner keeps none). A part that computes it where
        its data lives (memory.db, in SQL) does; the others' active memories are read here."""
        histogram = [0] * bins
        weakest: list[Memory] = []
        active = MemoryQuery(statuses=(Status.ACTIVE,))
        for part in self._parts():
            if hasattr(part, "salience_histogram"):
                counted = part.salience_histogram(model.decay_rate, model.access_boost, at, bins)
                histogram = [a + b for a, b in zip(histogram, counted, strict=True)]
                weakest += part.lowest_salience(model.decay_rate, model.access_boost, at, lowest)
                continue
            scored = [(value, m) for m in part.page(active, limit=part.count(active))
                      if (value := model.effective(m, at)) is not None]  # no salience kept: not in the spread
            for value, _memory in (scored if bins else ()):
                histogram[min(max(int(value * bins), 0), bins - 1)] += 1
            weakest += [m for _v, m in heapq.nsmallest(lowest, scored, key=lambda vm: (vm[0], vm[1].id))]
        weakest.sort(key=lambda m: (model.effective(m, at) or 0.0, m.id))
        return histogram, weakest[:lowest]

    def canonical_id(self, memory_id: str) -> str:
        """The memory a copy's id belongs to (a mirror vector or markdown block names its memory.db
        row); any other id is its own."""
        return self._workspace.canonical_id(memory_id) if self._workspace is not None else memory_id

    # -- search primitives: the store routes, views/search.py ranks ---------------------------

    def keyword_lists(self, text: str, query: MemoryQuery, k: int) -> dict[str, list[Memory]]:
        """One keyword-ranked list per source (per native part), named for it: two SQLite files
        of one store are two lists."""
        lists: dict[str, list[Memory]] = {}
        for s in self._sources:
            per_part = s.keyword_lists(text, query, k) if s is self._workspace else {s.label: s.keyword_search(text, query, k)}
            for name, ranked in per_part.items():
                name = name or s.kind.value
                while name in lists:
                    name += "'"
                lists[name] = ranked
        return lists

    def document_frequencies(self, terms: Sequence[str], query: MemoryQuery) -> tuple[int, dict[str, int]]:
        """The number of memories, and of memories holding each term, summed over the store's
        parts: from a part's full-text index where it keeps one (indexes_words), from one pass over
        a part's texts where it counts every term at once (document_frequencies), else counted
        under the query's filters, a count per term."""
        base = dataclasses.replace(query, contains=None)
        total = 0
        found = dict.fromkeys(terms, 0)
        for part in self._parts():
            counted_at_once = getattr(part, "document_frequencies", None)
            if getattr(part, "indexes_words", False) and counted_at_once is not None:
                counted, per_term = counted_at_once(terms, base)
            else:
                counted = part.count(base)
                if not counted:  # nothing of its own here (a workspace's vector copies): no statistics
                    continue
                if counted_at_once is not None:
                    counted, per_term = counted_at_once(terms, base)
                else:
                    per_term = {term: part.count(dataclasses.replace(base, contains=term)) for term in terms}
            total += counted
            for term in terms:
                found[term] += per_term[term]
        return total, found

    def _parts(self) -> list[Any]:
        """Every source, the native workspace as its parts (memory.db, the vectors, markdown)."""
        return [p for s in self._sources for p in (s.parts if s is self._workspace else [s])]

    # -- the journal, for readers ---------------------------------------------------------------

    def history(self, limit: int = 100, target: str | None = None) -> list[AuditEntry]:
        """The store's curation steps, newest first (of one memory, with target)."""
        return self._journal.history(limit=limit, target=target)

    def next_steps(self) -> tuple[AuditEntry | None, AuditEntry | None]:
        """The step Undo would undo and the one Redo would redo (None: nothing to): this open's
        own where another curator's later steps touch other memories (Journal.step_to)."""
        return self._journal.next_to_undo(self.own_steps), self._journal.next_to_redo(self.own_steps)

    def read_setting(self, key: str) -> Any:
        """A value Mnemoscope keeps about this store (beside its StoreSettings), None if unset."""
        return self._journal.read_setting(key)

    def write_setting(self, key: str, value: Any) -> None:
        self.require_writable()
        self._journal.write_setting(key, value)

    def owner_history(self, memory_id: str) -> list[dict[str, Any]]:
        """The owning tool's own log of a memory (mem0's history.db), where it keeps one."""
        source = self.source_for(memory_id)
        return list(cast(HistorySource, source).history(memory_id)) if source.capabilities().history else []

    def owner_audit(self, limit: int = 100) -> list[dict[str, Any]]:
        """The store-wide audit trail its owner keeps itself (AgentX's memory_audit_log), newest
        first, each entry naming its owner ("owner"): the owner's record, apart from Mnemoscope's
        own journal (history)."""
        return [{"owner": s.label, **entry} for s in self._sources if hasattr(s, "owner_audit")
                for entry in s.owner_audit(limit)][:limit]

    def problems(self) -> list[str]:
        """What a user should know: interrupted steps undone on open; files left out (links
        outside the store); in foreign stores drift, dangling rows, unread tables."""
        return self.recovered + [f"{s.label}: {p}" for s in self._sources for p in s.problems()]

    def source_for(self, record_id: str) -> Source:
        if record_id.startswith(BASELINE_RECORD_PREFIX):  # an accepted finding: Mnemoscope's own state
            return cast(Source, self.findings_baseline)
        # memory.db keeps whatever ids its agent gave, so the native workspace claims any id: the
        # other sources, whose ids carry their prefix, are asked first.
        for source in self._sources:
            if source is not self._workspace and source.owns(record_id):
                return source
        if self._workspace is not None and self._workspace.owns(record_id):
            return self._workspace
        raise NotFoundError(f"No memory {record_id} in {self.location} (no store holds that kind).")

    def sole_source(self, record_ids: Sequence[str]) -> Source | None:
        """The one source that can hold every record of record_ids, or None (a lone workspace: unasked)."""
        if self._sources == [self._workspace] and not any(r.startswith(BASELINE_RECORD_PREFIX) for r in record_ids):
            return self._workspace
        try:
            found = {id(s): s for s in map(self.source_for, record_ids)}
        except NotFoundError:
            return None
        return next(iter(found.values())) if len(found) == 1 else None

    def writer_for(self, record_id: str) -> Any:
        """The source that writes record_id: the native part (memory.db, the vectors, the markdown
        files) for a workspace record, else the source that holds it."""
        source = self.source_for(record_id)
        return self._workspace.part_for(record_id) if source is self._workspace else source

    def capabilities(self, memory_id: str) -> Capabilities:
        """What can be done to one memory, by the source that holds it."""
        caps = self.source_for(memory_id).capabilities(memory_id)
        if not self.read_only:
            return caps
        return dataclasses.replace(
            caps, read_only=True, read_only_reason="opened read-only", editable_fields=(),
            can_promote=False, can_soft_delete=False, can_reinforce=False, reembed=False,
        )

    def count(self, query: MemoryQuery = MemoryQuery()) -> int:
        return sum(s.count(query) for s in self._sources)

    def page(
        self, query: MemoryQuery = MemoryQuery(), limit: int = 50, offset: int = 0, after: Memory | None = None
    ) -> list[Memory]:
        """limit memories in the query's order from offset; with after, counted from the memory
        after that one (the last row of the page before: a seek, as fast deep as at the top)."""
        return merged_page(self._sources, query, limit, offset, after)

    def revisions(self, ids: Iterable[str]) -> dict[str, str]:
        """The current revision (Memory.revision) of each memory of ids the store holds; an id it
        no longer holds is left out. Read where the data lives, each source asked for its ids at
        once (memory.db: one SELECT over them, its rows hashed as read); no memory is built. A
        window compares them with the rows it shows to find those another process changed."""
        by_source: dict[int, tuple[Source, list[str]]] = {}
        for memory_id in dict.fromkeys(ids):
            try:
                source = self.source_for(memory_id)
            except NotFoundError:
                continue
            by_source.setdefault(id(source), (source, []))[1].append(memory_id)
        found: dict[str, str] = {}
        for source, wanted in by_source.values():
            found.update(revisions_of(source, wanted))
        return found

    def get(self, memory_id: str) -> Memory:
        memory = self.find(memory_id)
        if memory is None:
            raise NotFoundError(f"No memory {memory_id} in {self.location}.")
        return memory

    def find(self, memory_id: str) -> Memory | None:
        """The memory, or None; a copy's id (a mirror vector, a markdown copy) finds its memory."""
        try:
            source = self.source_for(memory_id)
        except NotFoundError:
            return None
        return source.get(memory_id)

    def copies(self, memory_id: str) -> list[dict[str, Any]]:
        """Where a memory is also kept (vector, markdown), and whether each copy is current."""
        return self._workspace.copies(memory_id) if self._workspace is not None else []

    def change_token(self) -> str:
        return "|".join(s.change_token() for s in self._sources)

    def counts(self, query: MemoryQuery = MemoryQuery(statuses=()), axes: Sequence[str] | None = None) -> dict[str, Any]:
        """How many memories the query matches (all statuses by default), per kind, channel, layer
        and status (or the axes of COUNT_AXES named), and in all; each axis counts them once."""
        if axes is not None and (isinstance(axes, str) or not set(axes) <= {axis for axis, _ in COUNT_AXES} or not axes):
            raise ValueError(f"axes: some of {[axis for axis, _ in COUNT_AXES]}, not {axes!r}")
        wanted = [(axis, column) for axis, column in COUNT_AXES if axes is None or axis in axes]
        per_source = [counts_by_columns(s, [column for _axis, column in wanted], query) for s in self._sources]
        counted = {axis: summed(counts[column] for counts in per_source) for axis, column in wanted}
        return {**counted, "total": sum(counted[wanted[0][0]].values())}

    def tag_counts(self, query: MemoryQuery = MemoryQuery()) -> dict[str, int] | None:
        """How many memories the query matches per tag, where every part of the store can count
        its tags (the formats read whole, such as SynthOrg's); None where one cannot (memory.db,
        a Chroma directory), so that a tag facet is never shown short."""
        parts = self._parts()
        if not parts or not all(getattr(p, "counts_tags", False) for p in parts):
            return None
        return dict(sorted(summed(p.tag_counts(query) for p in parts if query.wants_kind(p.kind)).items()))

    def tagged(self, tags: tuple[str, ...], query: MemoryQuery = MemoryQuery(statuses=())) -> list[str] | None:
        """The ids of the memories the query matches that carry every one of tags (filter a
        query by tag with ids=...); None where a part of the store cannot tell (tag_counts)."""
        if self.tag_counts(MemoryQuery(statuses=())) is None:
            return None
        return sorted(i for p in self._parts() if query.wants_kind(p.kind) for i in p.tagged(tags, query))

    def sub_agents(self, channel_counts: dict[str, int]) -> dict[str, tuple[tuple[str, ...], int]]:
        """An Agentix store's sub-agents, each with its channels in every scope and how many
        memories of channel_counts they hold; {} for any other store."""
        if not any(s.format == "agentix" for s in self.foreign):
            return {}
        from .formats.agentix import sub_agents

        return sub_agents(channel_counts)

    def info(self) -> dict[str, Any]:
        counts = self.counts()
        out: dict[str, Any] = {
            "path": self.location,
            "kinds": [k.value for k in self.kinds],
            "counts": counts,
            "total": counts["total"],
            "counted": f"memories of every status ({', '.join(s.value for s in Status)}); copies of one memory once",
            "capabilities": {_source_key(s): s.capabilities().to_dict() for s in self._sources},
            "settings": self.settings.to_dict(),
            "journal": {"location": str(self._journal.label), "entries": self._journal.count()},
        }
        if self._workspace is not None:
            out.update(self._workspace.describe())
        out["problems"] = self.recovered + (self._workspace.problems() if self._workspace is not None else [])
        out["unread"] = [part.to_dict() for part in self.unread()]
        if self.foreign:
            out["formats"] = [s.describe() for s in self.foreign]
            out["sessions"] = len(self.sessions())
        return out

    # -- graph ------------------------------------------------------------------------------

    def entities(self, channels: Sequence[str] = ()) -> list[Entity]:
        return [e for s in self._with("graph") for e in s.entities(channels)]

    def relations(
        self, types: Sequence[str] = (), channels: Sequence[str] = (), touching: str | None = None
    ) -> list[Relation]:
        return [r for s in self._with("graph") for r in s.relations(types, channels, touching)]

    def entity_graphs(self) -> list[Any]:
        """The graph reads (GraphReads) of each part holding an entity graph, queried in its database."""
        return [g for s in self._with("graph") if (g := s.entity_graph()) is not None]

    def promotion_shortfall(self, memory: Memory) -> list[str]:
        """The promotion thresholds memory misses ("access_count 2 < 5"); none where nothing counts
        its accesses (a markdown bullet): such memories are promoted by hand, as their owner does."""
        if not self.source_for(memory.id).capabilities(memory.id).can_reinforce:
            return []
        return list(self.settings.promotion.check(memory)["failed"])

    def promotion_candidates(self, limit: int = 1000) -> list[Memory]:
        """Project facts that meet this store's promotion thresholds (settings.promotion) and
        were not promoted yet, the most confident first: the memory.db rows of a workspace."""
        return [m for s in self._sources if hasattr(s, "promotion_candidates")
                for m in s.promotion_candidates(self.settings.promotion, limit)][:limit]

    def retention(self, within: timedelta, now: datetime | None = None) -> list[Upcoming]:
        """What each owner will expire, archive or clean up from now to within ahead (and what it
        is overdue on), by its own rule, the most overdue first. Nothing changes."""
        start = now or datetime.now(timezone.utc)  # to the microsecond: owners' times have them
        return gathered(self._parts(), start, start + within)

    def retention_kept(self) -> dict[str, bool]:
        """Each store's label, and whether its owner expires, archives or cleans up by a rule."""
        kept: dict[str, bool] = {}
        for s in self._sources:
            parts = self._workspace.parts if s is self._workspace and self._workspace is not None else [s]
            kept[s.label] = kept.get(s.label, False) or any(keeps_rule(p) for p in parts)
        return kept

    def memories_about(self, entity_id: str, limit: int = 50) -> list[Memory]:
        return [m for s in self._with("graph") for m in s.memories_about(entity_id, limit)][:limit]

    # -- vectors ----------------------------------------------------------------------------

    def embedding_of(self, memory_id: str) -> list[float] | None:
        """The stored vector of a memory (its own record, or its vector copy)."""
        records = [memory_id, *(c["record"] for c in self.copies(memory_id) if c["kind"] == "chroma")]
        for vectors in self.vector_sources():
            for record in records:
                if vectors.owns(record):
                    found = vectors.embedding_of(record)
                    if found is not None:
                        return list(found)
        return None

    def stale_ids(self) -> list[str]:
        """Memories whose vector is marked stale, in every source that can re-embed."""
        return [i for s in self._with("reembed") for i in s.stale_ids()]

    # -- consistency: each source compares its own copies -------------------------------------

    def consistency_checks(self, embedder: Embedder | None = None, progress: Progress | None = None) -> Report:
        """Every copy of every memory compared, store-wide: the native workspace's memory rows
        against their vectors, markdown bullets and full-text entries, and each foreign format's
        own indexes (ConsistencyChecks). embedder: what recomputes vectors to find stale ones
        (default: the store's own, if one runs here; without one, only vectors marked stale are
        found). progress(done, total) ticks per page of rows and ends at its total."""
        report = Report(location=self.location)
        total = 0

        def ticked(done: int, of: int) -> None:
            nonlocal total
            total = of
            if progress is not None:
                progress(done, of)

        if self._workspace is not None:
            report.merge(self._workspace.check_copies(embedder, ticked, default_embedder=self.embedder))
        for source in self.foreign:
            if isinstance(source, ConsistencyChecks):
                report.extend(source.consistency_checks())
                report.checked.update(getattr(source, "consistency_checked", dict)())  # (what it compared)
        if progress is not None:
            progress(total, total)
        return report

    def plan_repairs(self, report: Report, kinds: Sequence[str], embedder: Embedder | None) -> list[RepairPlan]:
        """The safe repairs of report's findings of these kinds, planned by the source that owns
        the copies (the native workspace: the only one with repairs) against the store as it is
        now: one plan per memory, each change naming its writer, for Curator.repair to apply as
        one step. NothingToDoError when nothing of those kinds is left to repair; UnsupportedError
        where no automatic repair exists, or vectors are to be embedded and embedder is None."""
        if self._workspace is not None:
            return self._workspace.plan_repairs(report, kinds, embedder)
        if any(report.items(kind) for kind in kinds):
            raise UnsupportedError(f"{self.location} has no native workspace; these findings have no automatic repair.")
        raise NothingToDoError("The report holds nothing of those kinds to repair.")

    # -- what an agent writes (headless; each call tells listeners) ---------------------------

    @property
    def has_memory_db(self) -> bool:
        """Whether agents can write here: a native workspace with its memory.db."""
        return self._workspace is not None and self._workspace.db is not None

    def _native(self) -> NativeWorkspace:
        if self._workspace is None or self._workspace.db is None:
            raise UnsupportedError(f"{self.location} has no memory.db; agents write to a native workspace.")
        return self._workspace

    def add_memory(self, content: str, **fields: Any) -> str:
        """Add one memory (fields as for memory_row: layer, channel, tags, salience, ...), with
        its vector when the workspace keeps vectors and an embedder runs. Returns its id."""
        self.require_writable()
        memory_id = self._native().add_memory(content, embedder=self.embedder(), **fields)
        self.notify(StoreEvent((memory_id,)))
        return memory_id

    def add_memories(
        self, rows: Iterable[dict[str, Any]], progress: Callable[[int, int], None] | None = None,
        batch: int = BULK_BATCH,
    ) -> int:
        """Bulk add of memory_row() rows (import, demo, an agent's backfill), with their vectors:
        one transaction per batch rows, so a million go in at the rate of a plain executemany and
        readers see whole batches. progress(added, total) follows each batch (total 0 when rows
        is an iterator of unknown length). Returns how many were added. Not journaled: the agent
        (or import, which keeps its own keys) owns what it adds."""
        self.require_writable()
        native, embedder = self._native(), self.embedder()
        total = len(rows) if isinstance(rows, Sized) else 0
        added, ids, it = 0, [], iter(rows)
        while chunk := list(itertools.islice(it, batch)):
            native.add_memory_rows(chunk, embedder)
            added += len(chunk)
            if added <= NOTIFIED_IDS:
                ids += [r["id"] for r in chunk]
            if progress:
                progress(added, total)
        if added:
            self.notify(StoreEvent(tuple(ids)) if added <= NOTIFIED_IDS else StoreEvent(everything=True))
        return added

    @staticmethod
    def memory_row(content: str, **fields: Any) -> dict[str, Any]:
        from .native.db.sqlite_source import SqliteSource

        return SqliteSource.memory_row(content, **fields)

    def add_session(self, session_id: str, **fields: Any) -> None:
        self.require_writable()
        self._db().add_session(session_id, **fields)
        self.notify(StoreEvent())

    def add_turns(self, session_id: str, turns: Any) -> None:
        self.require_writable()
        self._db().add_turns(session_id, turns)
        self.notify(StoreEvent())

    def set_scratch(self, session_id: str, key: str, value: Any, updated_at: Any = None) -> None:
        self.require_writable()
        self._db().set_scratch(session_id, key, value, updated_at)
        self.notify(StoreEvent())

    def add_entity(self, entity: Entity) -> None:
        self.require_writable()
        self._db().add_entity(entity)
        self.notify(StoreEvent())

    def add_relation(self, relation: Relation) -> None:
        self.require_writable()
        self._db().add_relation(relation)
        self.notify(StoreEvent())

    def touch(self, memory_id: str, at: Any = None) -> None:
        """Reinforce on retrieval: one more access, last accessed now (not journaled)."""
        self.require_writable()
        self._db().touch(memory_id, at)
        self.notify(StoreEvent((memory_id,)))

    def existing_values(self, column: str, keys: Sequence[str]) -> set[str]:
        return self._db().existing_values(column, keys)

    def _db(self) -> NativeDb:
        db = self._native().db
        assert db is not None
        return db


COUNT_AXES = (("kinds", "kind"), ("channels", "channel"), ("layers", "layer"), ("statuses", "status"))


NATIVE_FORMATS = ("mnemoscope", "chroma", "markdown")


def _source_key(source: Source) -> str:
    fmt = getattr(source, "format", "")
    return source.kind.value if fmt in NATIVE_FORMATS else fmt


def _workspace_of(sources: list[Source]) -> NativeWorkspace | None:
    for source in sources:
        if getattr(source, "format", "") == "mnemoscope":  # only then is the workspace module loaded
            from .native.workspace import NativeWorkspace

            if isinstance(source, NativeWorkspace):
                return source
    return None


def _unread_part(source: Any) -> UnreadPart | None:
    unread_part = getattr(source, "unread_part", None)
    return unread_part() if unread_part is not None else None
