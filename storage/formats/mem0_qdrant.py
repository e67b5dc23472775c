"""mem0 (``mem0ai``) on Qdrant's local mode, with its SQLite ``history.db``.

mem0 with ``vector_store.provider = "qdrant"`` and a ``path`` (its default, and SynthOrg's
only choice: ``<data_dir>/qdrant`` + ``<data_dir>/history.db``, one store per agent) runs
qdrant_client's ``QdrantClient(path=...)``. That folder holds ``meta.json`` (each collection's
vector size and distance) and ``collection/<name>/storage.sqlite``: one table ``points (id TEXT
PRIMARY KEY, point BLOB)``, the key being base64 of the pickled point id and the value the
pickled ``PointStruct`` (id, vector ``{"": dense, "bm25": sparse}`` or a plain list, payload).
The newest row (highest rowid) of a point id wins, as qdrant_client/local/persistence.py
loads them. mem0's payload is what its Chroma records hold as metadata (data, hash,
text_lemmatized, created_at/updated_at, the scope keys, custom metadata), so the memories,
history, drift and curation are those of mem0 on Chroma (mem0.py); ``<collection>_entities``
and the telemetry collection ``mem0migrations`` are not memories.

A point is written back as qdrant_client itself writes it (persist()): one ``INSERT OR
REPLACE`` of the canonical key in one SQLite transaction, taken while holding qdrant_client's
own lock on the folder (a client that holds it keeps every point in memory and would write
over ours). mem0 recomputes a BM25 sparse vector with fastembed when it rewrites a text;
Mnemoscope cannot, so an edit drops the old one, as mem0 does without fastembed.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import io
import json
import os
import pickle
import re
import sqlite3
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..detect.looks import is_dir, is_file, looked, names, subfolders
from ..errors import LockedError, NotFoundError, ReadOnlyError, StoreError, StoreFileError, UnreadableStoreError
from ..model import Kind, Memory, parse_layer
from ..native.chroma.records import STALE_KEY, edited_record, record_text, split_record_id
from ..query import MemoryQuery
from ..retention import Upcoming, preview_of
from ..source import DELETE, EDIT, PURGE, REEMBED, Capabilities, Change, Plan, PlanContext, Snapshot
from ..sqlite_files import BUSY_TIMEOUT, files_token, is_sqlite_file, read_only_rows, sqlite_error
from ..timeutil import utcnow
from . import synthorg
from .base import Contents, FormatSource, make_memory, reading, removal_note, writing
from .match import FormatMatch
from .mem0 import (
    HISTORY_FILE,
    Mem0Conversations,
    Mem0History,
    as_mem0_writes_it,
    expiration,
    is_history_db,
    mem0_capabilities,
    mem0_description,
    mem0_metadata,
    scope_channel,
)

try:
    import fcntl
except ImportError:  # Windows: portalocker locks a byte range there; the SQLite transaction still holds
    fcntl = None  # type: ignore[assignment]

META_FILE = "meta.json"
COLLECTIONS_DIR = "collection"
STORAGE_FILE = "storage.sqlite"
LOCK_FILE = ".lock"
TELEMETRY_COLLECTION = "mem0migrations"  # mem0's own usage tracking, in ~/.mem0/migrations_qdrant
LABEL = "mem0 (Qdrant local)"
SYNTHORG_LABEL = "SynthOrg (mem0 on Qdrant local)"  # SynthOrg's metadata on its points: synthorg.py

# -- the pickled points -------------------------------------------------------------------------
#
# qdrant_client stores each point as a pickle, and unpickling runs whatever callable the bytes
# name (os.system, subprocess.Popen, ...): a store file someone else wrote is untrusted input, and
# opening it must never run code. So points are read with an Unpickler that resolves only the two
# qdrant_client model classes a point is made of, each to an inert local stand-in that keeps the
# state it was given (reading needs no qdrant_client either); any other name refuses the point.

_MODELS = "qdrant_client.http.models.models"


class _Model:
    """A qdrant_client pydantic model as pickled: only its state, kept as loaded."""

    state: Any = None

    def __setstate__(self, state: Any) -> None:
        self.state = state

    def __getstate__(self) -> Any:
        return self.state

    def fields(self) -> dict[str, Any]:
        inner = self.state.get("__dict__") if isinstance(self.state, dict) else None
        return inner if isinstance(inner, dict) else {}

    @classmethod
    def built(cls, **fields: Any) -> Any:
        """The model as pydantic 2 (which mem0 needs) pickles one that qdrant_client constructs."""
        model = cls()
        model.state = {
            "__dict__": fields,
            "__pydantic_extra__": None,
            "__pydantic_fields_set__": set(fields),
            "__pydantic_private__": None,
        }
        return model


class _PointStruct(_Model):
    pass


class _SparseVector(_Model):
    pass


_STAND_INS: dict[tuple[str, str], type[_Model]] = {
    (_MODELS, "PointStruct"): _PointStruct,
    (_MODELS, "SparseVector"): _SparseVector,
}
_NAMES = {cls: name for name, cls in _STAND_INS.items()}


class RefusedPickle(Exception):
    """A pickle that names something other than a Qdrant point's parts."""


