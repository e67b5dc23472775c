"""A Chroma server (``chroma run``, Chroma Cloud-style deployments) as the vector store: the
records of its collections as memories, read and written through ``chromadb.HttpClient``.

It presents records exactly as a Chroma persistent directory's (local.py): the same ids
(``vec:<collection>:<id>``), the same record -> Memory reading (records.py), the same
snapshots for the write primitive and the same plans. What differs is where the work runs:

- Chroma cannot sort by a metadata field, so an ordered page needs every matching record's sort
  key. The source keeps, per collection, the same few numpy columns a local directory's index
  holds (status, layer, channel, times, salience, flags), folded from the records' metadata
  fetched in batches (``get(include=["metadatas"], limit, offset)``: never documents or
  embeddings), and kept until the collection's change token moves; after its own write of one
  record the source patches that record's row instead of reading them all again. Filtering,
  ordering and counting read those columns as a local directory's do (index.IndexedReads);
  only the rows of a page are fetched whole (``get(ids=...)``). An unfiltered count is Chroma's
  own ``count()``.
- Keyword search and the "contains" filter run at the server (``where_document`` ``$regex``
  with ``(?i)``, which folds case as the local search does; ``$contains``, case-sensitive, on a
  server without ``$regex``), returning ids only. Text kept in metadata instead of the document
  (mem0's ``data``) is not searched there: Chroma's ``where`` has no substring operator.
- Vector search is ``collection.query``, over-fetched and filtered afterwards (a ``where`` on
  status makes Chroma scan every record's metadata first; see issue 10), widened until k
  records pass the filters or the collection is exhausted.
- The change token: chromadb's API offers no sequence number here (``log_position`` and
  ``version`` stay 0 on a single-node server, ``get_indexing_status`` is not implemented), no
  aggregate (max updated_at) and no sort. So it is, per collection, its id, Chroma's
  ``count()`` (any add or delete, by any client) and a revision stamp Mnemoscope writes into the
  collection's metadata (``mnemoscope:revision``) after each of its writes (any process using
  this library). One list request plus one count per collection: cheap enough to poll every
  second. An in-place update by a client that is not Mnemoscope moves neither; it is still
  caught as a conflict when a write finds the record changed since it was read.
- Chroma has no transactions: a write reads the record, compares it with the snapshot the caller
  read, then writes it. A writer slipping in between those two requests is not seen.

The auth token travels only in the ``Authorization`` header; messages carry the URL without
secrets (``credentials.redacted``) and library errors go through ``credentials.scrubbed``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from ...credentials import Secret, scrubbed, split_secret
from ...embedders.base import EMBEDDER_KEY, Embedder, RecordedEmbedder, recorded_in_chroma
from ...errors import (
    ConflictError,
    NotFoundError,
    ReadOnlyError,
    SecretRefusedError,
    StoreError,
    UnreadableStoreError,
)
from ...model import EDITABLE_FIELDS, Kind, Memory, Status
from ...query import MemoryQuery
from ...source import Capabilities, Change, Plan, PlanContext, Snapshot, same_record
from .client import close_client, import_chromadb
from .files import Collection
from .index import IndexedReads, RecordIndex, RecordIndexBuilder, one_read
from .records import (
    NATIVE_COLLECTION,
    record_id_for,
    record_memory,
    record_plan,
    record_revision,
    split_record_id,
)
from .vector_collection import VectorCollection, paged

DEFAULT_TENANT = "default_tenant"  # chromadb.config.DEFAULT_TENANT, spelled here so parsing a URL imports no chromadb
DEFAULT_DATABASE = "default_database"
DEFAULT_PORTS = {"http": 8000, "https": 443}
REVISION_KEY = "mnemoscope:revision"
URL_PARAMETERS = ("tenant", "database", "collection")
_BATCH = 1000  # records per get() while folding metadata into the index
_CONNECT_TIMEOUT = 5.0
_TIMEOUT = 60.0
_OVERFETCH = 4  # vector search asks for k x this many, and widens by it until k pass the filters
_REGEX_META = set("\\.+*?()|[]{}^$#&-~")


@dataclass(frozen=True)
class ServerAddress:
    """Where a Chroma server is, as a Mnemoscope URL names it: ``http(s)://host:port`` with
    optional ``?tenant=T&database=D&collection=C``. ``location`` is the URL as it may be shown."""

    scheme: str
    host: str
    port: int
    tenant: str = DEFAULT_TENANT
    database: str = DEFAULT_DATABASE
    collection: str | None = None

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    @property
    def location(self) -> str:
        given = [(k, v) for k, v in (("tenant", self.tenant), ("database", self.database)) if v != _DEFAULTS[k]]
        if self.collection:
            given.append(("collection", self.collection))
        return self.base + (f"/?{urlencode(given)}" if given else "")


_DEFAULTS = {"tenant": DEFAULT_TENANT, "database": DEFAULT_DATABASE}


def parse_server_url(url: str) -> tuple[ServerAddress, Secret | None]:
    """The server a URL names, and the secret written into it (a ``token=`` parameter or a
    password), if any. UnreadableStoreError (naming the URL without its secret) when it names none."""
    clean, inline = split_secret(url.strip())
    try:
        parts = urlsplit(clean)
        port = parts.port
    except ValueError as exc:
        raise UnreadableStoreError(f"{clean} is not a Chroma server URL ({exc}).") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise UnreadableStoreError(f"{clean} is not a Chroma server URL (http://host:port or https://host:port).")
    if parts.path not in ("", "/"):
        raise UnreadableStoreError(
            f"{clean}: a Chroma server URL has no path (http(s)://host:port/?tenant=T&database=D&collection=C)."
        )
    values: dict[str, str] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key not in URL_PARAMETERS:
            raise UnreadableStoreError(
                f"{clean}: unknown parameter {key!r}; a Chroma server URL takes {', '.join(URL_PARAMETERS)}."
            )
        if not value:
            raise UnreadableStoreError(f"{clean}: the parameter {key!r} is empty.")
        values[key] = value
    address = ServerAddress(
        scheme=scheme,
        host=parts.hostname,
        port=port or DEFAULT_PORTS[scheme],
        tenant=values.get("tenant", DEFAULT_TENANT),
        database=values.get("database", DEFAULT_DATABASE),
        collection=values.get("collection"),
    )
    return address, inline


@dataclass(frozen=True)
class _Col:
    """One collection as the server listed it: its handle (chromadb's Collection, never with an
    embedding function) and what the change token is made of."""

    name: str
    id: str
    count: int
    metadata: dict[str, Any]
    configuration: dict[str, Any]
    dimension: int | None
    handle: Any

    @property
    def token(self) -> str:
        return _collection_token(self.id, self.count, self.metadata.get(REVISION_KEY, ""))

    @property
    def space(self) -> str:
        """Its distance, read from its metadata and configuration as a local directory's is."""
        return Collection(self.id, self.name, self.metadata, self.configuration, self.dimension, None, None).space


