"""Qdrant local mode's pickled points (qdrant_points.py) against the points qdrant_client itself
pickles: read without qdrant_client's classes, written back byte for byte, ids as it compares them."""

from __future__ import annotations

import pickle
import uuid

import pytest

from helpers.owners import require
from mnemoscope.storage.formats.qdrant_points import (
    RefusedPickle,
    dump_point,
    encode_key,
    load_key,
    load_point,
    normalize_point_id,
    point_revision,
    point_snapshot,
    snapshot_point,
)

require("qdrant_client")


def a_point(point_id, vector, payload) -> bytes:
    from qdrant_client.http import models

    # qdrant_client/local/local_collection.py persists pickle.dumps(PointStruct(...)).
    return pickle.dumps(models.PointStruct(id=point_id, vector=vector, payload=payload))


def test_a_point_reads_as_a_snapshot_and_writes_back_as_qdrant_client_wrote_it() -> None:
    from qdrant_client.http import models

    point_id = str(uuid.UUID(int=7))
    blob = a_point(point_id, {"": [0.25, -1.5], "bm25": models.SparseVector(indices=[3], values=[0.5])},
                   {"data": "Ana likes tea", "user_id": "ana"})
    snap = point_snapshot("mem0", load_point(blob))
    assert snap["id"] == point_id and snap["metadata"] == {"data": "Ana likes tea", "user_id": "ana"}
    assert snap["embedding"] == [0.25, -1.5]
    assert snap["named_vectors"] == {"bm25": {"$sparse": {"indices": [3], "values": [0.5]}}}
    assert pickle.loads(dump_point(snapshot_point(snap))) == pickle.loads(blob)


def test_the_revision_is_the_stored_bytes_and_the_key_is_qdrant_clients() -> None:
    one = a_point(1, [0.1, 0.2], {"data": "x"})
    other = a_point(1, [0.1, 0.2000001], {"data": "x"})  # a vector alone changed
    assert point_revision(one) != point_revision(other) and point_revision(one) == point_revision(bytes(one))
    assert load_key(encode_key(42)) == 42
    spelled = "{" + str(uuid.UUID(int=9)).upper() + "}"
    assert normalize_point_id(spelled) == str(uuid.UUID(int=9)) and normalize_point_id(5) == 5


def test_a_pickle_naming_anything_else_is_refused() -> None:
    class Evil:
        def __reduce__(self):
            return (print, ("ran",))

    with pytest.raises(RefusedPickle):
        load_point(pickle.dumps(Evil()))
    with pytest.raises(pickle.UnpicklingError):
        load_point(b"not a pickle")
