"""``open_store``: detect what a path holds and compose it into one MemoryStore.

The sources are imported when a path holds their kind of store, not with this module:
listing a markdown folder does not load the SQLite source, and no store without a
Chroma directory loads the Chroma one.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import itertools
import os
import stat
from collections.abc import Callable, Iterable, Sequence, Sized
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .embedding import Embedder, HashingEmbedder, RecordedEmbedder, check_match, make_embedder, recorded_embedders
from .errors import (
    ConflictError,
    NotFoundError,
    ReadOnlyError,
    StoreError,
    UnmappedTableError,
    UnreadableStoreError,
    UnsupportedError,
    WrapsStoresError,
)
from .findings.baseline import RECORD_PREFIX as BASELINE_RECORD_PREFIX
from .findings.baseline import BaselineRecords
from .formats import FormatMatch, detect_formats
from .journal import INTERRUPTED, Journal
from .looking import RememberedLooks, is_file, names, one_look
from .model import Entity, Kind, Memory, Relation, ScratchEntry, Session, Turn
from .query import MemoryQuery
from .salience import EntityDecay, InferredFactDecay, PromotionThresholds, SalienceModel
from .source import (
    Capabilities,
    Change,
    HistorySource,
    Source,
    counts_by_columns,
    merged_page,
    same_content,
    summed,
)

if TYPE_CHECKING:
    from .credentials import Credentials
    from .native.native_db import NativeDb
    from .native.workspace import NativeWorkspace

VECTORS_DIR = "vectors"
SETTINGS_KEY = "settings"
# memory_db.DB_NAME and chroma.files.CHROMA_FILE, spelled here too so that a folder without them is
# detected without importing those sources, nor SQLAlchemy (tests/app/test_cli_startup.py checks that
# the names agree).
DB_NAME = "memory.db"
CHROMA_FILE = "chroma.sqlite3"


@dataclass(frozen=True)
class StoreSettings:
    salience: SalienceModel = field(default_factory=SalienceModel)
    promotion: PromotionThresholds = field(default_factory=PromotionThresholds)
    # The embedder for text queries and new vectors: its model's name ("mnemoscope-hashing-256",
    # "wordllama-l2_supercat", "text-embedding-3-small"), the OpenAI-compatible endpoint that
    # serves it (None: it runs here) and the dimensions asked of it. Never its API key.
    embedder: str | None = None
    entity_decay: EntityDecay = field(default_factory=EntityDecay)
    fact_decay: InferredFactDecay = field(default_factory=InferredFactDecay)
    embedder_url: str | None = None
    embedder_dimensions: int | None = None
    # A store on a database server: the Chroma server holding its vectors (a URL without secrets),
    # opened with it whenever no other is named.
    vectors_url: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "salience": asdict(self.salience),
            "promotion": asdict(self.promotion),
            "embedder": self.embedder,
            "embedder_url": self.embedder_url,
            "embedder_dimensions": self.embedder_dimensions,
            "vectors_url": self.vectors_url,
            "entity_decay": asdict(self.entity_decay),
            "fact_decay": {**asdict(self.fact_decay), "labels": list(self.fact_decay.labels)},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> StoreSettings:
        data = data or {}
        fact = dict(data.get("fact_decay", {}))
        if "labels" in fact:
            fact["labels"] = tuple(fact["labels"])
        return cls(
            salience=SalienceModel(**data.get("salience", {})),
            promotion=PromotionThresholds(**data.get("promotion", {})),
            embedder=data.get("embedder"),
            embedder_url=data.get("embedder_url"),
            embedder_dimensions=data.get("embedder_dimensions"),
            vectors_url=data.get("vectors_url"),
            entity_decay=EntityDecay(**data.get("entity_decay", {})),
            fact_decay=InferredFactDecay(**fact),
        )


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
        self.root = Path(root)
        self.location = location or str(self.root)
        # What open_store takes to open it again (the recent list keeps it): target, vectors URL.
        self.opened_as: tuple[str, str | None] = (self.location, None)
        self.read_only = read_only
        self.sources = sources
        self.journal = journal
        self.workspace: NativeWorkspace | None = _workspace_of(sources)
        vectors = self.workspace.vectors if self.workspace is not None else None
        if vectors is not None and self.settings.embedder:
            vectors.embedder_override = self.configured_embedder()
        self._listeners: list[Listener] = []
        self._token = ""
        if not read_only:
            self.recovered = self._recover_interrupted()

    @functools.cached_property
    def findings_baseline(self) -> BaselineRecords:
        """The store's accepted findings (storage/findings), kept with its journal."""
        return BaselineRecords(self.journal)

    # Read when first asked for: a read-only open that shows a page never pays for them.
    @functools.cached_property
    def settings(self) -> StoreSettings:
        return StoreSettings.from_dict(self.journal.read_setting(SETTINGS_KEY))

    @functools.cached_property
    def recovered(self) -> list[str]:
        """What opening did about steps a killed process never finished (read-only: what it
        would do)."""
        return self._pending_untouched()

    def close(self) -> None:
        for source in self.sources:
            source.close()
        self.journal.close()

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

    def _pending_untouched(self) -> list[str]:
        return [
            f"Step #{entry.seq} ({entry.operation}) was interrupted; open the store without "
            "read-only to put its copies back in agreement."
            for entry in self.journal.pending()
        ]

    def _recover_interrupted(self) -> list[str]:
        """Undo what a step that never finished (the process was killed) had written, so every
        copy agrees again. Each step's intent is in the journal before any store is touched."""
        notes = []
        for entry in self.journal.pending():
            stuck = [c.record for c in reversed(self.journal.changes(entry.seq)) if not self._put_back(c)]
            if stuck:
                notes.append(
                    f"Step #{entry.seq} ({entry.operation}) was interrupted and could not be fully undone: "
                    f"{', '.join(stuck)} changed since; check them."
                )
                continue
            self.journal.set_state(entry.seq, INTERRUPTED)
            notes.append(f"Step #{entry.seq} ({entry.operation}) was interrupted; what it had written was undone.")
        if notes:
            self.refresh_copies()
        return notes

    def _put_back(self, change: Change) -> bool:
        """One change of an unfinished step back to its before state; False if someone else changed it."""
        try:
            source = self.source_for(change.record)
            current = source.read_record(change.record)
            if change.after is None:
                if current is None:
                    source.write_record(change.record, None, change.before)
                    return True
                return same_content(current, change.before)
            try:
                source.write_record(change.record, change.after, change.before)
            except ConflictError:  # never written, or written over since
                return same_content(current, change.before)
            return True
        except StoreError:
            return False

    def refresh_copies(self) -> None:
        if self.workspace is not None:
            self.workspace.refresh_copies()

    # -- settings ---------------------------------------------------------------------

    def save_settings(self, settings: StoreSettings) -> None:
        self.require_writable()
        self.journal.write_setting(SETTINGS_KEY, settings.to_dict())
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
        vectors = self.workspace.vectors if self.workspace is not None else None
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
        for s in self.sources:
            if s is self.workspace:
                if self.workspace.vectors is not None:
                    found.append(self.workspace.vectors)
            elif s.capabilities().vector_search:
                found.append(s)
        return found

    # -- reading -----------------------------------------------------------------------

    @property
    def kinds(self) -> list[Kind]:
        """The kinds of store found, native parts first."""
        kinds = self.workspace.kinds if self.workspace is not None else []
        return kinds + [s.kind for s in self.sources if s is not self.workspace]

    @property
    def foreign(self) -> list[Source]:
        """Sources in formats other tools own (mem0, LangGraph, ...)."""
        return [s for s in self.sources if getattr(s, "format", "") not in NATIVE_FORMATS]

    def _with(self, capability: str) -> list[Any]:
        return [s for s in self.sources if getattr(s.capabilities(), capability)]

    def sessions(self, channels: tuple[str, ...] = ()) -> list[Session]:
        return [x for s in self._with("sessions") for x in s.sessions(channels)]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        for source in self._with("sessions"):
            if any(x.id == session_id for x in source.sessions()):
                return list(source.turns(session_id, limit=limit, offset=offset))
        return []

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return [e for s in self._with("scratchpad") for e in s.scratch_entries(session_id)]

    def turn_bin_counts(self, bin_format: str, since: Any, until: Any) -> dict[str, int]:
        return summed(s.turn_bin_counts(bin_format, since, until) for s in self._with("sessions"))

    def owner_history(self, memory_id: str) -> list[dict[str, Any]]:
        """The owning tool's own log of a memory (mem0's history.db), where it keeps one."""
        source = self.source_for(memory_id)
        return list(cast(HistorySource, source).history(memory_id)) if source.capabilities().history else []

    def problems(self) -> list[str]:
        """What a user should know: interrupted steps undone on open; files left out (links
        outside the store); in foreign stores drift, dangling rows, unread tables."""
        return self.recovered + [f"{s.label}: {p}" for s in self.sources for p in s.problems()]

    def source_for(self, record_id: str) -> Source:
        if record_id.startswith(BASELINE_RECORD_PREFIX):  # an accepted finding: Mnemoscope's own state
            return cast(Source, self.findings_baseline)
        # memory.db keeps whatever ids its agent gave, so the native workspace claims any id: the
        # other sources, whose ids carry their prefix, are asked first.
        for source in self.sources:
            if source is not self.workspace and source.owns(record_id):
                return source
        if self.workspace is not None and self.workspace.owns(record_id):
            return self.workspace
        raise NotFoundError(f"No memory {record_id} in {self.location} (no store holds that kind).")

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
        return sum(s.count(query) for s in self.sources)

    def page(
        self, query: MemoryQuery = MemoryQuery(), limit: int = 50, offset: int = 0, after: Memory | None = None
    ) -> list[Memory]:
        """limit memories in the query's order from offset; with after, counted from the memory
        after that one (the last row of the page before: a seek, as fast deep as at the top)."""
        return merged_page(self.sources, query, limit, offset, after)

    def page_at_once(self, query: MemoryQuery, limit: int, seconds: float) -> Sequence[Memory] | None:
        """The query's first limit memories if they can be read on the caller's thread within
        seconds; None when they cannot (a store that is not one memory.db, a read that ran past
        seconds and was stopped, a locked file): read them off that thread then, with page."""
        if len(self.sources) != 1:
            return None
        within = getattr(self.sources[0], "page_within", None)
        return within(query, limit, seconds) if within is not None else None

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
        return self.workspace.copies(memory_id) if self.workspace is not None else []

    def change_token(self) -> str:
        return "|".join(s.change_token() for s in self.sources)

    def counts(self, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, Any]:
        """How many memories the query matches (all statuses by default), per kind, channel,
        layer and status; every axis counts the same memories, copies once."""
        columns = [column for _axis, column in COUNT_AXES]
        per_source = [counts_by_columns(s, columns, query) for s in self.sources]
        axes = {axis: summed(counts[column] for counts in per_source) for axis, column in COUNT_AXES}
        return {**axes, "total": sum(axes["kinds"].values())}

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
            "counted": "memories of every status (active, archived, deleted); copies of one memory once",
            "capabilities": {_source_key(s): s.capabilities().to_dict() for s in self.sources},
            "settings": self.settings.to_dict(),
            "journal": {"location": str(self.journal.label), "entries": self.journal.count()},
        }
        if self.workspace is not None:
            out.update(self.workspace.describe())
        out["problems"] = self.recovered + (self.workspace.problems() if self.workspace is not None else [])
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

    def promotion_shortfall(self, memory: Memory) -> list[str]:
        """The promotion thresholds memory misses ("access_count 2 < 5"); none where nothing
        counts its accesses (a markdown bullet): such memories are promoted by hand, as their
        owner does."""
        if not self.source_for(memory.id).capabilities(memory.id).can_reinforce:
            return []
        return list(self.settings.promotion.check(memory)["failed"])

    def promotion_candidates(self, limit: int = 1000) -> list[Memory]:
        """Project facts that meet this store's promotion thresholds (settings.promotion) and
        were not promoted yet, the most confident first: the memory.db rows of a workspace."""
        return [m for s in self.sources if hasattr(s, "promotion_candidates")
                for m in s.promotion_candidates(self.settings.promotion, limit)][:limit]

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

    # -- what an agent writes (headless; each call tells listeners) ---------------------------

    @property
    def has_memory_db(self) -> bool:
        """Whether agents can write here: a native workspace with its memory.db."""
        return self.workspace is not None and self.workspace.db is not None

    def _native(self) -> NativeWorkspace:
        if self.workspace is None or self.workspace.db is None:
            raise UnsupportedError(f"{self.location} has no memory.db; agents write to a native workspace.")
        return self.workspace

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
        added, ids = 0, []
        it = iter(rows)
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
        from .native.memory_db import SqliteSource

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


