"""A Chroma persistent directory: every collection's records as memories.

Reading goes through ChromaFiles (the directory's files, opened read-only); chromadb's
client, which writes on open, is started only for the first write. Ordering is done on a
metadata-only index of each collection, refreshed when the directory's change token moves;
documents are fetched only for the requested page.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import json
import os
import sqlite3
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
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
    StoreFileError,
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
from ..sqlite_db import files_token, is_sqlite_file
from ..timeutil import parse_time, utcnow
from .chroma_files import CHROMA_FILE, ChromaFiles, Collection
from .memory_db import parse_layer, parse_status

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


# One applied migration as chromadb checks it on open: (dir, version, filename, hash, sha256 of its SQL).
MigrationRow = tuple[str, int, str, str, str]


@functools.lru_cache(maxsize=1)
def _known_migrations() -> tuple[MigrationRow, ...]:
    """The migrations this chromadb writes. They are read off a throwaway database once
    per chromadb version (the Rust bindings carry their own migrations; the package's .sql files
    lag) and kept in the user's cache folder: importing chromadb and creating a client holds the
    GIL for about a second."""
    try:
        chroma_version = version("chromadb")
    except PackageNotFoundError:  # pragma: no cover - chromadb is a hard dependency
        chroma_version = "unknown"
    cache = Path(user_cache_dir("mnemoscope", "Mnemoscope")) / f"chroma-migration-rows-{chroma_version}.json"
    try:
        return tuple((str(d), int(v), str(f), str(h), str(s)) for d, v, f, h, s in json.loads(cache.read_text()))
    except (OSError, ValueError, TypeError):
        pass
    chromadb, Settings = _chromadb()
    with tempfile.TemporaryDirectory(prefix="mnemoscope-chroma-probe-") as tmp:
        client = chromadb.PersistentClient(path=tmp, settings=Settings(anonymized_telemetry=False))
        del client
        known = _migration_rows(ChromaFiles(Path(tmp)))
    try:
        atomic_write_bytes(cache, json.dumps(known).encode())
    except OSError:
        pass  # a read-only home: probe again next time
    return known


def _migration_rows(files: ChromaFiles) -> tuple[MigrationRow, ...]:
    rows = files.rows("SELECT dir, version, filename, hash, sql FROM migrations ORDER BY dir, version")
    return tuple(
        (str(d), int(v), str(f), str(h), hashlib.sha256(str(sql).encode("utf-8", "replace")).hexdigest())
        for d, v, f, h, sql in rows
    )


def _latest(rows: tuple[MigrationRow, ...]) -> dict[str, int]:
    latest: dict[str, int] = {}
    for directory, number, *_rest in rows:
        latest[directory] = max(number, latest.get(directory, 0))
    return latest


def _migration_versions(files: ChromaFiles) -> dict[str, int]:
    rows = files.rows("SELECT dir, max(version) FROM migrations GROUP BY dir")
    return {str(d): int(v) for d, v in rows}


def _migration_fault(files: ChromaFiles) -> str:
    """How the directory's migrations table differs from what this chromadb wrote ("" when it
    does not): its client refuses such a database, after writing to it."""
    found, known = _migration_rows(files), _known_migrations()
    if found == known:
        return ""
    differing = next((f for f, k in zip(found, known, strict=False) if f != k), None)
    if differing is None:
        return f"its migrations table holds {len(found)} migrations where this chromadb wrote {len(known)}"
    return f"its record of Chroma migration {differing[0]}/{differing[2]} is not what chromadb wrote"


def write_refusal(files: ChromaFiles) -> str:
    """Why this chromadb must not write the directory ("" when it may): a client would
    migrate an older Chroma's database for good. A newer Chroma's is refused outright: its
    tables may mean what this version cannot know."""
    found = _migration_versions(files)
    known = _latest(_known_migrations())
    newer = {d: v for d, v in found.items() if v > known.get(d, 0)}
    if newer:
        raise UnreadableStoreError(
            f"{files.path} was written by a newer Chroma than the chromadb installed here "
            f"({', '.join(f'{d} v{v}' for d, v in sorted(newer.items()))}); upgrade chromadb to open it."
        )
    if any(found.get(d, 0) < v for d, v in known.items()):
        return "written by an older Chroma; writing would migrate it for good"
    return ""


def _link_out_of(folder: Path) -> str:
    """Why chromadb must not write the directory ("" when nothing stops it): a file or segment
    folder in it is a link that leads out of it, where its client would write."""
    real = Path(os.path.realpath(folder))
    try:
        entries = list(folder.iterdir())
        entries += [inner for entry in entries if entry.is_dir() and not entry.is_symlink() for inner in entry.iterdir()]
    except OSError:
        return ""  # reading reports what cannot be listed
    for entry in entries:
        target = Path(os.path.realpath(entry))
        if entry.is_symlink() and not target.is_relative_to(real):
            return f"{entry.relative_to(folder)} in it leads out of it, to {target} (Mnemoscope writes only inside the store)"
    return ""


@contextlib.contextmanager
def _chroma_refusal(what: str, *, only_its_own: bool = False) -> Iterator[None]:
    """chromadb's failures as one StoreFileError: what it refused is the directory's files. It
    raises many types, and its Rust core panics (not an Exception); only_its_own: leave other
    exceptions (our arguments) alone."""
    from chromadb.errors import ChromaError

    own = (ChromaError, sqlite3.Error, OSError) if only_its_own else (Exception,)
    try:
        yield
    except StoreError:
        raise
    except own as exc:
        raise StoreFileError(f"{what}: {exc}") from None
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        raise StoreFileError(f"{what}: Chroma's core gave up ({exc})") from None


def check_chroma_dir(path: Path, *, may_recover: bool = True) -> ChromaFiles:
    """The directory's files, once they read as a Chroma database."""
    files = ChromaFiles(Path(path), may_recover=may_recover)
    if not is_sqlite_file(files.db):
        raise UnreadableStoreError(f"{files.db} is not a Chroma database (not SQLite, or truncated).")
    try:
        missing = {"collections", "segments", "embeddings", "embedding_metadata"} - files.tables()
        _migration_versions(files)
    except sqlite3.Error as exc:
        raise UnreadableStoreError(f"{files.db} is not a readable Chroma database ({exc}).") from None
    if missing:
        raise UnreadableStoreError(f"{files.db} is not a Chroma database (no {', '.join(sorted(missing))} table).")
    return files


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
        files: ChromaFiles,
        *,
        read_only_reason: str = "",
        reading: RecordReading | None = None,
    ):
        self.files = files
        self.path = self.root = files.path
        self.read_only_reason = read_only_reason
        self.reading = reading or RecordReading()
        self._client: Any = None
        self._writers: dict[str, Any] = {}
        self._sound: dict[str, str] = {}  # collection -> change token its files were last found sound at
        self._collections: dict[str, Collection] = {}
        self._collections_token = ""
        self._index: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {}
        self._vectors: dict[str, tuple[str, Any]] = {}
        self._mirrors_hidden = False
        self.embedder_override: Embedder | None = None
        self._refresh_collections()

    def _refresh_collections(self) -> None:
        token = self.change_token()
        if token == self._collections_token:
            return
        try:
            every = self.files.collections()
        except sqlite3.Error as exc:
            raise UnreadableStoreError(f"Chroma directory {self.root} could not be read: {exc}.") from None
        wanted = set(self.reading.collections([c.name for c in every]))
        self._collections = {c.name: c for c in every if c.name in wanted}
        self._collections_token = token

    @staticmethod
    def detect(path: Path) -> float:
        return 1.0 if (Path(path) / CHROMA_FILE).is_file() else 0.0

    @classmethod
    def open(cls, path: Path, reading: RecordReading | None = None, *, read_only: bool = False) -> ChromaSource:
        linked = Path(path).is_symlink() or (Path(path) / CHROMA_FILE).is_symlink()
        files = check_chroma_dir(path, may_recover=not (read_only or linked))  # no rollback through a link
        reason = write_refusal(files) or ("opened read-only" if read_only else "") or _link_out_of(Path(path))
        return cls(files, read_only_reason=reason, reading=reading)

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
        return cls(ChromaFiles(Path(path)))

    def close(self) -> None:
        self._index.clear()
        self._vectors.clear()
        self._writers.clear()
        self._sound.clear()
        self._client = None

    def keep_writes_inside(self, root: Path) -> None:
        """Reading through a link that leads out of the store is fine; writing there is not."""
        real = Path(os.path.realpath(self.root))
        if not self.read_only_reason and not real.is_relative_to(os.path.realpath(root)):
            self.read_only_reason = f"it leads out of the store, to {real} (Mnemoscope writes only inside the store)"

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Refuse, before a curation step writes anything (its journal entry included), to write
        collections chromadb's client would fail on. The client itself starts at the first write:
        it writes to chroma.sqlite3 as it opens, and the step may still be refused before that
        (memory.db locked by another program)."""
        if self.read_only_reason:
            raise StoreFileError(f"{self.root} cannot be written: {self.read_only_reason}; nothing was written.")
        for name in sorted({split_record_id(change.record)[0] for change in changes}):
            self._refuse_faults(name)

    def _refuse_faults(self, name: str) -> None:
        """Until its writer starts: refuse a collection whose files chromadb's client would fail on."""
        token = self.change_token()
        if name in self._writers or self._sound.get(name) == token:
            return
        fault = self._write_fault(self.collection_info(name))
        if fault:
            raise StoreFileError(f"Chroma directory {self.root} cannot be written: {fault}; nothing was written.")
        self._sound[name] = token

    def _writer(self, name: str) -> Any:
        """chromadb's collection, for writing: the client starts here, at the first write, once the
        files show nothing it would fail on (it writes to chroma.sqlite3 as it opens, even then)."""
        if self.read_only_reason:
            raise ReadOnlyError(f"{self.root} is read-only: {self.read_only_reason}.")
        if name in self._writers:
            return self._writers[name]
        self._refuse_faults(name)
        with _chroma_refusal(f"Chroma could not open {self.root} for writing"):
            if self._client is None:
                chromadb, Settings = _chromadb()
                self._client = chromadb.PersistentClient(
                    path=str(self.path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
                )
            self._writers[name] = self._client.get_collection(name, embedding_function=None)
        return self._writers[name]

    def _write_fault(self, col: Collection) -> str:
        """What in the files would make chromadb's client fail on this collection ("" when nothing
        does), looked for without it; the whole database only before the client first opens."""
        first = self._client is None
        try:
            if first and (not os.access(self.files.db, os.W_OK) or not os.access(self.path, os.W_OK)):
                return f"{CHROMA_FILE} or its folder is read-only here"
            if first and (migrations := _migration_fault(self.files)):
                return migrations
            if structure := self.files.structure_fault(col):
                return f"collection {col.name!r}: {structure}"
            if configuration := self.files.configuration_fault(col):
                return f"collection {col.name!r}: {configuration}"
            if queued := self.files.queue_faults(col):
                return queued[0] + (f" (and {len(queued) - 1} more)" if len(queued) > 1 else "")
            verdict = self.files.rows("PRAGMA quick_check(1)")[0][0] if first else "ok"
        except sqlite3.Error as exc:
            return f"{CHROMA_FILE} could not be checked ({exc})"
        return "" if verdict == "ok" else f"{CHROMA_FILE} is damaged ({verdict})"

    def collection(self, name: str) -> Any:
        """chromadb's own collection object (opens a writing client), for agents and tests."""
        return self._writer(name)

    def hide_mirrors(self) -> None:
        """Leave out records that are vector copies of memory.db memories."""
        self._mirrors_hidden = True

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
        """Queued operations Chroma's client could not apply: reading leaves them out, writing is refused."""
        return [
            f"{self.root}: {fault}; it is left out"
            for name in self.collections()
            for fault in self._read(lambda name=name: self.files.queue_faults(self.collection_info(name)))
        ]

    def describe(self) -> dict[str, Any]:
        return {"format": self.format, "label": self.label, "path": str(self.root)}

    def change_token(self) -> str:
        return "chroma:" + files_token(self.path / CHROMA_FILE)

    # -- collections and embedders --------------------------------------------------

    def collections(self) -> list[str]:
        self._refresh_collections()
        return sorted(self._collections)

    def collection_info(self, name: str) -> Collection:
        self._refresh_collections()
        try:
            return self._collections[name]
        except KeyError:
            raise NotFoundError(f"No Chroma collection {name!r} in {self.root}.") from None

    def record_count(self, name: str) -> int:
        return self.files.count(self.collection_info(name))

    def embedder_for(self, name: str) -> Embedder | None:
        if self.embedder_override is not None:
            return self.embedder_override
        return embedder_by_name(self.collection_info(name).metadata.get(EMBEDDER_KEY))

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        col = self.collection_info(name)
        ef = col.configuration.get("embedding_function")
        recorded = ef.get("name") if isinstance(ef, dict) else ef
        local = self.embedder_for(name)
        return {
            "collection": name,
            "recorded_embedding_function": recorded or col.metadata.get(EMBEDDER_KEY),
            "runs_offline_here": local is not None,
            "embedder": local.label if local else None,
        }

    # -- the metadata index ---------------------------------------------------------------

    def _entries(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        if not self._mirrors_hidden:
            return self._every_entry(name)
        return [(i, m) for i, m in self._every_entry(name) if m.get(MIRROR_KEY) is not True]

    def _every_entry(self, name: str) -> list[tuple[str, dict[str, Any]]]:
        token = self.change_token()
        cached = self._index.get(name)
        if cached and cached[0] == token:
            return cached[1]
        entries = self._read(lambda: self.files.metadata(self.collection_info(name)))
        self._index[name] = (token, entries)
        return entries

    def _read(self, read: Any) -> Any:
        try:
            return read()
        except sqlite3.Error as exc:
            raise UnreadableStoreError(f"Chroma directory {self.root} could not be read: {exc}.") from None

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
        return self._read(lambda: self.files.ids_containing(self.collection_info(name), needle, TEXT_KEYS))

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
            records = self._read(lambda name=name, ids=ids: self.files.records(self.collection_info(name), ids))
            for record_id, (doc, meta) in records.items():
                m = self._memory(name, record_id, doc, meta, None)
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
            found = self._nearest(name, vector, query, k)
            records = self._read(lambda name=name, found=found: self.files.records(
                self.collection_info(name), [record_id for record_id, _ in found]
            ))
            for record_id, distance in found:
                if record_id in records:
                    doc, meta = records[record_id]
                    results.append((self._memory(name, record_id, doc, meta, None), distance))
        results.sort(key=lambda t: t[1])
        return results[:k]

    def _nearest(self, name: str, vector: list[float], query: MemoryQuery, k: int) -> list[tuple[str, float]]:
        """The k nearest records by exact distance in the collection's space (Chroma's HNSW
        search is approximate; reading every vector is what keeps the client closed)."""
        import numpy as np

        ids, matrix = self._vector_matrix(name)
        if not ids:
            return []
        allowed = self._vector_filter(name, query)
        q = np.asarray(vector, dtype=np.float32)
        if matrix.shape[1] != q.shape[0]:
            raise StoreError(
                f"Vector search in collection {name!r} failed: the query has {q.shape[0]} dimensions, "
                f"the collection {matrix.shape[1]}."
            )
        space = self.collection_info(name).space
        if space == "cosine":
            norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
            distances = 1.0 - (matrix @ q) / np.where(norms == 0, 1.0, norms)
        elif space == "ip":
            distances = 1.0 - matrix @ q
        else:
            distances = ((matrix - q) ** 2).sum(axis=1)
        order = np.argsort(distances, kind="stable")
        out: list[tuple[str, float]] = []
        for i in order:
            if allowed is None or ids[i] in allowed:
                out.append((ids[i], float(distances[i])))
                if len(out) == k:
                    break
        return out

    def _vector_matrix(self, name: str) -> tuple[list[str], Any]:
        token = self.change_token()
        cached = self._vectors.get(name)
        if cached and cached[0] == token:
            return cached[1]
        vectors = self._read(lambda: self.files.vectors(self.collection_info(name)))
        self._vectors[name] = (token, (vectors.ids, vectors.matrix()))
        return self._vectors[name][1]

    def _vector_filter(self, name: str, query: MemoryQuery) -> set[str] | None:
        only_active = bool(query.statuses) and set(query.statuses) == {Status.ACTIVE}
        if not (only_active or query.channels or query.layers):
            return None
        layers = {layer.value for layer in query.layers}
        allowed = set()
        for record_id, meta in self._every_entry(name):
            if only_active and meta.get("status") in ("deleted", "archived"):
                continue
            if query.channels and meta.get("channel") not in query.channels:
                continue
            if layers and meta.get("layer") not in layers:
                continue
            allowed.add(record_id)
        return allowed

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
        name, key = split_record_id(record_id)
        if name not in self.collections():
            return None
        col = self.collection_info(name)
        found = self._read(lambda: self.files.records(col, [key]))
        if key not in found:
            return None
        document, meta = found[key]
        return {
            "collection": name,
            "id": key,
            "document": document,
            "metadata": dict(meta),
            "embedding": self._read(lambda: self.files.vector(col, key)),
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
        col = self._writer(name)
        with _chroma_refusal(f"Chroma could not write {record_id} in {self.root}", only_its_own=True):
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
        col = self._writer(name)
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
