"""Chroma's embeddings_queue (embeddings_queue.py): each queued operation's fault, as Chroma's
client would meet it, and the operations replayed over the vectors as its vector segment applies
them; read from a queue chromadb wrote, and on rows made to be wrong."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path

import numpy as np
import pytest
from helpers.chroma_dirs import chroma_client
from mnemoscope.storage.native.chroma.embeddings_queue import (
    ADD,
    DELETE,
    UPDATE,
    UPSERT,
    QueuedOperation,
    apply_vector,
    checked_operations,
    well_formed,
)


def _op(operation: int = ADD, record_id: object = "a", vector: object = None, encoding: object = "FLOAT32",
        metadata: object = None, seq_id: int = 1) -> QueuedOperation:
    return QueuedOperation(seq_id, operation, record_id, vector, encoding, metadata)  # type: ignore[arg-type]


def _floats(*values: float) -> bytes:
    return struct.pack(f"<{len(values)}f", *values)


@pytest.mark.parametrize(
    "op,fault",
    [
        (_op(), None),
        (_op(vector=_floats(1, 2), metadata=json.dumps({"k": 1})), None),
        (_op(operation=9), "an unknown operation code 9"),
        (_op(record_id=7), "no text id"),
        (_op(vector=_floats(1, 2), encoding="FLOAT16"), "a vector in an unknown encoding 'FLOAT16'"),
        (_op(vector=b"\x01\x02"), "a vector whose bytes are not whole 4-byte numbers"),
        (_op(vector=_floats(1, 2, 3)), "a vector of 3 numbers where the collection's hold 2"),
        (_op(metadata="{bad"), "metadata that is not JSON"),
        (_op(metadata="[1, 2]"), "metadata that is not a JSON object"),
    ],
)
def test_each_fault_is_what_keeps_chromas_client_from_applying_the_operation(op: QueuedOperation, fault: str) -> None:
    assert op.fault(2) == fault


def test_the_first_vector_sets_an_unknown_dimension() -> None:
    queued = [_op(vector=_floats(1, 2), seq_id=1), _op(vector=_floats(1, 2, 3), seq_id=2), _op(metadata="{", seq_id=3)]
    faults = [fault for _op_, fault in checked_operations(queued, None)]
    assert faults == [None, "a vector of 3 numbers where the collection's hold 2", "metadata that is not JSON"]
    assert well_formed(queued, None) == queued[:1]
    assert well_formed(queued, 3) == queued[1:2]


def test_operations_apply_as_chromas_vector_segment_applies_them() -> None:
    by_id: dict[str, object] = {}
    apply_vector(by_id, _op(ADD, "a", _floats(1, 2)))
    apply_vector(by_id, _op(ADD, "a", _floats(9, 9)))  # an add of an id held already: ignored
    apply_vector(by_id, _op(UPDATE, "b", _floats(3, 4)))  # an update of an id not held: ignored
    apply_vector(by_id, _op(UPSERT, "c", struct.pack("<2i", 5, 6), encoding="INT32"))
    apply_vector(by_id, _op(UPDATE, "c", None, metadata="{}"))  # metadata only: the vector stays
    assert set(by_id) == {"a", "c"}
    assert np.array_equal(by_id["a"], np.array([1, 2], np.float32))
    assert np.array_equal(by_id["c"], np.array([5, 6], np.float32)) and by_id["c"].dtype == np.float32  # type: ignore[union-attr]
    apply_vector(by_id, _op(UPDATE, "a", _floats(7, 8)))
    apply_vector(by_id, _op(DELETE, "c"))
    apply_vector(by_id, _op(DELETE, "nobody"))
    assert list(by_id) == ["a"] and np.array_equal(by_id["a"], np.array([7, 8], np.float32))


def test_the_queue_chromadb_wrote_replays_to_the_vectors_it_was_given(tmp_path: Path) -> None:
    col = chroma_client(tmp_path).get_or_create_collection("facts", embedding_function=None)
    col.add(ids=["a", "b", "c"], embeddings=[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], documents=["x", "y", "z"])
    col.update(ids=["b"], embeddings=[[2.0, 2.0]])
    col.upsert(ids=["d"], embeddings=[[3.0, 1.0]])
    col.delete(ids=["a"])
    con = sqlite3.connect(f"file:{tmp_path / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT seq_id, operation, id, vector, encoding, metadata FROM embeddings_queue ORDER BY seq_id"
        ).fetchall()
    finally:
        con.close()
    queued = [QueuedOperation(*row) for row in rows]
    assert [op.fault(2) for op in queued] == [None] * len(queued) and len(queued) == 6
    vectors: dict[str, object] = {}
    for op in well_formed(queued, None):
        apply_vector(vectors, op)
    assert {k: np.asarray(v).tolist() for k, v in vectors.items()} == {
        "b": [2.0, 2.0], "c": [0.5, 0.5], "d": [3.0, 1.0]
    }