def detect(path: Path) -> dict[Kind, Path]:
    """What store kinds a path holds, and where each one lives."""
    path = Path(path)
    found: dict[Kind, Path] = {}
    if is_file(path):
        if path.name == DB_NAME:
            found[Kind.SQLITE] = path
        elif path.name == CHROMA_FILE:
            found[Kind.CHROMA] = path.parent
        return found
    # A file named memory.db is the native store's (opening it says so if it is no such thing,
    # unless a format claims it); each other source's module is imported only where its file is.
    listed = names(path)
    if DB_NAME in listed and is_file(path / DB_NAME):
        found[Kind.SQLITE] = path / DB_NAME
    for chroma_dir in (path / VECTORS_DIR, path) if VECTORS_DIR in listed or CHROMA_FILE in listed else ():
        if is_file(chroma_dir / CHROMA_FILE):
            from .native.chroma.local import ChromaSource

            if ChromaSource.detect(chroma_dir):
                found[Kind.CHROMA] = chroma_dir
                break
    from .native.markdown import MarkdownSource

    if MarkdownSource.detect(path):
        found[Kind.MARKDOWN] = path
    return found


def detect_everything(path: Path) -> tuple[dict[Kind, Path], list[FormatMatch]]:
    """The native kinds and the foreign formats path holds, in one look at the file system; a
    native reading of files a format claims (a mem0 Chroma directory) is left out. The answer
    is remembered while the files it looked at stay as they were (opening the same store again
    costs a few stats)."""
    # Detectors read these too (the user-scope folders under the home folder, AgenticX's workspace root).
    key = "\0".join([os.path.abspath(path), *(os.environ.get(name, "") for name in _DETECTION_ENVIRONMENT)])
    found, matches = _DETECTIONS.answer(key, lambda: _detect_everything(Path(path)))
    return dict(found), list(matches)


