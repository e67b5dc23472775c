"""The embedding map: a store's vectors projected to two dimensions, and a memory's neighbours.

Every vector source of the store (the workspace's Chroma directory, a Chroma server, the Chroma
collections of other tools' stores) is read a batch at a time, as MemoryStore.vector_collections
hands it out; past ``limit`` vectors a uniform
random sample (fixed seed) is kept, and the result says so and of how many. The sample is
projected by PCA computed with numpy (the eigenvectors of its covariance), on unit vectors when
the collection compares by cosine. Each point carries its memory's id (a vector copy of a
memory.db memory names that memory) and what the map colours by: channel, layer, kind, status,
and the category of its worst open finding (storage.findings), read by id for the sampled points.

Work that takes long checks ``cancelled()`` between batches and reports ``progress(done, total)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import StoreError
from ..native.chroma.index import LAYERS, STATUSES, RecordIndex
from ..native.chroma.records import record_id_for
from ..native.chroma.vector_collection import VectorCollection
from ..query import MemoryQuery
from ..store import MemoryStore

DEFAULT_LIMIT = 20_000  # points drawn at most: past it, a uniform sample
BATCH = 5_000  # vectors read, and points projected, between two looks at cancelled()
SEED = 13
COLOUR_FIELDS = ("channel", "layer", "kind", "status", "finding")
NO_FINDING = "none"
ID_CHUNK = 900  # memories read per page when their findings are looked up

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


class MapCancelled(Exception):
    """The caller cancelled the map while it was being made."""


@dataclass(frozen=True)
class EmbeddingMap:
    """Points of a 2-D projection: ids[i] at xy[i]; fields[name][i] its channel, layer, kind, status."""

    ids: list[str]
    xy: Any  # numpy float32 array, shape (len(ids), 2)
    fields: dict[str, list[str]]
    explained_variance: tuple[float, float]  # share of the sample's variance along x and y
    total: int  # vectors of the projected dimension in the store
    dimension: int
    method: str = "pca"
    notes: tuple[str, ...] = ()  # what was left out, and why

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def sampled(self) -> bool:
        return self.count < self.total

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "dimension": self.dimension,
            "total": self.total,
            "count": self.count,
            "sampled": self.sampled,
            "explained_variance": list(self.explained_variance),
            "notes": list(self.notes),
            "points": [
                {"id": i, "x": float(x), "y": float(y), **{f: self.fields[f][n] for f in COLOUR_FIELDS}}
                for n, (i, (x, y)) in enumerate(zip(self.ids, self.xy.tolist(), strict=True))
            ],
        }


def embedding_map(
    store: MemoryStore,
    *,
    limit: int = DEFAULT_LIMIT,
    seed: int = SEED,
    progress: Progress | None = None,
    cancelled: Cancelled | None = None,
) -> EmbeddingMap:
    """The store's vectors (a uniform sample of limit of them, past limit) projected by PCA."""
    report = progress or (lambda _done, _total: None)
    stop = cancelled or (lambda: False)
    collections, notes = _collections(store)
    if not collections:
        return EmbeddingMap([], np.zeros((0, 2), np.float32), {f: [] for f in COLOUR_FIELDS}, (0.0, 0.0), 0, 0,
                            notes=tuple(notes))
    dimension = _commonest_dimension(collections)
    for c in collections:
        if c.dimension != dimension:
            notes.append(f"{c.name}: {c.count} vectors of {c.dimension} dimensions left out "
                         f"(the map shows the {dimension}-dimensional ones)")
    chosen = [c for c in collections if c.dimension == dimension]
    total = sum(c.count for c in chosen)
    keep = _sample(total, limit, seed)
    ids: list[str] = []
    fields: dict[str, list[str]] = {f: [] for f in COLOUR_FIELDS}
    parts: list[Any] = []
    start = 0
    for c in chosen:
        index = c.record_index()
        position = index.position()
        for batch_ids, vectors in c.batches(BATCH):
            if stop():
                raise MapCancelled()
            end = start + len(batch_ids)
            lo, hi = np.searchsorted(keep, [start, end])
            rows = keep[lo:hi] - start
            if len(rows):
                parts.append(np.asarray(vectors, dtype=np.float32)[rows])
                _add_points(c, index, position, [batch_ids[row] for row in rows.tolist()], ids, fields)
            start = end
            report(min(start, total), total)
    if stop():
        raise MapCancelled()
    if not parts:
        return EmbeddingMap([], np.zeros((0, 2), np.float32), fields, (0.0, 0.0), total, dimension, notes=tuple(notes))
    sample = np.vstack(parts)
    if all(c.space == "cosine" for c in chosen):
        norms = np.linalg.norm(sample, axis=1, keepdims=True)
        sample = sample / np.where(norms == 0, 1.0, norms)
    xy, explained = _pca(sample, stop)
    fields["finding"] = _finding_labels(store, ids, stop)
    return EmbeddingMap(ids, xy, fields, explained, total, dimension, notes=tuple(notes))