class _PointUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        try:
            return _STAND_INS[(module, name)]
        except KeyError:
            raise RefusedPickle(f"{module}.{name}") from None


def load_point(blob: bytes) -> _PointStruct:
    """A stored point, unpickled without running anything. Raises RefusedPickle for a pickle that
    names anything but a point's parts, pickle.UnpicklingError (or ValueError) for damage."""
    try:
        point = _PointUnpickler(io.BytesIO(blob)).load()
    except RefusedPickle:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        raise pickle.UnpicklingError(str(exc) or type(exc).__name__) from None
    if not isinstance(point, _PointStruct):
        raise pickle.UnpicklingError(f"holds a {type(point).__name__}, not a point")
    return point


def _load_key(text: str) -> Any:
    """A row's key: base64 of the pickled point id (a str or an int, no class at all)."""
    return _PointUnpickler(io.BytesIO(base64.b64decode(text))).load()


class _PointPickler(pickle._Pickler):
    """The pure-Python pickler, writing each stand-in under the qdrant_client name it stands for
    (the C pickler would import qdrant_client to check the name): the bytes are those
    qdrant_client's own pickle.dumps(point) writes."""

    def save_global(self, obj: Any, name: str | None = None) -> None:
        if obj not in _NAMES:
            raise pickle.PicklingError(f"{obj!r} is not part of a Qdrant point")
        module, qualname = _NAMES[obj]
        pickler: Any = self  # save, write and memoize are the pure-Python pickler's own (not typed)
        pickler.save(module)
        pickler.save(qualname)
        pickler.write(pickle.STACK_GLOBAL)
        pickler.memoize(obj)


def dump_point(point: _PointStruct) -> bytes:
    buffer = io.BytesIO()
    _PointPickler(buffer, protocol=4).dump(point)
    return buffer.getvalue()


def point_revision(blob: bytes) -> str:
    """A point's revision: a hash of its row's bytes as stored (every write of it, by
    qdrant_client or here, writes the row anew), never of its thousands of floats."""
    return hashlib.sha1(blob).hexdigest()[:12]


def encode_key(point_id: Any) -> str:
    # qdrant_client pins protocol 4 for keys (CollectionPersistence.KEY_PICKLE_PROTOCOL).
    return base64.b64encode(pickle.dumps(point_id, protocol=4)).decode("utf-8")


_HYPHENATED = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# The spellings of a UUID qdrant_client accepts (qdrant_client/local/utils.py).
_UUID = re.compile(rf"[0-9a-fA-F]{{32}}|{_HYPHENATED}|\{{{_HYPHENATED}\}}|urn:uuid:{_HYPHENATED}")


def normalize_point_id(point_id: Any) -> Any:
    """A point id as qdrant_client compares them: a UUID by identity, not spelling; an int as is."""
    if isinstance(point_id, str) and _UUID.fullmatch(point_id):
        with contextlib.suppress(ValueError):
            return str(uuid.UUID(point_id))
    return point_id


