"""A Chroma persistent directory: every collection's records as memories.

Reading goes through ChromaFiles (the directory's files, opened read-only); chromadb's
client, which writes on open, is started only for the first write (and chromadb is imported
only then).

- Filtering, ordering and counting read an index of each collection: a few numpy columns per
  record (status, layer, channel, times, salience, flags), folded out of chroma.sqlite3 in one
  SQL pass, kept until the directory's change token moves, and kept in the user's cache folder
  (never in the store) so that the next open of an unchanged directory loads it. Memory objects
  are built only for the rows a call returns, with their documents fetched for those rows.
- Keyword search is one SQL pass per collection (LIKE where it folds case as casefold does),
  ranked in SQL and stopped at the k-th record the filters keep.
- Vector search compares every vector (exact) in small collections; in big ones it walks
  Chroma's own persisted HNSW graph as hnswlib does, then applies the filters to what it found
  (a pre-filter would read every record's metadata first).
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
import threading
import uuid
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from platformdirs import user_cache_dir

from ..atomic_file import atomic_write_bytes
from ..embedders.base import EMBEDDER_KEY, Embedder  # noqa: F401 (EMBEDDER_KEY: callers import it from here)
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
from ..looking import is_file
from ..model import (
    EDITABLE_FIELDS,
    GLOBAL_CHANNEL,
    Kind,
    Layer,
    Memory,
    Provenance,
    SourceRef,
    Status,
    parse_layer,
    parse_status,
)
from ..query import MemoryQuery
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
    same_record,
)
from ..sqlite_files import is_sqlite_file
from ..timeutil import parse_time, utcnow
from .chroma_files import CHROMA_FILE, ChromaFiles, Collection, directory_lock
from .record_index import (
    MIRROR_KEY,
    STALE_KEY,
    IndexedReads,
    RecordIndex,
    RecordIndexBuilder,
    number_or,
    one_read,
    record_id_for,
)

NATIVE_COLLECTION = "memories"
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
        _close_client(chromadb.PersistentClient(path=tmp, settings=Settings(anonymized_telemetry=False)))
        known = _migration_rows(ChromaFiles(Path(tmp)))
    try:
        atomic_write_bytes(cache, json.dumps(known).encode())
    except OSError:
        pass  # a read-only home: probe again next time
    return known


def _close_client(client: Any) -> None:
    """Stop a client's system: chromadb keeps it (its SQLite connections and index files open)
    in a process-wide registry until the last client of its folder closes."""
    close = getattr(client, "close", None)  # chromadb 1.4 and later
    if close is not None:
        close()


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
    return _checked(ChromaFiles(Path(path), may_recover=may_recover))


def _checked(files: ChromaFiles) -> ChromaFiles:
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


class ChromaSource(IndexedReads):
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
        self._call_token = threading.local()  # the change token while a read runs (see _one_read)
        self._call_token.value = None
        self.read_only_reason = read_only_reason
        self.reading = reading or RecordReading()
        self._client: Any = None
        self._writers: dict[str, Any] = {}
        self._sound: dict[str, str] = {}  # collection -> change token its files were last found sound at
        self._collections: dict[str, Collection] = {}
        self._collections_token = ""
        self._index: dict[str, tuple[str, list[tuple[str, dict[str, Any]]]]] = {}  # full metadata (mem0 asks)
        self._columns: dict[str, RecordIndex] = {}
        self._vectors: dict[str, tuple[str, list[str], Any, Any, Any]] = {}
        self._graphs: dict[str, tuple[str, Any]] = {}
        self._label_text: str | None = None
        self._filters: dict[tuple[str, str, tuple[Any, ...]], Any] = {}  # rows of the vector matrix a filter keeps
        self._eligible: tuple[Any, ...] = (None,)  # the graph elements the last filter kept
        self._recent: dict[str, Memory] = {}  # the last vector search's hits, as get() returns them
        self._recent_token = ""
        # (collection, words, files token) -> how many records hold each word, counted by a keyword search
        self._counted_words: dict[tuple[str, tuple[str, ...], str], list[int]] = {}
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

    @contextlib.contextmanager
    def _one_read(self) -> Iterator[None]:
        """A read of the directory on one SQLite connection (see ChromaFiles.batch), the files'
        state read once (change_token answers it for the whole call)."""
        if getattr(self._call_token, "value", None) is not None:
            yield
            return
        with self.files.batch():
            self._call_token.value = self.change_token()
            try:
                yield
            finally:
                self._call_token.value = None

    @staticmethod
    def detect(path: Path) -> float:
        return 1.0 if is_file(Path(path) / CHROMA_FILE) else 0.0

    @classmethod
    def open(cls, path: Path, reading: RecordReading | None = None, *, read_only: bool = False) -> ChromaSource:
        linked = Path(path).is_symlink() or (Path(path) / CHROMA_FILE).is_symlink()
        files = ChromaFiles(Path(path), may_recover=not (read_only or linked))  # no rollback through a link
        with files.batch():
            _checked(files)
            reason = write_refusal(files) or ("opened read-only" if read_only else "") or _link_out_of(Path(path))
            return cls(files, read_only_reason=reason, reading=reading)

    @classmethod
    def create(cls, path: Path, embedder: Embedder) -> ChromaSource:
        chromadb, Settings = _chromadb()
        Path(path).mkdir(parents=True, exist_ok=True)
        with directory_lock(Path(path)):
            client = chromadb.PersistentClient(
                path=str(path), settings=Settings(anonymized_telemetry=False, allow_reset=False)
            )
            try:
                client.get_or_create_collection(
                    NATIVE_COLLECTION,
                    embedding_function=None,
                    metadata={EMBEDDER_KEY: embedder.name, "hnsw:space": "cosine"},
                )
            finally:
                _close_client(client)
        return cls(ChromaFiles(Path(path)))

    def close(self) -> None:
        self._index.clear()
        self._columns.clear()
        self._graphs.clear()
        self._filters.clear()
        self._eligible = (None,)
        self._recent.clear()
        self._vectors.clear()
        self._writers.clear()
        self._sound.clear()
        if self._client is not None:
            _close_client(self._client)
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
        with _chroma_refusal(f"Chroma could not open {self.root} for writing"), self.files.lock:
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
            # integrity_check, not quick_check: a flipped bit in a value shows as a row missing
            # from its index, and chromadb fails on such a row only after it has written its log.
            verdict = self.files.rows("PRAGMA integrity_check(1)")[0][0] if first else "ok"
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

    @one_read
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
        return getattr(self._call_token, "value", None) or "chroma:" + self.files.token()

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

    def _collection_meta(self, name: str) -> Collection:
        return self.collection_info(name)

    # -- the metadata index ---------------------------------------------------------------

    def _index_of(self, name: str) -> RecordIndex:
        """The collection's records as columns for filtering and ordering (no Memory objects),
        kept until the directory's change token moves; also kept in the user's cache folder, so
        that the next open of an unchanged directory reads it instead of every record."""
        token = self.change_token()
        cached = self._columns.get(name)
        if cached is not None and cached.token == token:
            return cached
        col = self.collection_info(name)
        key = _index_cache_key(self.files.db, col.id, type(self.reading))
        found = _INDEXES.get(key)
        if found is None or found.token != token:
            found = RecordIndex.load(_index_cache_path(key), token)
        if found is None:
            found = self._read(lambda: self._build_index(name, col, token))
            _keep_index(found, key)
        _INDEXES[key] = found
        while len(_INDEXES) > _INDEXES_KEPT:
            _INDEXES.pop(next(iter(_INDEXES)))
        self._columns[name] = found
        return found

    def _build_index(self, name: str, col: Collection, token: str) -> RecordIndex:
        plain = type(self.reading).memory is RecordReading.memory
        builder = RecordIndexBuilder(token)
        rows = self.files.pivot(col, list(_INDEX_KEYS)) if plain else None
        if rows is not None:
            for record_id, *values in rows:
                builder.add(record_id, {k: v for k, v in zip(_INDEX_KEYS, values, strict=True) if v is not None}, None)
            return builder.index()
        entries = self.files.metadata(col, _INDEX_KEYS if plain else None)
        for record_id, meta in entries:
            if plain:
                builder.add(record_id, meta, None)
            else:
                builder.add(record_id, meta, self._summary(name, record_id, meta))
        return builder.index()

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
        self,
        name: str,
        record_id: str,
        document: str | None,
        meta: dict[str, Any],
        snap: Snapshot | None,
        embedding: Any = None,
    ) -> Memory:
        """The full memory; with snap, its revision: the record's document and metadata, and the
        exact bytes of its embedding."""
        revision = _revision(snap, embedding) if snap is not None else ""
        return self.reading.memory(self._record_memory(name, record_id, document, meta, revision), meta, full=True)

    def _ids_containing(self, name: str, needle: str) -> set[str]:
        """Records whose document, or text kept in metadata (mem0's "data"), contains
        needle, case-insensitively (Chroma's $contains is case-sensitive)."""
        return self._read(lambda: self.files.ids_containing(self.collection_info(name), needle, TEXT_KEYS))

    def _records(self, name: str, ids: list[str]) -> dict[str, tuple[str | None, dict[str, Any]]]:
        return self._read(lambda: self.files.records(self.collection_info(name), ids))

    def get(self, memory_id: str) -> Memory | None:
        if memory_id in self._recent and self._recent_token == self.change_token():
            return self._recent[memory_id]
        return self._get(memory_id)

    @one_read
    def _get(self, memory_id: str) -> Memory | None:
        snap = self.read_record(memory_id)
        if snap is None:
            return None
        return self._memory(snap["collection"], snap["id"], snap["document"], snap["metadata"], snap, snap["embedding"])

    def _record_memory(
        self, name: str, record_id: str, document: str | None, meta: dict[str, Any], revision: str = ""
    ) -> Memory:
        return record_memory(self._label(), name, record_id, document, meta, revision)

    def _label(self) -> str:
        if self._label_text is None:
            self._label_text = self.root.name or str(self.root)
        return self._label_text

    def _bin_counts_unindexed(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """bin_counts grouped by what the index does not hold: from metadata-only memories."""
        return bin_by(self._summaries(query), bin_format, group_by)

    def _summaries(self, query: MemoryQuery) -> list[Memory]:
        """Metadata-only memories the query matches (for groupings the index does not hold)."""
        out: list[Memory] = []
        for name in self.collections():
            index, chosen = self._selected(name, query)
            keep = set(index.ids_at(chosen))
            out += [self._summary(name, i, meta) for i, meta in self._every_entry(name) if i in keep]
        return out

    @one_read
    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        """Records ranked by how many of the words their text contains (a word given twice counts
        twice), then by id: one SQL pass per collection, stopped at the k-th record the query keeps."""
        words = [w for w in text_query.split() if w]
        if not words or k <= 0 or not query.wants_kind(self.kind):
            return []
        ranked = [hit for name in self.collections() for hit in self._keyword_hits(name, words, query, k)]
        ranked.sort()
        return self._with_documents([(name, record_id) for _h, _m, name, record_id in ranked[:k]])

    def document_frequencies(self, terms: Sequence[str], query: MemoryQuery | None = None) -> tuple[int, dict[str, int]]:
        """The records, and how many of them hold each term in their text (one SQL pass per
        collection): the statistics BM25 weighs terms by (views/search.py), collection-wide
        whatever the query."""
        total, found = 0, dict.fromkeys(terms, 0)
        for name in self.collections():
            col = self.collection_info(name)
            total += len(self._index_of(name))
            counts = self._counted_words.get((name, tuple(terms), self.files.token()))  # by the keyword search
            if counts is None:
                counts = self._read(lambda col=col: self.files.document_frequencies(col, list(terms), TEXT_KEYS))
            for term, n in zip(terms, counts, strict=True):
                found[term] += n
        return total, found

    def _keyword_hits(self, name: str, words: list[str], query: MemoryQuery, k: int) -> list[tuple[int, str, str, str]]:
        """The collection's k best (-hits, memory id, collection, record id) the query keeps."""
        col = self.collection_info(name)
        index = self._index_of(name)
        mask = self._mask(index, query, name, contains=False)
        position = index.position()
        queued = self._read(lambda: self.files.queued_states(col))

        def kept(record_id: str) -> bool:
            at = position.get(record_id)
            return at is not None and (mask is None or bool(mask[at]))

        counted: list[int] = []
        with contextlib.closing(self.files.keyword_hits(col, words, TEXT_KEYS, counted)) as rows:
            found = [
                (-hits, record_id_for(name, record_id), name, record_id)
                for record_id, hits in self._read(lambda: list(_until_enough(rows, kept, queued, k)))
            ]
        if counted:  # kept for document_frequencies, which BM25 asks for next
            if len(self._counted_words) > 64:
                self._counted_words.clear()
            self._counted_words[(name, tuple(w.casefold() for w in words), self.files.token())] = counted
        for record_id, state in queued.items():
            if state is None or not kept(record_id):
                continue
            texts = [state[0], *(state[1].get(key) for key in TEXT_KEYS)]
            hits = sum(any(_text_contains(t, w.casefold()) for t in texts) for w in words)
            if hits:
                found.append((-hits, record_id_for(name, record_id), name, record_id))
        return sorted(found)[:k]

    # -- vectors ------------------------------------------------------------------------

    def _nearest_memories(self, name: str, vector: list[float], query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        """The collection's k nearest records the query keeps, as memories with their distances."""
        found = self._nearest(name, vector, query, k)
        return [(m, d) for m, (_i, d) in zip(self._found_memories(name, found), found, strict=True)]

    def _found_memories(self, name: str, found: list[tuple[int, float]]) -> list[Memory]:
        """Full memories of rows of the collection's vector matrix, each as get() returns it (and
        kept for get(): a search's caller usually asks for each hit again)."""
        token, ids, matrix, _unit, _positions = self._vector_matrix(name)
        col = self.collection_info(name)
        records = self._read(lambda: self.files.records(col, [ids[row] for row, _d in found]))
        if self._recent_token != token:
            self._recent, self._recent_token = {}, token
        if len(self._recent) > 1000:
            self._recent.clear()
        out = []
        for row, _distance in found:
            record_id = ids[row]
            if record_id not in records:
                continue
            document, meta = records[record_id]
            snap = {"collection": name, "id": record_id, "document": document, "metadata": dict(meta)}
            memory = self._memory(name, record_id, document, meta, snap, matrix[row])
            self._recent[memory.id] = memory
            out.append(memory)
        return out

    def _nearest(self, name: str, vector: list[float], query: MemoryQuery, k: int) -> list[tuple[int, float]]:
        """The k nearest records (rows of the vector matrix) by exact distance in the collection's
        space; the query's filters are applied to the distances, not before them (Chroma's own
        pre-filter scans every record's metadata first)."""
        import numpy as np

        _token, ids, matrix, unit, positions = self._vector_matrix(name)
        if not ids:
            return []
        q = np.asarray(vector, dtype=np.float32)
        if matrix.shape[1] != q.shape[0]:
            raise StoreError(
                f"Vector search in collection {name!r} failed: the query has {q.shape[0]} dimensions, "
                f"the collection {matrix.shape[1]}."
            )
        space = self.collection_info(name).space
        allowed = self._vector_filter(name, query, positions)
        if len(ids) >= _GRAPH_FROM:
            found = self._graph_nearest(name, q, allowed, k)
            if found is not None:
                return found
        if space == "cosine":
            distances = 1.0 - _dot(unit, q / (np.linalg.norm(q) or 1.0))
        elif space == "ip":
            distances = 1.0 - _dot(matrix, q)
        else:
            distances = unit - 2.0 * _dot(matrix, q) + float(q @ q)  # unit holds the squared norms here
        if allowed is not None:
            distances = np.where(allowed, distances, np.inf)
        take = min(k, len(ids))
        if take <= 0:
            return []
        head = np.argpartition(distances, take - 1)[:take] if take < len(ids) else np.arange(len(ids))
        head = head[np.lexsort((head, distances[head]))]
        return [(int(i), float(distances[i])) for i in head if np.isfinite(distances[i])]

    def _graph_nearest(self, name: str, q: Any, allowed: Any, k: int) -> list[tuple[int, float]] | None:
        """The k nearest rows found as Chroma finds them, through its persisted HNSW graph (with the
        ef it searches with), the records its graph does not hold yet compared one by one. None:
        no graph to walk, or it found fewer than k of the rows the filters keep."""
        import numpy as np

        walk = self._vector_graph(name)
        if walk is None:
            return None
        graph, element_row, extra_rows = walk
        token, ids, matrix, unit, _positions = self._vector_matrix(name)
        space = self.collection_info(name).space
        query = q / (np.linalg.norm(q) or 1.0) if space == "cosine" else q
        key = (token, name, id(allowed))
        if self._eligible[0] != key:  # the elements the filters keep, kept while the filter is
            eligible = element_row >= 0
            if allowed is not None:
                eligible &= allowed[np.maximum(element_row, 0)]
            count = len(ids) if allowed is None else int(allowed.sum())
            self._eligible = (key, eligible, count, allowed)
        _key, eligible, count, _allowed = self._eligible
        elements, distances = graph.search(query, max(self._search_ef(name), k), eligible, k)
        rows, found = element_row[elements].tolist(), distances.tolist()
        extra = extra_rows if allowed is None else extra_rows[allowed[extra_rows]]
        if len(extra):
            if space == "cosine":
                d = 1.0 - unit[extra] @ query
            elif space == "ip":
                d = 1.0 - matrix[extra] @ q
            else:
                d = unit[extra] - 2.0 * (matrix[extra] @ q) + float(q @ q)
            rows += extra.tolist()
            found += d.tolist()
        wanted = min(k, count)
        if len(rows) < wanted:
            return None
        best = sorted(zip(found, rows, strict=True))[:k]
        return [(row, float(d)) for d, row in best]

    def _search_ef(self, name: str) -> int:
        col = self.collection_info(name)
        hnsw = col.configuration.get("hnsw") or {}
        value = col.metadata.get("hnsw:search_ef") or hnsw.get("ef_search")
        return int(value) if isinstance(value, (int, float)) and value > 0 else 100

    def _vector_graph(self, name: str) -> tuple[Any, Any, Any] | None:
        """(graph, each element's row in the vector matrix (-1: none), the rows no element holds)."""
        import numpy as np

        token, ids, _matrix, _unit, _positions = self._vector_matrix(name)
        cached = self._graphs.get(name)
        if cached is not None and cached[0] == token:
            return cached[1]
        col = self.collection_info(name)
        graph, element_ids, persisted = self._read(lambda: self.files.graph(col))
        walk = None
        if graph is not None:
            touched = self._read(lambda: self.files.queued_ids(col, persisted))
            row_of = {record_id: row for row, record_id in enumerate(ids)}
            element_row = np.array(
                [row_of.get(i, -1) if i is not None and i not in touched else -1 for i in element_ids], dtype=np.int64
            )
            held = np.zeros(len(ids), dtype=bool)
            held[element_row[element_row >= 0]] = True
            walk = (graph, element_row, np.flatnonzero(~held))
        self._graphs[name] = (token, walk)
        return walk

    def _vector_matrix(self, name: str) -> tuple[str, list[str], Any, Any, Any]:
        """(token, ids, vectors, unit vectors (squared norms for l2), each row's index position)."""
        import numpy as np

        token = self.change_token()
        cached = self._vectors.get(name)
        if cached and cached[0] == token:
            return cached
        vectors = self._read(lambda: self.files.vectors(self.collection_info(name)))
        matrix = vectors.matrix()
        space = self.collection_info(name).space
        if space == "cosine":
            norms = np.linalg.norm(matrix, axis=1, keepdims=True) if len(matrix) else np.ones((0, 1), np.float32)
            unit = matrix / np.where(norms == 0, 1.0, norms).astype(np.float32)
        elif space == "ip":
            unit = None
        else:
            unit = (matrix.astype(np.float64) ** 2).sum(axis=1)
        position = self._index_of(name).position()
        positions = np.array([position.get(i, -1) for i in vectors.ids], dtype=np.int64)
        self._vectors[name] = (token, vectors.ids, matrix, unit, positions)
        return self._vectors[name]

    def _vector_filter(self, name: str, query: MemoryQuery, positions: Any) -> Any:
        """Which rows of the vector matrix the query's filters keep (None: all)."""
        only_active = bool(query.statuses) and set(query.statuses) == {Status.ACTIVE}
        if not (only_active or query.channels or query.layers):
            return None
        index = self._index_of(name)
        narrowed = MemoryQuery(
            channels=query.channels, layers=query.layers, statuses=(Status.ACTIVE,) if only_active else ()
        )
        key = (index.token, name, (narrowed.channels, narrowed.layers, narrowed.statuses))
        if key not in self._filters:
            if len(self._filters) > 8:
                self._filters.clear()
            mask = self._mask(index, narrowed, name, contains=False, mirrors=True)  # a mirror stands for its memory
            self._filters[key] = (positions >= 0) & (mask[positions] if mask is not None else True)
        return self._filters[key]

    # -- the write primitive ------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        # Two Chroma directories in one store (CrewAI's short-term and entity
        # memory) each own the ids of their own collections.
        if not record_id.startswith("vec:"):
            return False
        return not self._collections or record_id[4:].partition(":")[0] in self._collections

    @one_read
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
        with _chroma_refusal(f"Chroma could not write {record_id} in {self.root}", only_its_own=True), self.files.lock:
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
                # A document is sent only when it changed, and then with a vector: given a document
                # alone, chromadb embeds it with its default model (a download, here refused).
                document = new.get("document")
                changed = document is not None and document != current.get("document")
                vector = new["embedding"] if new["embedding"] is not None else None
                if changed and vector is None:
                    raise StoreFileError(
                        f"{record_id} has no readable vector in {self.root} to go with its new text; "
                        "nothing was written. Re-embed the store, then edit it."
                    )
                col.update(
                    ids=[key],
                    embeddings=[vector] if vector is not None else None,
                    documents=[document] if changed else None,
                    metadatas=[{**new["metadata"], **removed}] if (new["metadata"] or removed) else None,
                )
        self._forget(name)
        return self.read_record(record_id)

    def _forget(self, name: str) -> None:
        """Drop what was read of a collection this source just wrote."""
        self._index.pop(name, None)
        self._columns.pop(name, None)
        self._vectors.pop(name, None)
        self._graphs.pop(name, None)
        self._filters.clear()
        self._eligible = (None,)
        self._recent.clear()

    # -- planning ---------------------------------------------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        """Changes to a vector record that is a memory of its own (not a copy of a memory.db row)."""
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} in {self.root}.")
        return record_plan(snap, operation, memory, fields, context)

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
            with self.files.lock:
                col.add(
                    ids=ids[start:end],
                    documents=documents[start:end],
                    metadatas=metadatas[start:end],
                    embeddings=embeddings[start:end],
                )
        self._forget(name)


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


def split_record_id(record_id: str) -> tuple[str, str]:
    if not record_id.startswith("vec:") or ":" not in record_id[4:]:
        raise NotFoundError(f"{record_id!r} is not a vector record id (vec:<collection>:<id>).")
    name, _, key = record_id[4:].partition(":")
    return name, key


def record_memory(
    label: str, name: str, record_id: str, document: str | None, meta: dict[str, Any], revision: str = ""
) -> Memory:
    """A Chroma record as a memory: label names the directory (or server) it lives in."""
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
        source=SourceRef(Kind.CHROMA, f"{label}:{name}/{record_id}", path=label),
        layer=parse_layer(layer_value, Layer.SEMANTIC),
        channel=str(meta.get("channel") or GLOBAL_CHANNEL),
        content=text,
        created_at=created,
        updated_at=updated or created,
        last_accessed=parse_time(meta.get("last_accessed"), updated) or created,
        access_count=int(meta.get("access_count") or 0),
        salience=number_or(meta.get("salience"), 0.5),
        confidence=number_or(meta.get("confidence"), 1.0),
        conversations=int(meta.get("conversations") or 0),
        tags=tuple(str(t) for t in tags),
        metadata=extra,
        status=parse_status(meta.get("status") or "active"),
        provenance=Provenance(promoted_from=meta.get("promoted_from")),
        revision=revision,
    )


def record_plan(snap: Snapshot, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
    """The changes that carry out operation on a vector record read as snap (ChromaSource.plan,
    and a Chroma server's)."""
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


# -- the metadata index ----------------------------------------------------------------------

_INDEX_KEYS = (
    "status", "channel", "layer", "category", "memory_type", "created_at", "timestamp",
    "updated_at", "last_accessed", "salience", MIRROR_KEY, STALE_KEY,
)
_INDEX_FORMAT = 1
_INDEXES: dict[str, RecordIndex] = {}  # the last few indexes read in this process, by cache key
_INDEXES_KEPT = 4
_PERSIST_FROM = 5_000  # records from which an index is kept in the user's cache folder
_PERSISTED_KEPT = 16  # indexes kept there, the most recently written
_GRAPH_FROM = 20_000  # records from which a vector search walks Chroma's graph instead of comparing every vector


def _index_cache_key(db: Path, collection_id: str, reading: type) -> str:
    where = f"{os.path.realpath(db)}|{collection_id}|{reading.__module__}.{reading.__qualname__}|{_INDEX_FORMAT}"
    return hashlib.sha1(where.encode("utf-8", "replace")).hexdigest()


def _index_cache_path(key: str) -> Path:
    return Path(user_cache_dir("mnemoscope", "Mnemoscope")) / "chroma-index" / f"{key}.npz"


def _keep_index(index: RecordIndex, key: str) -> None:
    """Keep the index in the user's cache folder (never in the store), the most recent few; a
    failure is no error."""
    if len(index) < _PERSIST_FROM:
        return  # read again in a moment: not worth a file
    path = _index_cache_path(key)
    index.save(path)
    try:
        kept = sorted(path.parent.glob("*.npz"), key=lambda f: f.stat().st_mtime, reverse=True)
        for old in kept[_PERSISTED_KEPT:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


def _dot(matrix: Any, q: Any) -> Any:
    """Each row's dot product with q, on this thread: BLAS would share a matrix-vector product
    out among threads, whose start-up on a busy machine costs several times the product."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, q)


def _until_enough(rows: Iterator[tuple[str, int]], kept: Any, queued: dict[str, Any], k: int) -> Iterator[tuple[str, int]]:
    """The first k rows the query keeps (records with queued operations are read apart)."""
    n = 0
    for record_id, hits in rows:
        if record_id in queued or not kept(record_id):
            continue
        yield record_id, int(hits)
        n += 1
        if n >= k:
            return


def _text_contains(text: Any, needle: str) -> bool:
    return isinstance(text, str) and needle in text.casefold()


def _revision(snap: Snapshot, embedding: Any) -> str:
    """A record's revision: its document and metadata, and the exact bytes of its embedding
    (hashed as stored, so that a search hit and get() agree without rounding every number)."""
    import numpy as np

    body = (snap["collection"], snap["id"], snap["document"], sorted(snap["metadata"].items()))
    digest = hashlib.sha1(repr(body).encode("utf-8", "replace"))
    if embedding is not None:
        digest.update(np.asarray(embedding, dtype=np.float32).tobytes())
    return digest.hexdigest()[:12]
