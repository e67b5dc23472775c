"""A Chroma collection's vectors as a reader outside the Chroma sources takes them (the embedding
map, storage/views/embedding_map.py): its size, dimension and distance, its vectors a batch at a
time, and its record index (index.RecordIndex: each record's status, layer, channel, mirror flag).

Both Chroma sources hand them out (``vector_collections()``): a local directory reads a
collection's vectors from its files as one array, kept for its vector search
(local_vector_search.py), and hands out slices of it; a server fetches them a page at a time
with Chroma's ``get`` (server.py) only when they are asked for. The store marks the workspace's
own collections native (MemoryStore.vector_collections): their mirror records stand for
memory.db memories.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ...model import Kind
from .index import RecordIndex

Batch = tuple[list[str], Any]  # record ids, and their vectors as one float32 array (a row each)
ReadBatches = Callable[[int], Iterator[Batch]]
ReadPage = Callable[[int, int], tuple[list[str], Any]]  # (limit, offset) -> record ids, their vectors


@dataclass(frozen=True)
class VectorCollection:
    """One collection of one Chroma source: count records of dimension-long vectors compared by
    space ("cosine", "ip" or "l2"), each a record of kind. mirror_kind is set on the workspace's
    own collections (native): the kind of store (memory.db's) whose memories its mirror records
    copy; None on any other."""

    name: str
    count: int
    dimension: int
    space: str
    kind: Kind
    read_batches: ReadBatches = field(repr=False, compare=False)
    read_index: Callable[[], RecordIndex] = field(repr=False, compare=False)
    mirror_kind: Kind | None = None

    @property
    def native(self) -> bool:
        """Whether its mirror records stand for memory.db memories (the workspace's collection)."""
        return self.mirror_kind is not None

    def as_native(self, mirror_kind: Kind) -> VectorCollection:
        """This collection as the workspace's own: its mirrors copy memories of mirror_kind."""
        return dataclasses.replace(self, mirror_kind=mirror_kind)

    def batches(self, size: int) -> Iterator[Batch]:
        """Every record's vector, size records at a time (the last batch may be shorter), in the
        collection's own order: (record ids, a float32 array of their vectors, a row each)."""
        return self.read_batches(size)

    def record_index(self) -> RecordIndex:
        """The collection's records as columns, as its source filters and counts them now."""
        return self.read_index()


def sliced(ids: list[str], matrix: Any) -> ReadBatches:
    """Batches of vectors already read as one array (ids[i] has row i): views, no copies."""

    def batches(size: int) -> Iterator[Batch]:
        for start in range(0, len(ids), size):
            yield ids[start : start + size], matrix[start : start + size]

    return batches


def paged(read_page: ReadPage) -> ReadBatches:
    """Batches of vectors fetched a page at a time, by offset, until a page comes back short."""

    def batches(size: int) -> Iterator[Batch]:
        import numpy as np

        offset = 0
        while True:
            ids, vectors = read_page(size, offset)
            if len(ids):
                yield list(ids), np.asarray(vectors, dtype=np.float32)
            if len(ids) < size:
                return
            offset += size

    return batches
