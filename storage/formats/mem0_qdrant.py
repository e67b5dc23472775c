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

Opening reads each point's id and payload (qdrant_points.py reads the pickles without running
them) and hashes its row's bytes for its revision; the vectors stay in the file. A Memory is
built only for the points a page shows when the query keeps every point in an order of its
payload's times (the table's first page); a filter Python runs builds them all, once per change.

A point is written back as qdrant_client itself writes it (persist()): one ``INSERT OR
REPLACE`` of the canonical key in one SQLite transaction, taken while holding qdrant_client's
own lock on the folder (a client that holds it keeps every point in memory and would write
over ours). mem0 recomputes a BM25 sparse vector with fastembed when it rewrites a text;
Mnemoscope cannot, so an edit drops the old one, as mem0 does without fastembed.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import pickle
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..detect.looks import as_path, is_dir, is_file, looked, names, subfolders
from ..errors import LockedError, NotFoundError, ReadOnlyError, StoreError, StoreFileError, UnreadableStoreError
from ..model import Kind, Memory, Status, parse_layer
from ..native.chroma.records import STALE_KEY, edited_record, record_text, split_record_id
from ..query import MemoryQuery, Order
from ..retention import Upcoming, preview_of
from ..source import DELETE, EDIT, PURGE, REEMBED, Capabilities, Change, Plan, PlanContext, Snapshot, matches
from ..sqlite_files import BUSY_TIMEOUT, files_token, is_sqlite_file, read_only_rows, sqlite_error
from ..timeutil import parse_time, utcnow
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
from .qdrant_points import (
    PointStruct,
    RefusedPickle,
    dump_point,
    encode_key,
    load_key,
    load_point,
    normalize_point_id,
    point_revision,
    point_snapshot,
    record_point_id,
    snapshot_point,
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
    # A probe of the rows (not a state of the schema): a remembered detection holds while the file does.
    blob = looked("newest point", storage, lambda: _newest_point(storage))
    return isinstance(blob, bytes) and all(mark in blob for mark in marks)


def _newest_point(storage: Path) -> object:
    try:
        rows = read_only_rows(storage, "SELECT point FROM points ORDER BY rowid DESC LIMIT 1")
    except sqlite3.Error:
        return None
    return rows[0][0] if rows else None


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
    path = as_path(path)
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
    # record id -> the revision of its row; drift per point id; the time the points were read.
    revisions: dict[str, str] = field(default_factory=dict)
    drift_of: dict[str, str] = field(default_factory=dict)
    now: datetime = field(default_factory=utcnow)
    # Whether any point holds SynthOrg's metadata (its entries have their own status and layer).
    synthorg: bool = False
    # memories is filled on first need (a filter Python runs, a vector search): a plain page
    # builds only the memories it shows (Mem0QdrantSource.page).
    built: bool = False
    # (order) -> record ids in that order, ascending, for a plain page.
    orders: dict[Order, list[str]] = field(default_factory=dict)


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
        contents.drift_of, contents.now = drift, utcnow()  # (an expiry passes while open: shown from the next reload)
        for name, snap, revision in loaded:
            record_id = f"{self.id_prefix}{name}:{snap['id']}"
            contents.snapshots[record_id] = snap
            contents.revisions[record_id] = revision
            contents.synthorg = contents.synthorg or synthorg.is_synthorg_payload(snap["metadata"])
        return contents

    def _memory_of(self, points: _Points, record_id: str) -> Memory:
        snap = points.snapshots[record_id]
        return self._memory(snap["collection"], record_id[len(self.id_prefix):], snap,
                            points.drift_of.get(str(snap["id"])), points.now, points.revisions[record_id])

    def _all(self) -> _Points:
        """The points, every one a memory (built once per change of the files)."""
        points = self._points()
        if not points.built:
            points.memories = [self._memory_of(points, record_id) for record_id in points.snapshots]
            points.built = True
        return points

    def _matching(self, query: MemoryQuery) -> list[Memory]:
        if not query.wants_kind(self.kind):
            return []
        return [m for m in self._all().memories if matches(m, query)]

    def _plain(self, query: MemoryQuery, points: _Points) -> bool:
        """Whether every point is a memory the query keeps, in an order read from its payload's
        times alone: then a page builds only the memories it shows."""
        return (
            not points.synthorg and query.wants_kind(self.kind) and Status.ACTIVE in (query.statuses or (Status.ACTIVE,))
            and not (query.channels or query.layers or query.since or query.until or query.contains or query.ids)
            and query.order in (Order.RECENT, Order.CREATED, Order.ACCESSED)
        )

    def count(self, query: MemoryQuery) -> int:
        points = self._points()
        return len(points.snapshots) if self._plain(query, points) else len(self._matching(query))

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        points = self._points()
        if not self._plain(query, points):
            return super().page(query, limit, offset)
        ordered = self._ordered(points, query.order)
        ids = ordered[::-1][offset : offset + limit] if query.descending else ordered[offset : offset + limit]
        return [self._memory_of(points, record_id) for record_id in ids]

    def _ordered(self, points: _Points, order: Order) -> list[str]:
        """Record ids ascending by sort_key(order): (time, id), the times as make_memory reads them."""
        found = points.orders.get(order)
        if found is None:
            keyed = []
            for record_id, snap in points.snapshots.items():
                meta = snap["metadata"]
                created = parse_time(meta.get("created_at"))
                updated = parse_time(meta.get("updated_at"))
                created = created or updated or points.now
                keyed.append(((created if order is Order.CREATED else updated or created), record_id))
            keyed.sort()
            found = points.orders[order] = [record_id for _when, record_id in keyed]
        return found

    def get(self, memory_id: str) -> Memory | None:
        points = self._points()
        return self._memory_of(points, memory_id) if memory_id in points.snapshots else None

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

    def _stored(self, name: str, rowids: Sequence[int] | None = None) -> dict[int, PointStruct]:
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
            view = synthorg.describe(self._all().memories, self.root.parent, utcnow())
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
            self.log.log(str(record_point_id(record_id)), expected, new)
        except StoreError:
            self._write_point(record_id, actual, expected)  # put the point back: both or neither
            raise
        return actual

    def forget_purged(self, removed: Sequence[Change]) -> list[str]:
        """After a purge: history.db's rows of the points keep no text, and each collection's
        storage.sqlite is rebuilt (VACUUM) so that no older version of a point (qdrant_client
        replaces a point's row on every update) stays in its free space."""
        gone = [c.record for c in removed if c.after is None]
        notes = self.log.forget([str(record_point_id(record)) for record in gone])
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
        point_id = new["id"] if new is not None else record_point_id(record_id)
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
                if normalize_point_id(load_key(row["id"])) == point_id:
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