def _record_key(record_id: str) -> Any:
    """The point id a record id names: Qdrant ids are unsigned ints or UUIDs."""
    key = split_record_id(record_id)[1]
    return int(key) if key.isdigit() and len(key) <= 20 else normalize_point_id(key)


def _vector_json(value: Any) -> Any:
    if isinstance(value, _SparseVector):
        f = value.fields()
        return {"$sparse": {"indices": list(f.get("indices") or []), "values": list(f.get("values") or [])}}
    return value


def _vector_object(value: Any) -> Any:
    if isinstance(value, dict) and "$sparse" in value:
        return _SparseVector.built(indices=list(value["$sparse"]["indices"]), values=list(value["$sparse"]["values"]))
    return value


def point_snapshot(collection: str, point: _PointStruct) -> Snapshot:
    """A point as a record snapshot, shaped as mem0's Chroma records are (its payload as the
    metadata, the dense vector as the embedding); other named vectors (BM25) kept beside."""
    f = point.fields()
    vector = f.get("vector")
    if isinstance(vector, dict):
        embedding = vector.get("")
        named: dict[str, Any] | None = {k: _vector_json(v) for k, v in vector.items() if k != ""}
    else:
        embedding, named = vector, None
    payload = f.get("payload")
    return {
        "collection": collection,
        "id": normalize_point_id(f.get("id")),
        "document": None,
        "metadata": dict(payload) if isinstance(payload, dict) else {},
        "embedding": list(embedding) if isinstance(embedding, (list, tuple)) else embedding,
        "named_vectors": named,
    }


def snapshot_point(snap: Snapshot) -> _PointStruct:
    named = snap.get("named_vectors")
    vector: Any = snap["embedding"]
    if named is not None:
        vector = {"": snap["embedding"]} if snap["embedding"] is not None else {}
        vector.update({k: _vector_object(v) for k, v in named.items()})
    point: _PointStruct = _PointStruct.built(id=snap["id"], vector=vector, payload=snap["metadata"])
    return point


# -- the folder -------------------------------------------------------------------------------


def qdrant_collections(folder: Path) -> dict[str, Any] | None:
    """meta.json's collections of a Qdrant local-mode folder; None when the folder is not one."""
    if META_FILE not in names(folder):
        return None
    found: dict[str, Any] | None = looked("qdrant collections", Path(folder) / META_FILE, lambda: _read_meta(Path(folder)))
    return found


def _read_meta(folder: Path) -> dict[str, Any] | None:
    meta = folder / META_FILE
    if not is_file(meta) or not is_dir(folder / COLLECTIONS_DIR):
        return None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    collections = data.get("collections") if isinstance(data, dict) else None
    return collections if isinstance(collections, dict) else None


def memory_collections(every: Sequence[str]) -> list[str]:
    """The collections that hold memories: not mem0's entity index beside one, not its telemetry."""
    return sorted(
        n for n in every if n != TELEMETRY_COLLECTION and not (n.endswith("_entities") and n[: -len("_entities")] in every)
    )


def _newest_point_is_mem0(storage: Path, marks: tuple[bytes, ...] = (b"PointStruct", b"data", b"hash")) -> bool:
    # The bytes are looked at, never unpickled: detecting a store must not run its pickles.
    if not is_sqlite_file(storage):
        return False
    try:
        rows = read_only_rows(storage, "SELECT point FROM points ORDER BY rowid DESC LIMIT 1")
    except sqlite3.Error:
        return False
    blob = rows[0][0] if rows else None
    return isinstance(blob, bytes) and all(mark in blob for mark in marks)


def is_synthorg(folder: Path) -> bool:
    """A mem0 Qdrant folder SynthOrg wrote: its collection, or its metadata in a newest point."""
    wanted = memory_collections(list(qdrant_collections(folder) or ()))
    return synthorg.COLLECTION in wanted or any(
        _newest_point_is_mem0(folder / COLLECTIONS_DIR / name / STORAGE_FILE, (synthorg.PREFIX.encode(),))
        for name in wanted
    )


