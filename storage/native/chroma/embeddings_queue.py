"""Chroma's embeddings_queue: the operations (add, update, upsert, delete) its client has logged
and its segments may not hold yet. Chroma persists its HNSW index every ``sync_threshold``
writes, and a writer killed between its log and its metadata transaction leaves operations the
metadata segment never applied; its client replays them on open. ChromaFiles (files.py) reads
the queue's rows and replays them over what the segments hold, as the client would, leaving out
the operations the client could not apply (and naming them: queue_faults)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ... import bounded_json

ADD, UPDATE, UPSERT, DELETE = 0, 1, 2, 3


@dataclass(frozen=True)
class QueuedOperation:
    """One row of Chroma's embeddings_queue: an operation its segments may not hold yet."""

    seq_id: int
    operation: int
    id: str
    vector: bytes | None
    encoding: Any
    metadata: Any

    def fault(self, dimension: int | None) -> str | None:
        """What keeps Chroma's client from applying the operation (None: nothing)."""
        if self.operation not in (ADD, UPDATE, UPSERT, DELETE):
            return f"an unknown operation code {self.operation!r}"
        if not isinstance(self.id, str):
            return "no text id"
        if self.vector is not None:
            if str(self.encoding).upper() not in ("FLOAT32", "INT32"):
                return f"a vector in an unknown encoding {self.encoding!r}"
            if not isinstance(self.vector, bytes) or len(self.vector) % 4:
                return "a vector whose bytes are not whole 4-byte numbers"
            if dimension is not None and len(self.vector) // 4 != dimension:
                return f"a vector of {len(self.vector) // 4} numbers where the collection's hold {dimension}"
        if self.metadata is not None:
            try:
                values = bounded_json.loads(self.metadata)
            except (TypeError, ValueError):
                return "metadata that is not JSON"
            if not isinstance(values, dict):
                return "metadata that is not a JSON object"
        return None


def checked_operations(queued: list[QueuedOperation], dimension: int | None) -> Iterator[tuple[QueuedOperation, str | None]]:
    """Each queued operation with what keeps Chroma's client from applying it (None: nothing).
    While the collection's dimension is not known, its first vector sets it."""
    for op in queued:
        fault = op.fault(dimension)
        if fault is None and dimension is None and op.vector is not None:
            dimension = len(op.vector) // 4
        yield op, fault


def well_formed(queued: list[QueuedOperation], dimension: int | None) -> list[QueuedOperation]:
    """The queued operations Chroma's client could apply; the others are skipped (problems() names them)."""
    return [op for op, fault in checked_operations(queued, dimension) if fault is None]


def apply_vector(by_id: dict[str, Any], op: QueuedOperation) -> None:
    """One queued operation on the vectors by record id, as Chroma's vector segment applies it:
    an add of a record held already, an update of one not held, and a change without a vector
    leave them as they are."""
    import numpy as np

    if op.operation == DELETE:
        by_id.pop(op.id, None)
        return
    if op.vector is None or (op.operation == ADD and op.id in by_id) or (op.operation == UPDATE and op.id not in by_id):
        return
    dtype = np.int32 if str(op.encoding).upper() == "INT32" else np.float32
    by_id[op.id] = np.frombuffer(op.vector, dtype=dtype).astype(np.float32)
