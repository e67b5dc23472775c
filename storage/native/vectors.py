"""A Chroma persistent directory: every collection's records as memories.

Chroma filters (``where``, ``where_document``) but cannot sort, so ordering is
done on a metadata-only index of the collection (no documents, no vectors),
refreshed when the directory's change token moves; documents are fetched only
for the requested page.
"""

from __future__ import annotations

import copy
import functools
import json
import shutil
import sqlite3
import tempfile
import uuid
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from ..atomic_file import atomic_write_bytes
from ..embedding import Embedder, embedder_by_name
from ..errors import (
    ConflictError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    UnreadableStoreError,
    UnsupportedError,
)
from ..model import EDITABLE_FIELDS, GLOBAL_CHANNEL, Kind, Layer, Memory, Provenance, SourceRef, Status
from ..query import MemoryQuery, sort_key
from ..source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    REEMBED,
    REINFORCE,
    RESTORE,
    Capabilities,
    Change,
    Plan,
    PlanContext,
    Snapshot,
    bin_by,
    count_by,
    revision_of,
    same_record,
)
from ..sqlite_db import files_token, is_sqlite_file, read_only_rows
from ..timeutil import parse_time, utcnow
from .memory_db import parse_layer, parse_status

CHROMA_FILE = "chroma.sqlite3"
NATIVE_COLLECTION = "memories"
EMBEDDER_KEY = "mnemoscope:embedder"
MIRROR_KEY = "mnemoscope_mirror"
STALE_KEY = "mnemoscope_stale"
TEXT_KEYS = ("data", "text", "content", "memory", "document", "page_content")
_BATCH = 2000


def _chromadb():
    try:
        import chromadb
        from chromadb.config import Settings
    except ImportError as exc:  # pragma: no cover - chromadb is a hard dependency
        raise StoreError(f"chromadb is not installed ({exc}).") from None
    return chromadb, Settings