def _detect_everything(path: Path) -> tuple[dict[Kind, Path], list[FormatMatch]]:
    with one_look():  # every detector asks about the same few files: list each folder once
        found = detect(path)
        matches = detect_formats(path)
    for match in matches:
        for kind, claimed in match.claims:
            if found.get(kind) == claimed:
                del found[kind]
    return found, matches


_DETECTIONS: RememberedLooks[tuple[dict[Kind, Path], list[FormatMatch]]] = RememberedLooks()
_DETECTION_ENVIRONMENT = ("HOME", "AGX_WORKSPACE_ROOT")


_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)  # where Path.exists answers False


def open_store(
    path: str | Path, *, read_only: bool = False, credentials: Credentials | None = None, vectors: str | None = None
) -> MemoryStore:
    """Open whatever memory a file or folder holds, or a server a URL names (store_url.py).
    Raises UnreadableStoreError.
    read_only: nothing is written, not even recovery of an interrupted step; every write is refused.
    credentials: where a server's password comes from (the keyring alone by default; the CLI and
    the app ask a person). vectors: a Chroma server URL to hold the vectors of the native store."""
    if (isinstance(path, str) and "://" in path) or vectors:
        from .server_stores import open_location

        return open_location(path, vectors, read_only=read_only, credentials=credentials)
    path = Path(path).expanduser()
    try:
        is_folder = stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno not in _NOT_THERE:
            raise
        raise UnreadableStoreError(f"{path} does not exist.") from None
    found, matches = detect_everything(path)
    if not found and not matches and path.is_file():
        from .formats.sqlite_table import remembered_match  # a table mapped by hand (mnemoscope map)

        matches = [m for m in [remembered_match(path)] if m is not None]
    if not found and not matches:
        from .sqlite_db import is_sqlite_file

        if path.is_file() and is_sqlite_file(path):
            raise UnmappedTableError(
                f"{path} is a SQLite database Mnemoscope does not recognise as a memory store. "
                f"Map one of its tables to memories: mnemoscope map {path}",
                str(path),
            )
        what = "file" if path.is_file() else "folder"
        if path.is_dir():
            _offer_stores_inside(path)
        raise UnreadableStoreError(
            f"Nothing recognisable in {what} {path}: no memory.db, Chroma directory "
            "or workspace markdown (MEMORY.md, USER.md, memory/YYYY-MM-DD.md, ...)."
        )
    root = path if is_folder else path.parent
    opened: list[Any] = []
    try:
        db = _opened(opened, _open_sqlite(read_only), found.get(Kind.SQLITE))
        chroma = _opened(opened, _open_chroma(read_only), found.get(Kind.CHROMA))
        markdown = _opened(opened, _open_markdown, found.get(Kind.MARKDOWN))
        for match in matches:
            opened.append(match.open())
        sources: list[Source] = [s for s in opened if s not in (db, chroma, markdown)]
        if db or chroma or markdown:
            from .native.workspace import NativeWorkspace

            sources.insert(0, NativeWorkspace(root, db, chroma, markdown))
        journal = (
            Journal.in_database(lambda: db.engine, db.db_path, db.reading)
            if db is not None
            else Journal.sidecar(_journal_dir(root, found, matches), read_only=read_only)
        )
        return MemoryStore(root, sources, journal, read_only=read_only)
    except BaseException:
        # Close what was opened: a pooled connection left open keeps the -wal SQLite made for it.
        for source in opened:
            source.close()
        raise