def is_mem0_qdrant(folder: Path, *, history_beside: bool) -> bool:
    """A Qdrant local-mode folder with a memory collection, that mem0 wrote: history.db beside
    it, or mem0's data + hash in its newest point."""
    collections = qdrant_collections(folder)
    wanted = memory_collections(list(collections or ()))
    if not wanted:
        return False
    return history_beside or any(
        _newest_point_is_mem0(folder / COLLECTIONS_DIR / name / STORAGE_FILE) for name in wanted
    )


def find_layout(path: Path) -> tuple[Path, Path | None] | None:
    """(Qdrant folder, history.db or None) for a mem0 store folder, its Qdrant folder or its history.db."""
    path = Path(path)
    if is_file(path):
        if path.name != HISTORY_FILE or not is_history_db(path):
            return None
        qdrant = next(_qdrant_folders(path.parent), None)
        return (qdrant, path) if qdrant is not None and is_mem0_qdrant(qdrant, history_beside=True) else None
    if not is_dir(path):
        return None
    for qdrant in _qdrant_folders(path):
        history = next(
            (h for h in (qdrant / HISTORY_FILE, qdrant.parent / HISTORY_FILE) if is_file(h) and is_history_db(h)), None
        )
        if is_mem0_qdrant(qdrant, history_beside=history is not None):
            return qdrant, history
    return None


def _qdrant_folders(folder: Path) -> Iterator[Path]:
    """The folder itself if it is a Qdrant folder, else the Qdrant folders directly in it."""
    if qdrant_collections(folder) is not None:
        yield folder
        return
    yield from (child for child in subfolders(folder) if qdrant_collections(child) is not None)


@contextlib.contextmanager
def qdrant_lock(folder: Path) -> Iterator[None]:
    """qdrant_client's own lock on the folder (portalocker: an exclusive flock on ``.lock``), held
    while Mnemoscope writes: a client holding it (a running mem0) keeps every point in memory."""
    try:
        fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise StoreFileError(f"{folder / LOCK_FILE} cannot be opened ({exc.strerror}); nothing was written.") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise LockedError(
                    f"{folder} is open in another program (a Qdrant client, such as a running mem0, holds its "
                    "lock); nothing was written. Close it and try again."
                ) from None
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


# -- the source ---------------------------------------------------------------------------------


@dataclass
class _Points(Contents):
    # record id -> {"collection", "id", "metadata" (the payload), "rowid"}: a point without its
    # vectors, which stay in the file until a write, a vector search or embedding_of needs them.
    snapshots: dict[str, Snapshot] = field(default_factory=dict)