@functools.lru_cache(maxsize=1)
def _known_migrations() -> dict[str, int]:
    """The migration versions this chromadb writes. They are read off a throwaway database once
    per chromadb version (the Rust bindings carry their own migrations; the package's .sql files
    lag) and kept in the user's cache folder: creating a client holds the GIL for ~0.1 s."""
    chromadb, Settings = _chromadb()
    cache = Path(user_cache_dir("mnemoscope", "Mnemoscope")) / f"chroma-migrations-{chromadb.__version__}.json"
    try:
        return {str(k): int(v) for k, v in json.loads(cache.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        pass
    with tempfile.TemporaryDirectory(prefix="mnemoscope-chroma-probe-") as tmp:
        client = chromadb.PersistentClient(path=tmp, settings=Settings(anonymized_telemetry=False))
        del client
        known = _migration_versions(Path(tmp) / CHROMA_FILE)
    try:
        atomic_write_bytes(cache, json.dumps(known).encode())
    except OSError:
        pass  # a read-only home: probe again next time
    return known


def _migration_versions(db: Path) -> dict[str, int]:
    sql = "SELECT dir, max(version) FROM migrations GROUP BY dir"
    try:
        rows = read_only_rows(db, sql)
    except sqlite3.OperationalError as exc:
        if "readonly" not in str(exc):
            raise
        # A writer was killed mid-transaction: SQLite must roll its journal back before anyone
        # can read, as Chroma's own client would on open. That needs a writing connection.
        con = sqlite3.connect(db, timeout=5.0)
        try:
            rows = con.execute(sql).fetchall()
        finally:
            con.close()
    return {str(d): int(v) for d, v in rows}


def check_chroma_dir(path: Path) -> str:
    """Refuse what this chromadb cannot open safely. Returns "current" or "older"."""
    db = Path(path) / CHROMA_FILE
    if not is_sqlite_file(db):
        raise UnreadableStoreError(f"{db} is not a Chroma database (not SQLite, or truncated).")
    try:
        found = _migration_versions(db)
    except sqlite3.Error as exc:
        raise UnreadableStoreError(f"{db} is not a readable Chroma database ({exc}).") from None
    known = _known_migrations()
    newer = {d: v for d, v in found.items() if v > known.get(d, 0)}
    if newer:
        raise UnreadableStoreError(
            f"{path} was written by a newer Chroma than the chromadb installed here "
            f"({', '.join(f'{d} v{v}' for d, v in sorted(newer.items()))}); upgrade chromadb to open it."
        )
    older = any(found.get(d, 0) < v for d, v in known.items())
    return "older" if older else "current"


class RecordReading:
    """How records become memories: a tool that keeps its own store in Chroma (mem0) passes
    its own reading to the ChromaSource it holds, instead of subclassing it."""

    def collections(self, names: list[str]) -> list[str]:
        """The collections that hold memories."""
        return names

    def memory(self, memory: Memory, meta: dict[str, Any], *, full: bool) -> Memory:
        """The memory as the tool means it; full=False when only filtering and sorting need it."""
        return memory


class ChromaSource:
    """The collections of one Chroma persistent directory."""

    kind = Kind.CHROMA
    format = "chroma"
    label = "Chroma directory"

    def __init__(
        self,
        path: Path,
        *,
        read_only_reason: str = "",
        original: Path | None = None,
        reading: RecordReading | None = None,
    ):
        chromadb, Settings = _chromadb()
        self.path = Path(path)
        self.root = Path(original or path)
        self.read_only_reason = read_only_reason
        self.reading = reading or RecordReading()
        try:
            self.client = chromadb.PersistentClient(
                path=str(self.path),
                settings=Settings(anonymized_telemetry=False, allow_reset=False),
            )
            self._collections = {c.name: c for c in self._list_collections()}
        except StoreError:
            raise
        except Exception as exc:  # chromadb raises many types for a bad directory
            raise UnreadableStoreError(f"Chroma could not open {self.root}: {exc}") from None
        self._index: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {}
        self._mirrors_hidden = False
        self.embedder_override: Embedder | None = None

    def _list_collections(self) -> list[Any]:
        names = [item if isinstance(item, str) else item.name for item in self.client.list_collections()]
        return [self.client.get_collection(name, embedding_function=None) for name in self.reading.collections(names)]

    @staticmethod
    def detect(path: Path) -> float:
        return 1.0 if (Path(path) / CHROMA_FILE).is_file() else 0.0

    @classmethod
    def open(cls, path: Path, reading: RecordReading | None = None) -> ChromaSource:
        path = Path(path)
        if check_chroma_dir(path) == "older":
            copy = Path(tempfile.mkdtemp(prefix="mnemoscope-chroma-"))
            shutil.copytree(path, copy, dirs_exist_ok=True)
            return cls(
                copy,
                original=path,
                read_only_reason=(
                    "written by an older Chroma; opening it in place would migrate it, "
                    "so Mnemoscope reads a copy"
                ),
                reading=reading,
            )
        return cls(path, reading=reading)

    @classmethod
    def create(cls, path: Path, embedder: Embedder) -> ChromaSource:
        chromadb, Settings = _chromadb()
        Path(path).mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(
            path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
        )
        client.get_or_create_collection(
            NATIVE_COLLECTION,
            embedding_function=None,
            metadata={EMBEDDER_KEY: embedder.name, "hnsw:space": "cosine"},
        )
        return cls(path)

    def close(self) -> None:
        self._index.clear()
        if self.path != self.root:
            shutil.rmtree(self.path, ignore_errors=True)

    def hide_mirrors(self) -> None:
        """Leave out records that are vector copies of memory.db memories."""
        self._mirrors_hidden = True
        self._index.clear()

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            read_only=bool(self.read_only_reason),
            read_only_reason=self.read_only_reason,
            editable_fields=() if self.read_only_reason else EDITABLE_FIELDS,
            can_promote=not self.read_only_reason,
            can_soft_delete=not self.read_only_reason,
            can_reinforce=not self.read_only_reason,
            keyword_search=True,
            vector_search=True,
            reembed=not self.read_only_reason,
        )

    def problems(self) -> list[str]:
        return []

    def describe(self) -> dict[str, Any]:
        return {"format": self.format, "label": self.label, "path": str(self.root)}

    def change_token(self) -> str:
        return "chroma:" + files_token(self.path / CHROMA_FILE)

    # -- collections and embedders --------------------------------------------------

    def collections(self) -> list[str]:
        return sorted(self._collections)

    def collection(self, name: str):
        try:
            return self._collections[name]
        except KeyError:
            raise NotFoundError(f"No Chroma collection {name!r} in {self.root}.") from None

    def embedder_for(self, name: str) -> Embedder | None:
        if self.embedder_override is not None:
            return self.embedder_override
        meta = self.collection(name).metadata or {}
        return embedder_by_name(meta.get(EMBEDDER_KEY))

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        col = self.collection(name)
        meta = col.metadata or {}
        recorded = None
        try:
            config = col.configuration_json if hasattr(col, "configuration_json") else col.configuration
            ef = (config or {}).get("embedding_function")
            recorded = ef.get("name") if isinstance(ef, dict) else ef
        except Exception:  # older collections have no configuration
            recorded = None
        local = self.embedder_for(name)
        return {
            "collection": name,
            "recorded_embedding_function": recorded or meta.get(EMBEDDER_KEY),
            "runs_offline_here": local is not None,
            "embedder": local.label if local else None,
        }

    # -- the metadata index ---------------------------------------------------------------

    def _entries(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        token = self.change_token()
        cached = self._index.get(name)
        if cached and cached[0] == token:
            return cached[1]
        col = self.collection(name)
        where = {MIRROR_KEY: {"$ne": True}} if self._mirrors_hidden else None
        entries: list[tuple[str, dict[str, Any]]] = []
        offset = 0
        while True:
            batch = col.get(include=["metadatas"], where=where, limit=_BATCH, offset=offset)
            ids = batch["ids"]
            metas = batch["metadatas"] or [None] * len(ids)
            entries += [(i, m or {}) for i, m in zip(ids, metas, strict=False)]
            if len(ids) < _BATCH:
                break
            offset += _BATCH
        self._index[name] = (token, entries)
        return entries

    def metadata_index(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        """(record id, metadata) of every record of a collection, cached until the directory changes."""
        return self._entries(name)

    def _summary(self, name: str, record_id: str, meta: dict[str, Any]) -> Memory:
        """A Memory from metadata alone (content filled in later for pages)."""
        return self.reading.memory(self._record_memory(name, record_id, "", meta), meta, full=False)

    def _memory(
        self, name: str, record_id: str, document: str | None, meta: dict[str, Any], snap: Snapshot | None
    ) -> Memory:
        return self.reading.memory(self._record_memory(name, record_id, document, meta, snap), meta, full=True)

    def _matching(self, query: MemoryQuery) -> list[Memory]:
        if not query.wants_kind(self.kind):
            return []
        contains_ids: set[str] | None = None
        out: list[Memory] = []
        for name in self.collections():
            if query.contains:
                contains_ids = self._ids_containing(name, query.contains)
            for record_id, meta in self._entries(name):
                if contains_ids is not None and record_id not in contains_ids:
                    continue
                m = self._summary(name, record_id, meta)
                if query.channels and m.channel not in query.channels:
                    continue
                if query.layers and m.layer not in query.layers:
                    continue
                if query.statuses and m.status not in query.statuses:
                    continue
                if query.since and m.created_at < query.since:
                    continue
                if query.until and m.created_at >= query.until:
                    continue
                out.append(m)
        return out

    def _ids_containing(self, name: str, needle: str) -> set[str]:
        """Records whose document, or text kept in metadata (mem0's "data"), contains
        needle, case-insensitively (Chroma's $contains is case-sensitive)."""
        col = self.collection(name)
        needle = needle.lower()
        ids: set[str] = set()
        offset = 0
        while True:
            batch = col.get(include=["documents", "metadatas"], limit=_BATCH, offset=offset)
            for record_id, doc, meta in zip(batch["ids"], batch["documents"], batch["metadatas"], strict=False):
                texts = [doc or ""] + [str((meta or {}).get(k, "")) for k in TEXT_KEYS]
                if any(needle in t.lower() for t in texts):
                    ids.add(record_id)
            if len(batch["ids"]) < _BATCH:
                return ids
            offset += _BATCH

    def count(self, query: MemoryQuery) -> int:
        return len(self._matching(query))

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        found = sorted(self._matching(query), key=sort_key(query.order), reverse=query.descending)
        return self._with_documents(found[offset : offset + limit])

    def _with_documents(self, memories: list[Memory]) -> list[Memory]:
        by_collection: dict[str, list[str]] = {}
        for m in memories:
            name, record_id = split_record_id(m.id)
            by_collection.setdefault(name, []).append(record_id)
        full: dict[str, Memory] = {}
        for name, ids in by_collection.items():
            batch = self.collection(name).get(ids=ids, include=["documents", "metadatas"])
            for record_id, doc, meta in zip(batch["ids"], batch["documents"], batch["metadatas"], strict=False):
                m = self._memory(name, record_id, doc, meta or {}, None)
                full[m.id] = m
        return [full[m.id] for m in memories if m.id in full]

    def get(self, memory_id: str) -> Memory | None:
        snap = self.read_record(memory_id)
        if snap is None:
            return None
        return self._memory(snap["collection"], snap["id"], snap["document"], snap["metadata"], snap)

    def _record_memory(
        self, name: str, record_id: str, document: str | None, meta: dict[str, Any], snap: Snapshot | None = None
    ) -> Memory:
        now = utcnow()
        text = document or next((str(meta[k]) for k in TEXT_KEYS if meta.get(k)), "")
        created = parse_time(meta.get("created_at") or meta.get("timestamp"), None) or now
        updated = parse_time(meta.get("updated_at"), created)
        raw_tags = meta.get("tags") or ()
        tags = raw_tags
        if isinstance(raw_tags, str):
            try:
                loaded = json.loads(raw_tags)
                tags = loaded if isinstance(loaded, list) else [raw_tags]
            except json.JSONDecodeError:
                tags = [t.strip() for t in raw_tags.split(",") if t.strip()]
        layer_value = meta.get("layer") or meta.get("category") or meta.get("memory_type")
        extra = {k: v for k, v in meta.items() if k not in _MAPPED_KEYS}
        return Memory(
            id=record_id_for(name, record_id),
            source=SourceRef(Kind.CHROMA, f"{self._label()}:{name}/{record_id}", path=self._label()),
            layer=parse_layer(layer_value, Layer.SEMANTIC),
            channel=str(meta.get("channel") or GLOBAL_CHANNEL),
            content=text,
            created_at=created,
            updated_at=updated or created,
            last_accessed=parse_time(meta.get("last_accessed"), updated) or created,
            access_count=int(meta.get("access_count") or 0),
            salience=_number(meta.get("salience"), 0.5),
            confidence=_number(meta.get("confidence"), 1.0),
            conversations=int(meta.get("conversations") or 0),
            tags=tuple(str(t) for t in tags),
            metadata=extra,
            status=parse_status(meta.get("status") or "active"),
            provenance=Provenance(promoted_from=meta.get("promoted_from")),
            revision=revision_of(snap) if snap else "",
        )

    def _label(self) -> str:
        return self.root.name or str(self.root)

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return count_by(self._matching(query), column)

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str):
        return bin_by(self._matching(query), bin_format, group_by)

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        words = [w for w in text_query.split() if w]
        if not words:
            return []
        hits: dict[str, int] = {}
        for word in words:
            for m in self._matching(MemoryQuery(**{**query.__dict__, "contains": word})):
                hits[m.id] = hits.get(m.id, 0) + 1
        ranked = sorted(hits, key=lambda i: (-hits[i], i))[:k]
        pages = self._with_documents([self._stub(i) for i in ranked])
        return pages

    def _stub(self, memory_id: str) -> Memory:
        name, record_id = split_record_id(memory_id)
        return self._summary(name, record_id, {})

    # -- vectors ------------------------------------------------------------------------

    def vector_search(
        self, embedding: list[float] | None, text: str | None, query: MemoryQuery, k: int
    ) -> list[tuple[Memory, float]]:
        """Nearest records, per collection whose embedder can embed ``text``."""
        results: list[tuple[Memory, float]] = []
        for name in self.collections():
            vector = embedding
            if vector is None:
                embedder = self.embedder_for(name)
                if embedder is None or text is None:
                    continue
                vector = embedder.embed([text])[0]
            col = self.collection(name)
            if col.count() == 0:
                continue
            where = self._vector_where(query)
            try:
                res = col.query(
                    query_embeddings=[vector],
                    n_results=min(k, col.count()),
                    where=where,
                    include=["documents", "metadatas", "distances"],
                )
            except Exception as exc:  # dimension mismatch and the like
                raise StoreError(f"Vector search in collection {name!r} failed: {exc}") from None
            for record_id, doc, meta, dist in zip(
                res["ids"][0], res["documents"][0], res["metadatas"][0], res["distances"][0], strict=False
            ):
                results.append((self._memory(name, record_id, doc, meta or {}, None), float(dist)))
        results.sort(key=lambda t: t[1])
        return results[:k]

    def _vector_where(self, query: MemoryQuery) -> dict[str, Any] | None:
        clauses: list[dict[str, Any]] = []
        if query.statuses and Status.ACTIVE in query.statuses and len(query.statuses) == 1:
            clauses.append({"status": {"$nin": ["deleted", "archived"]}})
        if query.channels:
            clauses.append({"channel": {"$in": list(query.channels)}})
        if query.layers:
            clauses.append({"layer": {"$in": [layer.value for layer in query.layers]}})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def stale_record_ids(self) -> list[str]:
        """Records flagged stale (text edited without an embedder), not counting mirrors."""
        return [
            record_id_for(name, record_id)
            for name in self.collections()
            for record_id, meta in self._entries(name)
            if meta.get(STALE_KEY)
        ]

    def stale_ids(self) -> list[str]:
        return self.stale_record_ids()

    def embedding_of(self, memory_id: str) -> list[float] | None:
        snap = self.read_record(memory_id)
        return snap["embedding"] if snap else None

    # -- the write primitive ------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        # Two Chroma directories in one store (CrewAI's short-term and entity
        # memory) each own the ids of their own collections.
        if not record_id.startswith("vec:"):
            return False
        return not self._collections or record_id[4:].partition(":")[0] in self._collections

    def read_record(self, record_id: str) -> Snapshot | None:
        parsed = split_record_id(record_id)
        name, key = parsed
        if name not in self._collections:
            return None
        got = self.collection(name).get(ids=[key], include=["documents", "metadatas", "embeddings"])
        if not got["ids"]:
            return None
        embeddings = got["embeddings"]
        vector = [float(x) for x in embeddings[0]] if embeddings is not None and len(embeddings) else None
        return {
            "collection": name,
            "id": key,
            "document": got["documents"][0] if got["documents"] else None,
            "metadata": dict(got["metadatas"][0] or {}),
            "embedding": vector,
        }

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        if self.read_only_reason:
            raise ReadOnlyError(f"{self.root} is read-only: {self.read_only_reason}.")
        name, key = split_record_id(record_id)
        current = self.read_record(record_id)
        if not same_record(current, expected):
            raise ConflictError(
                f"{record_id} changed since it was read (another writer touched it); "
                "nothing was written. Reload and try again."
            )
        col = self.collection(name)
        if new is None:
            col.delete(ids=[key])
        elif current is None:
            col.add(
                ids=[key],
                embeddings=[new["embedding"]],
                documents=[new["document"]] if new.get("document") is not None else None,
                metadatas=[new["metadata"]] if new["metadata"] else None,
            )
        else:
            removed = {k: None for k in current["metadata"] if k not in new["metadata"]}
            col.update(
                ids=[key],
                embeddings=[new["embedding"]] if new["embedding"] is not None else None,
                documents=[new["document"]] if new.get("document") is not None else None,
                metadatas=[{**new["metadata"], **removed}] if (new["metadata"] or removed) else None,
            )
        self._index.pop(name, None)
        return self.read_record(record_id)

    # -- planning ---------------------------------------------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        """Changes to a vector record that is a memory of its own (not a copy of a memory.db row)."""
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} in {self.root}.")
        if operation == EDIT:
            new = edited_record(snap, fields, context)
            return Plan([] if new == snap else [Change(memory.id, snap, new)])
        if operation == PURGE:
            return Plan([Change(memory.id, snap, None)])
        if operation in (DELETE, RESTORE):
            status = Status.DELETED if operation == DELETE else Status.ACTIVE
            return Plan([Change(memory.id, snap, with_metadata(snap, status=status.value, updated_at=context.now))])
        if operation == REINFORCE:
            new = with_metadata(snap, access_count=memory.access_count + 1, last_accessed=context.now)
            return Plan([Change(memory.id, snap, new)])
        if operation == REEMBED:
            new = copy.deepcopy(snap)
            new["metadata"].pop(STALE_KEY, None)
            return Plan([Change(memory.id, snap, new)], embed_text=record_text(snap))
        if operation == PROMOTE:
            to = fields["to"]
            if memory.channel == to:
                raise NothingToDoError(f"{memory.id} is already in channel {to}.")
            name, _ = split_record_id(memory.id)
            promoted_id = record_id_for(name, f"p-{uuid.uuid4().hex[:12]}")
            promoted = with_metadata(
                snap, channel=to, promoted_from=memory.id, created_at=context.now, updated_at=context.now
            )
            promoted["id"] = split_record_id(promoted_id)[1]
            archived = with_metadata(snap, status=Status.ARCHIVED.value, updated_at=context.now)
            return Plan([Change(promoted_id, None, promoted), Change(memory.id, snap, archived)], new_id=promoted_id)
        raise UnsupportedError(f"{memory.id}: {operation} is not something a Chroma record can do.")

    def add_records(
        self,
        name: str,
        ids: list[str],
        documents: list[str],
        metadatas: list[dict[str, Any]],
        embeddings: list[list[float]],
    ) -> None:
        """Bulk insert for agents, the demo and import (not audited)."""
        col = self.collection(name)
        for start in range(0, len(ids), _BATCH):
            end = start + _BATCH
            col.add(
                ids=ids[start:end],
                documents=documents[start:end],
                metadatas=metadatas[start:end],
                embeddings=embeddings[start:end],
            )
        self._index.pop(name, None)


_MAPPED_KEYS = {
    "created_at",
    "timestamp",
    "updated_at",
    "last_accessed",
    "access_count",
    "salience",
    "confidence",
    "conversations",
    "tags",
    "layer",
    "category",
    "memory_type",
    "channel",
    "status",
    "promoted_from",
    *TEXT_KEYS,
}


def record_id_for(collection: str, record_id: str) -> str:
    return f"vec:{collection}:{record_id}"


def split_record_id(record_id: str) -> tuple[str, str]:
    if not record_id.startswith("vec:") or ":" not in record_id[4:]:
        raise NotFoundError(f"{record_id!r} is not a vector record id (vec:<collection>:<id>).")
    name, _, key = record_id[4:].partition(":")
    return name, key


def memory_metadata(memory: dict[str, Any]) -> dict[str, Any]:
    """Chroma metadata for a native memory row (scalars only; lists as JSON)."""
    return {
        "layer": memory["layer"],
        "channel": memory["channel"],
        "status": memory["status"],
        "salience": float(memory["salience"]),
        "confidence": float(memory["confidence"]),
        "access_count": int(memory["access_count"]),
        "conversations": int(memory["conversations"]),
        "created_at": memory["created_at"],
        "updated_at": memory["updated_at"],
        "last_accessed": memory["last_accessed"],
        "tags": memory["tags"],
        MIRROR_KEY: True,
        **({"promoted_from": memory["promoted_from"]} if memory.get("promoted_from") else {}),
    }


def with_metadata(snap: Snapshot, **values: Any) -> Snapshot:
    new = copy.deepcopy(snap)
    new["metadata"].update(values)
    return new


def record_text(snap: Snapshot) -> str:
    """A record's text: its document, or the metadata key a tool keeps it in (mem0: data)."""
    if snap.get("document") is not None:
        return str(snap["document"])
    return next((str(snap["metadata"][k]) for k in TEXT_KEYS if k in snap["metadata"]), "")


def edited_record(snap: Snapshot, requested: dict[str, Any], context: PlanContext) -> Snapshot:
    """A record with the requested fields set; new text is re-embedded, or flagged stale."""
    new = copy.deepcopy(snap)
    meta = new["metadata"]
    for name, value in requested.items():
        if name == "content":
            text_key = next((k for k in TEXT_KEYS if k in meta), None) if snap["document"] is None else None
            if text_key is not None:
                meta[text_key] = value  # the text lives where the record's writer put it
            else:
                new["document"] = value
            vector = context.embed(value)
            if vector is None:
                meta[STALE_KEY] = True
            else:
                new["embedding"] = vector
                meta.pop(STALE_KEY, None)
        elif name == "tags":
            meta["tags"] = json.dumps(list(value), ensure_ascii=False)
        elif name == "layer":
            meta["layer"] = Layer(value).value
        else:
            meta[name] = value
    if new != snap:
        meta["updated_at"] = context.now
    return new


def _number(value: Any, default: float) -> float:
    try:
        return float(value) if value is not None else default
    except (TypeError, ValueError):
        return default