def _collection_token(collection_id: str, count: int, revision: Any) -> str:
    """A collection's part of the change token: its id, Chroma's count() and Mnemoscope's stamp."""
    return f"{collection_id}:{count}:{revision}"


class ChromaServerSource(IndexedReads):
    """The collections of one database of a Chroma server (or one collection of it)."""

    kind = Kind.CHROMA
    format = "chroma"
    label = "Chroma server"
    seeks = False

    def __init__(self, address: ServerAddress, client: Any, *, token: Secret | None = None, read_only_reason: str = ""):
        self.address = address
        self.location = address.location
        # A server has no folder: root names it (host:port) where a path is expected (messages, import keys).
        self.root = Path(f"{address.host}:{address.port}")
        self.client = client
        self.read_only_reason = read_only_reason
        self.embedder_override: Embedder | None = None
        self._token = token
        self._call = threading.local()
        self._call.cols = None
        self._lock = threading.RLock()
        self._handles: dict[str, Any] = {}  # collection id -> chromadb Collection (embedding_function=None)
        self._indexes: dict[str, RecordIndex] = {}
        self._mirrors_hidden = False
        self._regex = True  # the server answers where_document $regex

    @contextlib.contextmanager
    def _one_read(self) -> Iterator[None]:
        """A public read on one listing of the server's collections (one request plus a count per
        collection), however many times the read asks for the change token."""
        if getattr(self._call, "cols", None) is not None:
            yield
            return
        self._call.cols = self._look()
        try:
            yield
        finally:
            self._call.cols = None

    # -- opening ------------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str, *, token: Secret | None = None, read_only: bool = False) -> ChromaServerSource:
        """The server a URL names (``http(s)://host:port[/?tenant=T&database=D&collection=C]``).
        token goes into the Authorization header. UnreadableStoreError (SecretRefusedError for a
        refused or missing token) naming the URL, without secrets, when it cannot be read."""
        address, inline = parse_server_url(url)
        token = token or inline
        _probe(address, token)
        client = _client(address, token)
        source = cls(address, client, token=token, read_only_reason="opened read-only" if read_only else "")
        try:
            source._look()  # the collection asked for exists; every record count answers
        except BaseException:
            source.close()
            raise
        return source

    @classmethod
    def create(cls, url: str, embedder: Embedder, token: Secret | None = None) -> ChromaServerSource:
        """The native collection (the URL's collection, else ``memories``) made on the server,
        recording embedder, then opened; an existing one is opened as it is."""
        address, inline = parse_server_url(url)
        token = token or inline
        _probe(address, token)
        client = _client(address, token)
        try:
            with _talking(address, token, "could not create its collection", StoreError):
                client.get_or_create_collection(
                    address.collection or NATIVE_COLLECTION,
                    embedding_function=None,
                    metadata={EMBEDDER_KEY: embedder.name},
                    configuration={"hnsw": {"space": "cosine"}},
                )
        finally:
            close_client(client)
        return cls.open(url, token=token)

    def close(self) -> None:
        with self._lock:
            self._indexes.clear()
            self._handles.clear()
            if self.client is not None:
                close_client(self.client)
            self.client = None

    def keep_writes_inside(self, root: Path) -> None:
        """Nothing of a server lives in a folder."""

    def hide_mirrors(self) -> None:
        """Leave out records that are vector copies of memory.db memories."""
        self._mirrors_hidden = True

    # -- talking to the server -----------------------------------------------------------------

    def _talking(self, what: str, error: type[StoreError] = UnreadableStoreError) -> Any:
        return _talking(self.address, self._token, what, error)

    def _look(self) -> dict[str, _Col]:
        """The collections as the server has them now, with their counts."""
        if self.client is None:
            raise UnreadableStoreError(f"Chroma server {self.location} was closed.")
        with self._talking("could not list its collections"):
            if self.address.collection:
                models = [self.client.get_collection(self.address.collection, embedding_function=None)]
            else:
                models = list(self.client.list_collections())
            found: dict[str, _Col] = {}
            for model in models:
                handle = self._handle(model)
                configuration = dict(getattr(model, "configuration_json", None) or {})
                schema = getattr(getattr(model, "_model", None), "serialized_schema", None)
                if schema:
                    configuration.setdefault("schema", schema)
                found[model.name] = _Col(
                    name=model.name,
                    id=str(model.id),
                    count=int(handle.count()),
                    metadata=dict(model.metadata or {}),
                    configuration=configuration,
                    dimension=getattr(getattr(model, "_model", None), "dimension", None),
                    handle=handle,
                )
        return found

    def _handle(self, model: Any) -> Any:
        """chromadb's Collection with no embedding function: every vector is passed explicitly
        (Chroma's default function downloads a model)."""
        key = str(model.id)
        with self._lock:
            if key not in self._handles:
                if getattr(model, "_embedding_function", None) is None:
                    self._handles[key] = model
                else:
                    self._handles[key] = self.client.get_collection(model.name, embedding_function=None)
            return self._handles[key]

    def _cols(self) -> dict[str, _Col]:
        cols = getattr(self._call, "cols", None)
        return cols if cols is not None else self._look()

    def _col(self, name: str) -> _Col:
        try:
            return self._cols()[name]
        except KeyError:
            raise NotFoundError(f"No Chroma collection {name!r} on {self.location}.") from None

    # -- what the store asks of a vector source ----------------------------------------------

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        writable = not self.read_only_reason
        return Capabilities(
            read_only=not writable,
            read_only_reason=self.read_only_reason,
            editable_fields=EDITABLE_FIELDS if writable else (),
            can_promote=writable,
            can_soft_delete=writable,
            can_reinforce=writable,
            keyword_search=True,
            vector_search=True,
            reembed=writable,
        )

    def problems(self) -> list[str]:
        return []

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": self.format, "label": self.label, "url": self.location,
            "tenant": self.address.tenant, "database": self.address.database,
        }
        if self.address.collection:
            out["collection"] = self.address.collection
        return out

    def change_token(self) -> str:
        cols = self._cols()
        body = "|".join(f"{name}={col.token}" for name, col in sorted(cols.items()))
        return "chroma-server:" + hashlib.sha1(body.encode("utf-8", "replace")).hexdigest()[:16]

    def collections(self) -> list[str]:
        return sorted(self._cols())

    def record_count(self, name: str) -> int:
        return self._col(name).count

    def _collection_meta(self, name: str) -> _Col:
        return self._col(name)

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        col = self._col(name)
        return {**super().embedding_function_info(name), "dimensions": col.dimension if col.count else None}

    def recorded_embedder(self, name: str) -> RecordedEmbedder:
        """What the collection records about the model that wrote its vectors (embedding.recorded_embedders)."""
        col = self._col(name)
        return recorded_in_chroma(name, col.metadata, col.configuration, col.dimension if col.count else None)

    def collection(self, name: str) -> Any:
        """chromadb's own collection object, for agents and tests."""
        return self._col(name).handle

    @one_read
    def vector_collections(self) -> list[VectorCollection]:
        """Every collection's vectors, fetched with Chroma's get a page at a time as they are read."""
        return [VectorCollection(name, col.count, int(col.dimension or 0), col.space, self.kind,
                                 paged(functools.partial(self._vector_page, col)),
                                 functools.partial(self.record_index, name))
                for name, col in sorted(self._cols().items())]

    def _vector_page(self, col: _Col, limit: int, offset: int) -> tuple[list[str], Any]:
        with self._talking(f"could not read the vectors of collection {col.name!r}"):
            got = col.handle.get(include=["embeddings"], limit=limit, offset=offset)
        return list(got["ids"]), got["embeddings"]

    # -- the metadata index ---------------------------------------------------------------------

    def _index_of(self, name: str) -> RecordIndex:
        """The collection's records as columns (see the module's docstring), kept until its part
        of the change token moves."""
        col = self._col(name)
        with self._lock:
            cached = self._indexes.get(name)
            if cached is not None and cached.token == col.token:
                return cached
            index = self._build_index(col)
            self._indexes[name] = index
            return index

    def _build_index(self, col: _Col) -> RecordIndex:
        """Every record's metadata, a batch at a time, folded into columns. Offsets move when
        another client adds or deletes meanwhile: then the pass is made again (a few times)."""
        builder = RecordIndexBuilder(col.token)
        for _attempt in range(3):
            builder = RecordIndexBuilder(col.token)
            seen: set[str] = set()
            with self._talking(f"could not read collection {col.name!r}"):
                offset = 0
                while True:
                    got = col.handle.get(include=["metadatas"], limit=_BATCH, offset=offset)
                    for record_id, meta in zip(got["ids"], got["metadatas"] or [], strict=True):
                        if record_id not in seen:
                            seen.add(record_id)
                            builder.add(record_id, dict(meta or {}), None)
                    if len(got["ids"]) < _BATCH:
                        break
                    offset += _BATCH
                settled = int(col.handle.count()) == col.count == len(seen)
            if settled:
                break
        return builder.index()

    def _count_without_index(self, name: str) -> int:
        """Chroma's own count(), listed with the collection."""
        return self._col(name).count

    def _ids_containing(self, name: str, needle: str) -> set[str]:
        """Ids of records whose document contains needle, case aside: asked of the server."""
        col = self._col(name)
        with self._talking(f"could not search collection {col.name!r}"):
            if self._regex:
                try:
                    got = col.handle.get(where_document={"$regex": "(?i)" + _literal(needle)}, include=[])
                    return set(got["ids"])
                except Exception as exc:  # an older server: no $regex
                    if "regex" not in str(exc).lower():
                        raise
                    self._regex = False
            return set(col.handle.get(where_document={"$contains": needle}, include=[])["ids"])

    # -- reading ------------------------------------------------------------------------------------

    def _records(self, name: str, ids: list[str]) -> dict[str, tuple[str | None, dict[str, Any]]]:
        with self._talking(f"could not read collection {name!r}"):
            got = self._col(name).handle.get(ids=ids, include=["documents", "metadatas"])
        return {i: (doc, dict(meta or {})) for i, doc, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)}

    def _memory(
        self, name: str, record_id: str, document: str | None, meta: dict[str, Any], snap: Snapshot | None = None
    ) -> Memory:
        revision = record_revision(snap, snap["embedding"]) if snap is not None else ""
        return record_memory(self.location, name, record_id, document, meta, revision)

    @one_read
    def get(self, memory_id: str) -> Memory | None:
        snap = self.read_record(memory_id)
        if snap is None:
            return None
        return self._memory(snap["collection"], snap["id"], snap["document"], snap["metadata"], snap)

    @one_read
    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        """Records ranked by how many of the words their document contains, case aside (a word
        given twice counts twice), then by id, as a local directory ranks them: each distinct
        word is one where_document request for ids, filters apply to the index's columns, and
        only the k shown are fetched whole."""
        words = [w for w in text_query.split() if w]
        if not words or k <= 0 or not query.wants_kind(self.kind):
            return []
        ranked: list[tuple[int, str, str, str]] = []
        for name in self.collections():
            index = self._index_of(name)
            mask = self._mask(index, query, name, contains=False)
            position = index.position()
            matching = {needle: self._ids_containing(name, needle) for needle in dict.fromkeys(w.casefold() for w in words)}
            hits: dict[str, int] = {}
            for word in words:
                for record_id in matching[word.casefold()]:
                    hits[record_id] = hits.get(record_id, 0) + 1
            for record_id, n in hits.items():
                at = position.get(record_id)
                if at is not None and (mask is None or bool(mask[at])):
                    ranked.append((-n, record_id_for(name, record_id), name, record_id))
        ranked.sort()
        return self._with_documents([(name, record_id) for _h, _m, name, record_id in ranked[:k]])

    def _nearest_memories(
        self, name: str, vector: list[float], query: MemoryQuery, k: int
    ) -> list[tuple[Memory, float]]:
        """collection.query, then the filters a local directory applies to its distances (status
        only when just active ones are asked for, channels, layers; a mirror stands for its
        memory), widening the request until k pass or the collection has no more."""
        col = self._col(name)
        if k <= 0 or col.count == 0:
            return []
        if col.dimension is not None and col.dimension != len(vector):
            raise StoreError(
                f"Vector search in collection {name!r} failed: the query has {len(vector)} dimensions, "
                f"the collection {col.dimension}."
            )
        only_active = bool(query.statuses) and set(query.statuses) == {Status.ACTIVE}

        def kept(memory: Memory) -> bool:
            return (
                (not only_active or memory.status is Status.ACTIVE)
                and (not query.channels or memory.channel in query.channels)
                and (not query.layers or memory.layer in query.layers)
            )

        wanted = min(col.count, k * _OVERFETCH)
        while True:
            with self._talking(f"could not search collection {name!r}"):
                got = col.handle.query(
                    query_embeddings=[list(map(float, vector))],
                    n_results=wanted,
                    include=["documents", "metadatas", "distances"],
                )
            rows = zip(got["ids"][0], got["documents"][0], got["metadatas"][0], got["distances"][0], strict=True)
            found = [
                (record_id, document, dict(meta or {}), float(distance))
                for record_id, document, meta, distance in rows
            ]
            hits = [(f, m) for f in found if kept(m := self._memory(name, f[0], f[1], f[2]))]
            if len(hits) >= k or wanted >= col.count or len(found) < wanted:
                break
            wanted = min(col.count, wanted * _OVERFETCH)
        hits = hits[:k]
        # Each hit as get() returns it, with its revision (the embedding's bytes): the k kept ones' vectors only.
        with self._talking(f"could not read collection {name!r}"):
            got = col.handle.get(ids=[f[0] for f, _m in hits], include=["embeddings"])
        vectors = dict(zip(got["ids"], got["embeddings"] if got["embeddings"] is not None else [], strict=True))
        out = []
        for (record_id, document, meta, distance), _memory in hits:
            snap = {"collection": name, "id": record_id, "document": document, "metadata": meta,
                    "embedding": _floats(vectors.get(record_id))}
            out.append((self._memory(name, record_id, document, meta, snap), distance))
        return out

    # -- the write primitive ----------------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        if not record_id.startswith("vec:"):
            return False
        name = record_id[4:].partition(":")[0]
        return name == self.address.collection if self.address.collection else True

    @one_read
    def read_record(self, record_id: str) -> Snapshot | None:
        name, key = split_record_id(record_id)
        col = self._cols().get(name)
        if col is None:
            return None
        with self._talking(f"could not read {record_id}"):
            got = col.handle.get(ids=[key], include=["documents", "metadatas", "embeddings"])
        if not got["ids"]:
            return None
        embeddings = got["embeddings"]
        return {
            "collection": name,
            "id": key,
            "document": got["documents"][0],
            "metadata": dict(got["metadatas"][0] or {}),
            "embedding": _floats(embeddings[0] if embeddings is not None else None),
        }

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Refuse, before a curation step writes anything (its journal entry included), when the
        server cannot be written: opened read-only, unreachable, or a collection gone."""
        if self.read_only_reason:
            raise ReadOnlyError(f"{self.location} cannot be written: {self.read_only_reason}; nothing was written.")
        cols = self._look()
        for name in sorted({split_record_id(change.record)[0] for change in changes}):
            if name not in cols:
                raise NotFoundError(f"No Chroma collection {name!r} on {self.location}; nothing was written.")

    @one_read
    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        if self.read_only_reason:
            raise ReadOnlyError(f"{self.location} is read-only: {self.read_only_reason}.")
        name, key = split_record_id(record_id)
        current = self.read_record(record_id)
        if not same_record(current, expected):
            raise ConflictError(
                f"{record_id} changed since it was read (another writer touched it); "
                "nothing was written. Reload and try again."
            )
        col = self._col(name)
        with self._lock:
            before = self._indexes.get(name)
        with self._talking(f"could not write {record_id}", StoreError):
            if new is None:
                col.handle.delete(ids=[key])
            elif current is None:
                col.handle.add(
                    ids=[key],
                    embeddings=[new["embedding"]],
                    documents=[new["document"]] if new.get("document") is not None else None,
                    metadatas=[new["metadata"]] if new["metadata"] else None,
                )
            else:
                removed = {k: None for k in current["metadata"] if k not in new["metadata"]}
                # Always the vector: given a document alone, chromadb embeds it with Chroma's default
                # function (which downloads a model), even for a collection opened without one.
                vector = new["embedding"] if new["embedding"] is not None else current["embedding"]
                col.handle.update(
                    ids=[key],
                    embeddings=[vector] if vector is not None else None,
                    documents=[new["document"]] if new.get("document") is not None else None,
                    metadatas=[{**new["metadata"], **removed}] if (new["metadata"] or removed) else None,
                )
        revision = self._stamp(name)
        written = self.read_record(record_id)
        if before is not None and before.token == col.token:
            self._patch_index(col, before, key, written, revision)
        return written

    def _patch_index(
        self, col: _Col, before: RecordIndex, key: str, written: Snapshot | None, revision: str
    ) -> None:
        """Keep the collection's index, with the one record this source just wrote patched in,
        instead of reading every record's metadata again at the next read (a request per
        thousand records): when Chroma's count is what this write alone makes it (another
        client's add or delete meanwhile: the next read rebuilds it)."""
        expected = len(before) + (written is not None) - (key in before.position())
        try:
            with self._talking(f"could not count collection {col.name!r}"):
                count = int(col.handle.count())
        except StoreError:
            return  # written all the same: the next read rebuilds the index
        if count != expected:
            return
        token = _collection_token(col.id, count, revision)
        index = before.with_record(token, key, written["metadata"] if written is not None else None)
        with self._lock:
            self._indexes.setdefault(col.name, index)

    def _stamp(self, name: str) -> str:
        """Move the collection's revision stamp, so that every reader's change token moves: its
        metadata is read again and written back with a new stamp (less the hnsw: keys, which
        Chroma refuses in a modify and keeps in the collection's configuration anyway). The
        collection's index is dropped; the stamp written is returned."""
        with self._lock:
            self._indexes.pop(name, None)
        with self._talking(f"wrote collection {name!r} but could not mark it changed", StoreError):
            handle = self.client.get_collection(name, embedding_function=None)
            metadata = {k: v for k, v in (handle.metadata or {}).items() if not k.startswith("hnsw:")}
            revision = uuid.uuid4().hex[:12]
            handle.modify(metadata={**metadata, REVISION_KEY: revision})
        return revision

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        """Changes to a vector record, planned as a local directory plans them (records.record_plan)."""
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} on {self.location}.")
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
        if self.read_only_reason:
            raise ReadOnlyError(f"{self.location} is read-only: {self.read_only_reason}.")
        handle = self._col(name).handle
        with self._talking(f"could not add records to collection {name!r}", StoreError):
            for start in range(0, len(ids), _BATCH):
                end = start + _BATCH
                handle.add(
                    ids=ids[start:end],
                    documents=documents[start:end],
                    metadatas=metadatas[start:end],
                    embeddings=embeddings[start:end],
                )
        self._stamp(name)


