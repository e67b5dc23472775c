"""Qdrant local mode's stored points: read without running their pickles, written as qdrant_client does.

qdrant_client (``QdrantClient(path=...)``) keeps each point of a collection as one row of
``collection/<name>/storage.sqlite``: ``points (id TEXT PRIMARY KEY, point BLOB)``, the key base64
of the pickled point id, the value the pickled ``PointStruct`` (id, vector, payload). This module
reads and writes those bytes; mem0_qdrant.py is the store they belong to.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import pickle
import re
import uuid
from typing import Any

from ..native.chroma.records import split_record_id
from ..source import Snapshot

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


class PointStruct(_Model):
    pass


class _SparseVector(_Model):
    pass


_STAND_INS: dict[tuple[str, str], type[_Model]] = {
    (_MODELS, "PointStruct"): PointStruct,
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


def load_point(blob: bytes) -> PointStruct:
    """A stored point, unpickled without running anything. Raises RefusedPickle for a pickle that
    names anything but a point's parts, pickle.UnpicklingError (or ValueError) for damage."""
    try:
        point = _PointUnpickler(io.BytesIO(blob)).load()
    except RefusedPickle:
        raise
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, IndexError, KeyError) as exc:
        raise pickle.UnpicklingError(str(exc) or type(exc).__name__) from None
    if not isinstance(point, PointStruct):
        raise pickle.UnpicklingError(f"holds a {type(point).__name__}, not a point")
    return point


def load_key(text: str) -> Any:
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


def dump_point(point: PointStruct) -> bytes:
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


def record_point_id(record_id: str) -> Any:
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


def point_snapshot(collection: str, point: PointStruct) -> Snapshot:
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


def snapshot_point(snap: Snapshot) -> PointStruct:
    named = snap.get("named_vectors")
    vector: Any = snap["embedding"]
    if named is not None:
        vector = {"": snap["embedding"]} if snap["embedding"] is not None else {}
        vector.update({k: _vector_object(v) for k, v in named.items()})
    point: PointStruct = PointStruct.built(id=snap["id"], vector=vector, payload=snap["metadata"])
    return point