def _offer_stores_inside(folder: Path) -> None:
    """Raise WrapsStoresError when folder is no store but holds some a few levels down."""
    from .discover import discover

    inside = [(str(f.path), f.tool) for f in discover([folder], max_depth=3, count=False, max_folders=400)]
    if inside:
        shown = "; ".join(f"{p} ({tool})" for p, tool in inside[:5]) + ("; ..." if len(inside) > 5 else "")
        raise WrapsStoresError(
            f"{folder} is no memory store itself but holds {len(inside)}: {shown}. Open one of those "
            f"(mnemoscope discover {folder} lists them all).",
            str(folder),
            inside,
        )


def _opened(opened: list[Any], open_part: Callable[[Path], Any], path: Path | None) -> Any:
    if path is None:
        return None
    part = open_part(path)
    opened.append(part)
    return part


# Each opener imports its source on the first call: a kind of store the path does not hold costs nothing.
def _open_sqlite(read_only: bool) -> Callable[[Path], Any]:
    def open_part(path: Path) -> Any:
        from .native.memory_db import SqliteSource

        return SqliteSource.open(path, read_only=read_only)

    return open_part


def _open_chroma(read_only: bool) -> Callable[[Path], Any]:
    def open_part(path: Path) -> Any:
        from .native.chroma.local import ChromaSource

        return ChromaSource.open(path, read_only=read_only)

    return open_part