# -- helpers ---------------------------------------------------------------------------------------


def _literal(text: str) -> str:
    """text as a literal in a Rust regex (the server's engine)."""
    return "".join("\\" + c if c in _REGEX_META else c for c in text)


def _floats(vector: Any) -> list[float] | None:
    return None if vector is None else [float(x) for x in vector]


def _headers(token: Secret | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token.reveal()}"} if token else {}


@contextlib.contextmanager
def _talking(address: ServerAddress, token: Secret | None, what: str, error: type[StoreError]) -> Iterator[None]:
    """A request's failure as one StoreError naming the server (no secret): the library raises
    many types (httpx's, its own, ValueError, a bare Exception carrying a gateway's body). What
    is wrong is asked of the server again (_probe): it went away, or refuses the token now."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        import httpx
        from chromadb.errors import AuthorizationError, ChromaAuthError, ChromaError

        reason = scrubbed(" ".join(f"{type(exc).__name__}: {exc}".split()), token)
        status = exc.response.status_code if isinstance(exc, httpx.HTTPStatusError) else None
        if isinstance(exc, (AuthorizationError, ChromaAuthError)) or status in (401, 403):
            raise SecretRefusedError(f"Chroma server {address.location} refused the token: {reason}.") from None
        if not isinstance(exc, ChromaError):
            _probe(address, token)  # raises the clearer error, if the server says one
        raise error(f"Chroma server {address.location} {what}: {reason}.") from None


def _probe(address: ServerAddress, token: Secret | None) -> None:
    """Ask the server, with timeouts chromadb's client does not set, whether it is a Chroma
    server, takes the token and holds the tenant and database: one clear error when not."""
    import httpx

    where = address.location
    tenant = quote(address.tenant, safe="")
    steps = (
        ("/api/v2/heartbeat", "is not a Chroma server (it has no /api/v2/heartbeat; Chroma 1.0 or later is needed)"),
        (f"/api/v2/tenants/{tenant}", f"has no tenant {address.tenant!r}"),
        (f"/api/v2/tenants/{tenant}/databases/{quote(address.database, safe='')}",
         f"has no database {address.database!r} in tenant {address.tenant!r}"),
    )
    timeout = httpx.Timeout(_TIMEOUT, connect=_CONNECT_TIMEOUT)
    try:
        with httpx.Client(timeout=timeout, headers=_headers(token), follow_redirects=False) as http:
            for path, missing in steps:
                answer = http.get(address.base + path)
                if answer.status_code in (401, 403):
                    said = "refused the token given" if token else "asks for a token and none was given"
                    raise SecretRefusedError(f"Chroma server {where} {said} (HTTP {answer.status_code}).")
                if answer.status_code == 404:
                    raise UnreadableStoreError(f"Chroma server {where} {missing}.")
                if answer.status_code >= 400:
                    raise UnreadableStoreError(
                        f"Chroma server {where} answered HTTP {answer.status_code}: {scrubbed(answer.text[:200], token)}."
                    )
                if path.endswith("heartbeat"):
                    try:
                        body = answer.json()
                    except ValueError:
                        body = None
                    if not isinstance(body, dict) or "nanosecond heartbeat" not in body:
                        raise UnreadableStoreError(f"{where} is not a Chroma server (its heartbeat is not Chroma's).")
    except httpx.TimeoutException:
        raise UnreadableStoreError(f"Chroma server {where} did not answer within {_CONNECT_TIMEOUT:g} s.") from None
    except httpx.HTTPError as exc:
        reason = scrubbed(" ".join(f"{type(exc).__name__}: {exc}".split()), token)
        raise UnreadableStoreError(f"Chroma server {where} could not be reached ({reason}).") from None


def _client(address: ServerAddress, token: Secret | None) -> Any:
    """chromadb's HttpClient for the address, its requests given timeouts."""
    import httpx

    chromadb, Settings = import_chromadb()
    with _talking(address, token, "could not be opened", UnreadableStoreError):
        client = chromadb.HttpClient(
            host=address.host,
            port=address.port,
            ssl=address.scheme == "https",
            headers=_headers(token) or None,
            settings=Settings(anonymized_telemetry=False),
            tenant=address.tenant,
            database=address.database,
        )
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):  # chromadb waits forever by default
        session.timeout = httpx.Timeout(_TIMEOUT, connect=_CONNECT_TIMEOUT)
    return client


__all__ = ["ChromaServerSource", "ServerAddress", "parse_server_url", "DEFAULT_TENANT", "DEFAULT_DATABASE"]