def neighbours(store: MemoryStore, memory_id: str, k: int = 10) -> list[tuple[str, float]]:
    """The k memories nearest to memory_id in the full-dimensional space (cosine distance where the
    collection compares by cosine), nearest first, as (memory id, distance); the memory itself left out."""
    vector = store.embedding_of(memory_id)
    if vector is None or k <= 0:
        return []
    own = store.canonical_id(memory_id)
    found: dict[str, float] = {}
    for source in store.vector_sources():
        if not hasattr(source, "vector_search"):
            continue
        try:
            hits = source.vector_search(vector, None, MemoryQuery(statuses=()), k + 1)
        except StoreError:  # a collection of another dimension
            continue
        for memory, distance in hits:
            key = store.canonical_id(memory.id)
            if key != own and distance < found.get(key, float("inf")):
                found[key] = float(distance)
    return sorted(found.items(), key=lambda kv: (kv[1], kv[0]))[:k]


# -- reading the vector sources --------------------------------------------------------------


def _collections(store: MemoryStore) -> tuple[list[VectorCollection], list[str]]:
    """Every collection the map can read that holds vectors, and notes on the vector sources it cannot read."""
    found, notes = store.vector_collections()
    return [c for c in found if c.count], notes


def _commonest_dimension(collections: list[VectorCollection]) -> int:
    per: dict[int, int] = {}
    for c in collections:
        per[c.dimension] = per.get(c.dimension, 0) + c.count
    return max(per, key=lambda d: (per[d], d))


def _sample(total: int, limit: int, seed: int) -> Any:
    """The sorted positions (of total) the map keeps: all of them, or limit chosen uniformly."""
    if total <= limit:
        return np.arange(total, dtype=np.int64)
    return np.sort(np.random.default_rng(seed).choice(total, size=limit, replace=False))


def _add_points(c: VectorCollection, index: RecordIndex, position: dict[str, int], record_ids: list[str],
                ids: list[str], fields: dict[str, list[str]]) -> None:
    """The points of these records: ids (a mirror names its memory.db memory) and colour fields,
    read from the collection's index ("?" for a record written after the index was read)."""
    rows = np.array([position.get(r, -1) for r in record_ids], dtype=np.int64)
    known = rows >= 0
    at = np.where(known, rows, 0)
    empty = len(index) == 0
    mirror = known & index.mirror[at] if c.native and not empty else np.zeros(len(rows), dtype=bool)
    prefix = record_id_for(c.name, "")
    ids += [r if m else prefix + r for r, m in zip(record_ids, mirror.tolist(), strict=True)]

    def labels(codes: Any, names: list[str]) -> list[str]:
        if empty:
            return ["?"] * len(rows)
        return np.where(known, np.asarray(names, dtype=str)[codes[at]], "?").tolist()

    fields["channel"] += labels(index.channel, [str(name) for name in index.channels])
    fields["layer"] += labels(index.layer, [layer.value for layer in LAYERS])
    fields["status"] += labels(index.status, [status.value for status in STATUSES])
    mirror_kind = c.mirror_kind.value if c.mirror_kind is not None else c.kind.value
    fields["kind"] += np.where(mirror, mirror_kind, c.kind.value).tolist()


def _finding_labels(store: MemoryStore, ids: list[str], stop: Cancelled) -> list[str]:
    """Each point's worst open finding's category (storage.findings: secret, injection, ...), or
    "none": its memory read by id a page at a time and scanned as `mnemoscope scan` does."""
    from ..findings import accepted_fingerprints, allowed_hosts, memory_findings
    from ..findings.rules import severity_rank

    accepted, hosts = accepted_fingerprints(store), allowed_hosts(store)
    worst: dict[str, str] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), ID_CHUNK):
        if stop():
            raise MapCancelled()
        chunk = tuple(unique[start : start + ID_CHUNK])
        for memory in store.page(MemoryQuery(ids=chunk, statuses=()), limit=len(chunk)):
            found = [f for f in memory_findings(memory, accepted, hosts) if not f.accepted]
            if found:
                worst[memory.id] = min(found, key=lambda f: severity_rank(f.severity)).category
    return [worst.get(i, NO_FINDING) for i in ids]


# -- the projection ------------------------------------------------------------------------------


def _pca(sample: Any, stop: Cancelled) -> tuple[Any, tuple[float, float]]:
    """The sample on its first two principal axes, and the share of its variance each holds."""
    centred = sample.astype(np.float64) - sample.mean(axis=0, dtype=np.float64)
    if len(centred) < 2:
        return np.zeros((len(centred), 2), np.float32), (0.0, 0.0)
    covariance = centred.T @ centred / (len(centred) - 1)
    values, vectors = np.linalg.eigh(covariance)  # ascending
    top = vectors[:, ::-1][:, :2]
    if top.shape[1] < 2:
        top = np.hstack([top, np.zeros((top.shape[0], 2 - top.shape[1]))])
    # A fixed sign per axis (its largest loading positive): the same store maps the same way each time.
    top = top * np.where(top[np.abs(top).argmax(axis=0), range(2)] < 0, -1.0, 1.0)
    xy = np.empty((len(centred), 2), np.float32)
    for start in range(0, len(centred), BATCH):
        if stop():
            raise MapCancelled()
        xy[start : start + BATCH] = centred[start : start + BATCH] @ top
    spread = float(values.sum())
    shares = values[::-1][:2] / spread if spread > 0 else np.zeros(2)
    return xy, (float(shares[0]), float(shares[1]) if len(shares) > 1 else 0.0)