def _open_markdown(path: Path) -> Any:
    from .native.markdown import MarkdownSource

    return MarkdownSource.open(path)


def _journal_dir(root: Path, found: dict[Kind, Path], matches: list[Any]) -> Path:
    if Kind.MARKDOWN in found:
        return root
    if Kind.CHROMA in found:
        return found[Kind.CHROMA]
    return next((m.journal_dir for m in matches if m.journal_dir is not None), root)


def create_workspace(
    path: str | Path, embedder: Embedder | None = None, *, vectors: str | None = None,
    credentials: Credentials | None = None,
) -> MemoryStore:
    """A new native workspace: memory.db, vectors/ and nothing else yet; or on servers, the
    schema in an empty PostgreSQL database (and vectors, a Chroma server's native collection)."""
    if (isinstance(path, str) and "://" in path) or vectors:
        from .server_stores import open_location

        embedder = embedder or HashingEmbedder()
        store = open_location(path, vectors, read_only=False, credentials=credentials, create_with=embedder)
        recorded = dataclasses.replace(
            store.settings, embedder=store.settings.embedder or embedder.name,
            vectors_url=store.opened_as[1] or store.settings.vectors_url,
        )
        if recorded != store.settings:
            store.save_settings(recorded)
        return store
    root = Path(path).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()) and (detect(root) or detect_formats(root)):
        raise StoreError(f"{root} already holds a memory store; not overwriting it.")
    from .native.chroma.local import ChromaSource
    from .native.memory_db import SqliteSource
    from .native.workspace import NativeWorkspace

    embedder = embedder or HashingEmbedder()
    db = SqliteSource.open(root / DB_NAME, create=True)
    chroma = ChromaSource.create(root / VECTORS_DIR, embedder)
    store = MemoryStore(root, [NativeWorkspace(root, db, chroma)], Journal.in_database(lambda: db.engine, db.db_path, db.reading))
    store.save_settings(StoreSettings(
        embedder=embedder.name, embedder_url=getattr(embedder, "base_url", None),
        embedder_dimensions=None if isinstance(embedder, HashingEmbedder) else embedder.dimensions,
    ))
    return store