class Mem0QdrantSource(Mem0Conversations, FormatSource):
    """A mem0 store on Qdrant's local mode: every collection's points, and history.db."""

    kind = Kind.QDRANT
    format = "mem0"
    label = LABEL
    id_prefix = "vec:"
    editable_fields = ("content",)

    def __init__(self, qdrant: Path, history: Path | None, label: str = LABEL) -> None:
        super().__init__(qdrant, [])
        self.label = label
        # mem0 keeps none of the optional fields; SynthOrg writes a confidence into every entry.
        self.keeps = frozenset({"confidence"}) if label == SYNTHORG_LABEL else frozenset()
        self.log = Mem0History(history, "Qdrant")
        self._meta: tuple[str, dict[str, Any]] = ("", {})
        self._matrices: dict[str, tuple[str, list[str], Any]] = {}
        self.read_only_reason = self._write_refusal()

    @classmethod
    def open(cls, qdrant: Path, history: Path | None, label: str = LABEL) -> Mem0QdrantSource:
        source = cls(qdrant, history, label)
        source.collections()  # meta.json must read
        return source

    def _write_refusal(self) -> str:
        if not os.access(self.root, os.W_OK):
            return "its Qdrant folder is read-only here"
        if self.log.path is not None and not os.access(self.log.path, os.W_OK):
            return "its history.db is read-only here"
        return ""

    # -- meta.json and the files watched ------------------------------------------------

    def _collection_configs(self) -> dict[str, Any]:
        meta = self.root / META_FILE
        token = files_token(meta)
        if token != self._meta[0]:
            collections = _read_meta(self.root)
            if collections is None:
                raise UnreadableStoreError(f"{meta} is not a Qdrant local-mode meta.json (or cannot be read).")
            self._meta = (token, collections)
        return self._meta[1]

    def collections(self) -> list[str]:
        return memory_collections(list(self._collection_configs()))

    def storage_of(self, name: str) -> Path:
        """A collection's storage.sqlite, which must stay inside the folder (qdrant_client checks as much)."""
        base = self.root / COLLECTIONS_DIR
        path = base / name / STORAGE_FILE
        if not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(base)) or name in ("", ".", ".."):
            raise UnreadableStoreError(f"Qdrant collection {name!r} in {self.root} points outside its folder.")
        return path

    def dense_config(self, name: str) -> tuple[int | None, str]:
        """The unnamed (dense) vector's size and distance of a collection."""
        vectors = (self._collection_configs().get(name) or {}).get("vectors") or {}
        dense = vectors if "size" in vectors else vectors.get("") or {}
        size = dense.get("size")
        return (int(size) if isinstance(size, int) else None), str(dense.get("distance") or "Cosine")

    def watched(self) -> list[Path]:
        files = [self.root / META_FILE, *(self.storage_of(n) for n in self.collections())]
        return files + ([self.log.path] if self.log.path is not None else [])

    # -- reading ----------------------------------------------------------------------

    def _rows(self, name: str) -> Iterator[sqlite3.Row]:
        """A collection's rows, newest first, one at a time (the vectors are most of their bytes)."""
        path = self.storage_of(name)
        if not is_file(path):
            return
        with reading(path) as con:
            yield from con.execute("SELECT rowid, id, point FROM points ORDER BY rowid DESC")

    def load(self) -> Contents:
        contents = _Points()
        loaded: list[tuple[str, Snapshot, str]] = []
        for name in self.collections():
            refused: list[str] = []
            damaged = 0
            seen: set[Any] = set()
            for row in self._rows(name):
                try:
                    fields = load_point(row["point"]).fields()
                except RefusedPickle as exc:
                    refused.append(str(exc))
                    continue
                except pickle.UnpicklingError:
                    damaged += 1
                    continue
                point_id = normalize_point_id(fields.get("id"))
                if point_id in seen:
                    continue  # an older copy qdrant_client would drop: the newest row wins
                seen.add(point_id)
                payload = fields.get("payload")  # as point_snapshot reads it, without copying the vector
                metadata = dict(payload) if isinstance(payload, dict) else {}
                held = {"collection": name, "id": point_id, "metadata": metadata, "rowid": row["rowid"]}
                loaded.append((name, held, point_revision(row["point"])))
            if refused:
                contents.problems.append(
                    f"collection {name}: {len(refused)} point(s) were not read: their pickle calls "
                    f"{', '.join(sorted(set(refused)))}, not just a Qdrant point's parts (qdrant_client would run "
                    "it when it opens this store)"
                )
            if damaged:
                contents.problems.append(f"collection {name}: {damaged} point(s) could not be read (damaged pickle)")
        drift, lines = self.log.drift((str(snap["id"]), snap["metadata"]) for _name, snap, _revision in loaded)
        contents.problems += lines
        now = utcnow()  # an expiry passes while the store is open: shown from the next reload
        for name, snap, revision in loaded:
            record = f"{name}:{snap['id']}"
            contents.snapshots[self.id_prefix + record] = snap
            contents.memories.append(self._memory(name, record, snap, drift.get(str(snap["id"])), now, revision))
        return contents

    def _memory(self, name: str, record: str, snap: Snapshot, drift: str | None, now: Any, revision: str) -> Memory:
        meta = snap["metadata"]
        if synthorg.is_synthorg_payload(meta):
            entry = synthorg.read_entry(meta, now)
            memory = make_memory(
                self, record, str(meta.get("data", "")),
                location=f"{self.root.name}:{name}/{snap['id']}", path=f"{COLLECTIONS_DIR}/{name}/{STORAGE_FILE}",
                created=meta.get("created_at"), updated=meta.get("updated_at"), layer=entry.layer,
                channel=entry.channel, tags=entry.tags, status=entry.status, revision=revision,
                metadata={**mem0_metadata(synthorg.synthorg_free(meta), drift), **entry.metadata},
            )
            return memory if entry.confidence is None else replace(memory, confidence=entry.confidence)
        return make_memory(
            self,
            record,
            str(meta.get("data", "")),
            location=f"{self.root.name}:{name}/{snap['id']}",
            path=f"{COLLECTIONS_DIR}/{name}/{STORAGE_FILE}",
            created=meta.get("created_at"),
            updated=meta.get("updated_at"),
            layer=parse_layer(meta.get("layer") or meta.get("category") or meta.get("memory_type")),
            channel=scope_channel(meta),
            metadata=mem0_metadata(meta, drift),
            revision=revision,
        )

    def _points(self) -> _Points:
        contents = self.contents()
        assert isinstance(contents, _Points)
        return contents

    def owns(self, record_id: str) -> bool:
        if not record_id.startswith(self.id_prefix):
            return False
        with contextlib.suppress(NotFoundError):
            return split_record_id(record_id)[0] in self.collections()
        return False

    def read_record(self, record_id: str) -> Snapshot | None:
        """The point as stored: its row, read again (load keeps no vector)."""
        for _attempt in range(2):
            held = self._points().snapshots.get(record_id)
            if held is None:
                return None
            found = self._stored(held["collection"], [held["rowid"]])
            if found:
                return point_snapshot(held["collection"], found[held["rowid"]])
            self.invalidate()  # the row went between the change check and the read: read the file again
        return None

    def _stored(self, name: str, rowids: Sequence[int] | None = None) -> dict[int, _PointStruct]:
        """The points of rows of a collection (every row without rowids), by rowid."""
        path = self.storage_of(name)
        if not is_file(path):
            return {}
        with reading(path) as con:
            if rowids is None:
                rows = con.execute("SELECT rowid, point FROM points").fetchall()
            else:
                rows = con.execute("SELECT rowid, point FROM points WHERE rowid IN (SELECT value FROM json_each(?))",
                                   (json.dumps(list(rowids)),)).fetchall()
        found = {}
        for rowid, blob in rows:
            with contextlib.suppress(RefusedPickle, pickle.UnpicklingError):
                found[rowid] = load_point(blob)
        return found

    def stale_ids(self) -> list[str]:
        return [i for i, snap in self._points().snapshots.items() if snap["metadata"].get(STALE_KEY)]

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return mem0_capabilities(self.read_only_reason, self.log.path)

    def describe(self) -> dict[str, Any]:
        described = mem0_description(self, [self.root])
        if self.label == SYNTHORG_LABEL:  # the data folder holds qdrant/ and history.db
            view = synthorg.describe(self._points().memories, self.root.parent, utcnow())
            described.update(synthorg=view, owner_view=synthorg.owner_view(view))
        return described

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        """mem0's expiration dates; on SynthOrg's points, its expires_at and its retention rules."""
        config = synthorg.find_config(self.root.parent)[0] if self.label == SYNTHORG_LABEL else None
        found: list[Upcoming] = []
        for record_id, snap in self._points().snapshots.items():
            meta = snap["metadata"]
            preview = preview_of(str(meta.get("data", "")))
            expired = expiration(record_id, meta, self.label, preview)
            found += [expired] if expired is not None else []
            if synthorg.is_synthorg_payload(meta):
                found += synthorg.upcoming(record_id, meta, config, self.label, preview)
        return [u for u in found if u.when <= until]

    # -- history.db ---------------------------------------------------------------------

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self.log.history(split_record_id(memory_id)[1])

    # -- vectors --------------------------------------------------------------------------

    def embedder_for(self, name: str) -> Any:
        return None  # mem0 keeps its embedder's configuration in code, not in the store

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        size, distance = self.dense_config(name)
        return {
            "collection": name,
            "recorded_embedding_function": f"mem0's embedder (not recorded in the store; {size} dimensions, {distance})",
            "runs_offline_here": False,
            "embedder": None,
        }

    def embedding_of(self, memory_id: str) -> list[float] | None:
        snap = self.read_record(memory_id)
        return list(snap["embedding"]) if snap is not None and snap["embedding"] is not None else None

    def vector_search(
        self, embedding: list[float] | None, text: str | None, query: MemoryQuery, k: int
    ) -> list[tuple[Memory, float]]:
        """Nearest points by exact distance in each collection's own metric (smaller is nearer)."""
        import numpy as np

        if embedding is None or k <= 0 or not query.wants_kind(self.kind):
            return []
        q = np.asarray(embedding, dtype=np.float64)
        by_id = {m.id: m for m in self._matching(query)}
        found: list[tuple[Memory, float]] = []
        for name in self.collections():
            ids, matrix = self._matrix(name)
            if not ids:
                continue
            if matrix.shape[1] != q.shape[0]:
                raise StoreError(
                    f"Vector search in collection {name!r} failed: the query has {q.shape[0]} dimensions, "
                    f"the collection {matrix.shape[1]}."
                )
            distance = self.dense_config(name)[1]
            if distance == "Dot":
                d = 1.0 - matrix @ q
            elif distance == "Euclid":
                d = np.linalg.norm(matrix - q, axis=1)
            elif distance == "Manhattan":
                d = np.abs(matrix - q).sum(axis=1)
            else:
                norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(q) or 1.0)
                d = 1.0 - (matrix @ q) / np.where(norms == 0, 1.0, norms)
            found += [(by_id[i], float(x)) for i, x in zip(ids, d.tolist(), strict=True) if i in by_id]
        found.sort(key=lambda hit: (hit[1], hit[0].id))
        return found[:k]

    def _matrix(self, name: str) -> tuple[list[str], Any]:
        import numpy as np

        token = self.change_token()
        cached = self._matrices.get(name)
        if cached is None or cached[0] != token:
            points = self._stored(name)
            held = [
                (i, e) for i, s in self._points().snapshots.items()
                if s["collection"] == name and s["rowid"] in points
                and isinstance(e := point_snapshot(name, points[s["rowid"]])["embedding"], list) and e
            ]
            size = len(held[0][1]) if held else 0
            held = [(i, v) for i, v in held if len(v) == size]
            matrix = np.asarray([v for _i, v in held], dtype=np.float64).reshape(len(held), size)
            cached = self._matrices[name] = (token, [i for i, _v in held], matrix)
        return cached[1], cached[2]

    # -- curation, as mem0 writes ---------------------------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} in {self.label} at {self.root}.")
        if operation in (DELETE, PURGE):
            notes = [removal_note(operation, self.label, "point")]
            if memory.channel == synthorg.SHARED_CHANNEL and self.label == SYNTHORG_LABEL:
                notes.append(f"{memory.id} was shared knowledge published by {memory.metadata.get('publisher')}: "
                             "removing it is SynthOrg's retraction (its retract() lets only that publisher do it).")
            return Plan([Change(memory.id, snap, None)], notes=notes)
        if operation == REEMBED:
            new = copy.deepcopy(snap)
            new["metadata"].pop(STALE_KEY, None)
            return Plan([Change(memory.id, snap, new)], embed_text=record_text(snap))
        if operation != EDIT:
            return super().plan(operation, memory, fields, context)
        size = self.dense_config(snap["collection"])[0]

        def embed(text: str) -> list[float] | None:
            vector = context.embed(text)
            return vector if vector is None or size is None or len(vector) == size else None  # else: stale

        new = edited_record(snap, fields, replace(context, embed=embed))
        notes = []
        sparse = [k for k, v in (new.get("named_vectors") or {}).items() if isinstance(v, dict) and "$sparse" in v]
        if "content" in fields and sparse:
            new["named_vectors"] = {k: v for k, v in new["named_vectors"].items() if k not in sparse}
            notes.append(
                f"{memory.id}: its {', '.join(sparse)} sparse vector held the old text and was dropped "
                "(mem0 recomputes it with fastembed on its next update of the memory)"
            )
        return Plan([] if new == snap else [Change(memory.id, snap, new)], notes=notes)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Refuse before anything is written when the store cannot be: read-only, or held open."""
        if self.read_only_reason:
            raise StoreFileError(f"{self.root} cannot be written: {self.read_only_reason}; nothing was written.")
        with qdrant_lock(self.root):
            pass

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        if new is not None:
            new = as_mem0_writes_it(expected, new)
        actual = self._write_point(record_id, expected, new)
        try:
            self.log.log(str(_record_key(record_id)), expected, new)
        except StoreError:
            self._write_point(record_id, actual, expected)  # put the point back: both or neither
            raise
        return actual

    def forget_purged(self, removed: Sequence[Change]) -> list[str]:
        """After a purge: history.db's rows of the points keep no text, and each collection's
        storage.sqlite is rebuilt (VACUUM) so that no older version of a point (qdrant_client
        replaces a point's row on every update) stays in its free space."""
        gone = [c.record for c in removed if c.after is None]
        notes = self.log.forget([str(_record_key(record)) for record in gone])
        for name in sorted({split_record_id(record)[0] for record in gone}):
            storage = self.storage_of(name)
            with qdrant_lock(self.root), contextlib.closing(sqlite3.connect(storage, timeout=BUSY_TIMEOUT)) as con:
                try:
                    con.execute("VACUUM")
                except sqlite3.Error as exc:
                    raise sqlite_error(storage, exc) from None
        self.invalidate()
        return notes

    def _write_point(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        if self.read_only_reason:
            raise ReadOnlyError(f"{self.label} at {self.root} is read-only: {self.read_only_reason}.")
        name = split_record_id(record_id)[0]
        if name not in self.collections():
            raise NotFoundError(f"No Qdrant collection {name!r} in {self.root}.")
        point_id = new["id"] if new is not None else _record_key(record_id)
        size = self.dense_config(name)[0]
        if new is not None and size is not None and isinstance(new["embedding"], list) and len(new["embedding"]) != size:
            raise StoreError(
                f"{record_id}: the new vector has {len(new['embedding'])} dimensions, collection {name!r} "
                f"holds {size}; nothing was written."
            )
        key = encode_key(point_id)
        with qdrant_lock(self.root), writing(self.storage_of(name)) as con:
            rows = self._rows_of(con, point_id, key)
            current = None
            if rows:
                with contextlib.suppress(RefusedPickle, pickle.UnpicklingError):
                    current = point_snapshot(name, load_point(rows[0]["point"]))
            self.check_expected(record_id, current, expected)
            if new is None:
                con.executemany("DELETE FROM points WHERE rowid = ?", [(row["rowid"],) for row in rows])
            else:
                # As persist() does: older keys of the point go, the canonical key holds it.
                con.executemany("DELETE FROM points WHERE rowid = ?", [(row["rowid"],) for row in rows if row["id"] != key])
                con.execute("INSERT OR REPLACE INTO points VALUES (?, ?)", (key, sqlite3.Binary(dump_point(snapshot_point(new)))))
        self.invalidate()
        return copy.deepcopy(new)

    @staticmethod
    def _rows_of(con: sqlite3.Connection, point_id: Any, key: str) -> list[sqlite3.Row]:
        """Every row holding the point, newest first: its canonical key's, or else a key another
        qdrant_client wrote (another spelling of its UUID, another pickle protocol)."""
        rows = con.execute("SELECT rowid, id, point FROM points WHERE id = ?", (key,)).fetchall()
        if rows:
            return rows
        found = []
        for row in con.execute("SELECT rowid, id FROM points ORDER BY rowid DESC").fetchall():
            with contextlib.suppress(Exception):  # a key that is no plain id is no key of this point
                if normalize_point_id(_load_key(row["id"])) == point_id:
                    found.append(row["rowid"])
        return [con.execute("SELECT rowid, id, point FROM points WHERE rowid = ?", (r,)).fetchone() for r in found]

    def invalidate(self) -> None:
        super().invalidate()
        self._matrices.clear()


def detect(path: Path) -> list[FormatMatch]:
    layout = find_layout(path)
    if layout is None:
        return []
    qdrant, history = layout
    label = SYNTHORG_LABEL if is_synthorg(qdrant) else LABEL
    return [
        FormatMatch(
            "mem0", label, qdrant,
            open=lambda: Mem0QdrantSource.open(qdrant, history, label),
            journal_dir=history.parent if history is not None else qdrant,
        )
    ]
