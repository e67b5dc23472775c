"""A local Chroma persistent directory as a source: every collection's records as memories.

Reading goes through ChromaFiles (files.py: the directory's files, opened read-only); chromadb's
client, which writes on open, is started only for the first write (and chromadb is imported
only then: client.py).

- Filtering, ordering and counting read an index of each collection (index.py): a few numpy
  columns per record (status, layer, channel, times, salience, flags), folded out of
  chroma.sqlite3 in one SQL pass, kept until the directory's change token moves, and kept in the
  user's cache folder (index_cache.py; never in the store) so that the next open of an unchanged
  directory loads it. Memory objects are built only for the rows a call returns, with their
  documents fetched for those rows (records.py: how a record reads as a memory).
- Keyword search is one SQL pass per collection (LIKE where it folds case as casefold does),
  ranked in SQL and stopped at the k-th record the filters keep.
- Vector search compares every vector (exact) in small collections; in big ones it walks
  Chroma's own persisted HNSW graph as hnswlib does, then applies the filters to what it found
  (local_vector_search.py).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, overload

from ...detect.looks import is_file
from ...embedders.base import EMBEDDER_KEY, Embedder
from ...errors import (
    ConflictError,
    NotFoundError,
    ReadOnlyError,
    StoreFileError,
    UnreadableStoreError,
)
from ...model import EDITABLE_FIELDS, Kind, Memory
from ...query import MemoryQuery
from ...source import Capabilities, Change, Plan, PlanContext, Snapshot, bin_by, same_record
from ...timeutil import parse_time
from ..workspace_vectors import READ_FAILURES, WorkspaceVectors, failure_text
from .client import (
    checked_files,
    chroma_refusal,
    close_client,
    import_chromadb,
    link_out_of,
    migration_fault,
    write_refusal,
)
from .files import CHROMA_FILE, MAX_WORDS, ChromaFiles, Collection, directory_lock
from .hnsw import segment_fault
from .index import RecordIndex, RecordIndexBuilder, one_read
from .index_cache import cache_key, cached_index, keep_index
from .local_vector_search import LocalVectorSearch
from .records import (
    MIRROR_KEY,
    NATIVE_COLLECTION,
    STALE_KEY,
    TEXT_KEYS,
    record_id_for,
    record_memory,
    record_plan,
    record_revision,
    split_record_id,
)

_BATCH = 2000


class RecordReading:
    """How records become memories: a tool that keeps its own store in Chroma (mem0) passes
    its own reading to the ChromaSource it holds, instead of subclassing it."""

    def collections(self, names: list[str]) -> list[str]:
        """The collections that hold memories."""
        return names

    def memory(self, memory: Memory, meta: dict[str, Any], *, full: bool) -> Memory:
        """The memory as the tool means it; full=False when only filtering and sorting need it."""
        return memory


class ChromaSource(LocalVectorSearch):
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
        self._stored: dict[str, tuple[str, dict[str, str]]] = {}  # collection -> (token, when Chroma stored each record)
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

    @overload
    @classmethod
    def open(cls, path: Path, reading: RecordReading | None = None, *, read_only: bool = False,
             strict: Literal[True]) -> ChromaSource: ...

    @overload
    @classmethod
    def open(cls, path: Path, reading: RecordReading | None = None, *, read_only: bool = False,
             strict: Literal[False] = False) -> ChromaSource | WorkspaceVectors: ...

    @classmethod
    def open(cls, path: Path, reading: RecordReading | None = None, *, read_only: bool = False,
             strict: bool = False) -> ChromaSource | WorkspaceVectors:
        """The directory's collections. A directory that cannot be read raises UnreadableStoreError
        when strict (a tool's store that is nothing without it: mem0's, CrewAI's), else opens as
        a WorkspaceVectors that says why (a workspace's vectors/, as open_store opens it: memory.db
        and markdown stay readable; a Chroma directory opened alone is refused by the workspace)."""
        try:
            linked = Path(path).is_symlink() or (Path(path) / CHROMA_FILE).is_symlink()
            files = ChromaFiles(Path(path), may_recover=not (read_only or linked))  # no rollback through a link
            with files.batch():
                checked_files(files)
                reason = write_refusal(files) or ("opened read-only" if read_only else "") or link_out_of(Path(path))
                return cls(files, read_only_reason=reason, reading=reading)
        except READ_FAILURES as exc:
            if strict:
                if isinstance(exc, UnreadableStoreError | OSError):
                    raise
                raise UnreadableStoreError(failure_text(Path(path), exc)) from None
            return WorkspaceVectors.unreadable(Path(path), failure_text(Path(path), exc))

    @classmethod
    def create(cls, path: Path, embedder: Embedder) -> ChromaSource:
        chromadb, Settings = import_chromadb()
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
                close_client(client)
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
            close_client(self._client)
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
        with chroma_refusal(f"Chroma could not open {self.root} for writing"), self.files.lock:
            if self._client is None:
                chromadb, Settings = import_chromadb()
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
            if first and (migrations := migration_fault(self.files)):
                return migrations
            if structure := self.files.structure_fault(col):
                return f"collection {col.name!r}: {structure}"
            if configuration := self.files.configuration_fault(col):
                return f"collection {col.name!r}: {configuration}"
            if col.vector_segment and (index := segment_fault(self.path / col.vector_segment, col.space == "cosine")):
                return f"collection {col.name!r}: {index}"
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
        key = cache_key(self.files.db, col.id, type(self.reading))
        found = cached_index(key, token)
        if found is None:
            found = self._read(lambda: self._build_index(name, col, token))
            keep_index(found, key)
        self._columns[name] = found
        return found

    def _build_index(self, name: str, col: Collection, token: str) -> RecordIndex:
        plain = type(self.reading).memory is RecordReading.memory
        builder = RecordIndexBuilder(token, stored=lambda: self._stored_times(name))
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
        revision = record_revision(snap, embedding) if snap is not None else ""
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
        return record_memory(
            self._label(), name, record_id, document, meta, revision, lambda: self._stored_time(name, record_id)
        )

    def _stored_times(self, name: str) -> dict[str, str]:
        token = self.change_token()
        cached = self._stored.get(name)
        if cached is None or cached[0] != token:
            cached = self._stored[name] = (token, self._read(lambda: self.files.stored_times(self.collection_info(name))))
        return cached[1]

    def _stored_time(self, name: str, record_id: str) -> datetime | None:
        return parse_time(self._stored_times(name).get(record_id), None)

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
        words = [w for w in text_query.split() if w][:MAX_WORDS]  # (a longer query: its first words)
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
        with chroma_refusal(f"Chroma could not write {record_id} in {self.root}", only_its_own=True), self.files.lock:
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

    def forget_purged(self, removed: Sequence[Change]) -> list[str]:
        """After a purge removed records: what chroma.sqlite3 still keeps of their text cleared
        (scrub.py), with chromadb's client closed meanwhile (it starts again at the next write)."""
        from .scrub import scrub

        keys: dict[str, list[str]] = {}
        for change in removed:
            if change.after is None and change.before is not None:
                name, key = split_record_id(change.record)
                keys.setdefault(name, []).append(key)
        if not keys:
            return []
        if self._client is not None:
            with self.files.lock:
                close_client(self._client)
            self._client = None
            self._writers.clear()
        notes = scrub(self.files, [(self.collection_info(name), found) for name, found in keys.items()])
        for name in keys:
            self._forget(name)
        return notes

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


_INDEX_KEYS = (
    "status", "channel", "layer", "category", "memory_type", "created_at", "timestamp",
    "updated_at", "last_accessed", "salience", MIRROR_KEY, STALE_KEY,
)


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
