"""A Chroma persistent directory read without chromadb, so that looking never writes.

Chroma's own client migrates, records and flushes on open: every ``info`` would change
``chroma.sqlite3`` and the HNSW files. This module reads the same data the client would:

- records and metadata from the SQLite metadata segment (``embeddings`` and
  ``embedding_metadata``), opened with ``mode=ro``;
- vectors from the HNSW segment's files (``header.bin``, ``data_level0.bin``,
  ``length.bin``, and the label-to-id map in ``index_metadata.pickle``, read with an
  unpickler that builds plain containers only), overlaid with the operations still
  waiting in ``embeddings_queue`` (Chroma persists the index every ``sync_threshold`` writes).

Writing stays with chromadb (ChromaSource opens a client only for a write).
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import sqlite3
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UnreadableStoreError
from ..sqlite_db import read_only_connection

CHROMA_FILE = "chroma.sqlite3"
DOCUMENT_KEY = "chroma:document"
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # chroma-hnswlib's header.bin, format version 1
_ADD, _UPDATE, _UPSERT, _DELETE = 0, 1, 2, 3
_CHUNK = 500


@dataclass(frozen=True)
class Collection:
    id: str
    name: str
    metadata: dict[str, Any]
    configuration: dict[str, Any]
    dimension: int | None
    metadata_segment: str | None
    vector_segment: str | None

    @property
    def space(self) -> str:
        hnsw = self.configuration.get("hnsw") or {}
        return str(self.metadata.get("hnsw:space") or hnsw.get("space") or self._schema_space() or "l2")

    def _schema_space(self) -> str | None:
        keys = (self.configuration.get("schema") or {}).get("keys") or {}
        index = ((keys.get("#embedding") or {}).get("float_list") or {}).get("vector_index") or {}
        return (index.get("config") or {}).get("space")


@dataclass
class Vectors:
    """Every vector of one collection: ids[i] has matrix row i."""

    ids: list[str] = field(default_factory=list)
    rows: list[Any] = field(default_factory=list)

    def matrix(self):
        import numpy as np

        return np.vstack(self.rows).astype(np.float32) if self.rows else np.zeros((0, 0), np.float32)


class _PlainUnpickler(pickle.Unpickler):
    """Chroma's index_metadata.pickle is a dict of dicts (1.x) or one dataclass (0.4-0.6)
    holding them; no other object may be built from a file found on disk."""

    def find_class(self, module: str, name: str) -> Any:
        if name == "PersistentData" and module.startswith("chromadb."):
            return _PersistentData
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


class _PersistentData:
    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _label_to_id(path: Path) -> dict[int, str]:
    try:
        loaded = _PlainUnpickler(io.BytesIO(path.read_bytes())).load()
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        raise UnreadableStoreError(f"{path} is not a Chroma index map Mnemoscope can read ({exc}).") from None
    state = loaded if isinstance(loaded, dict) else getattr(loaded, "__dict__", {})
    mapping = state.get("label_to_id")
    if not isinstance(mapping, dict):
        raise UnreadableStoreError(f"{path} holds no label map.")
    return {int(k): str(v) for k, v in mapping.items()}


class ChromaFiles:
    """Read-only access to one Chroma directory. ``may_recover``: a journal left by a killed
    writer may be rolled back first (SQLite must, before anyone can read); without it such a
    database is reported instead of touched."""

    def __init__(self, path: Path, *, may_recover: bool = True) -> None:
        self.path = Path(path)
        self.db = self.path / CHROMA_FILE
        self.may_recover = may_recover
        self._tables: set[str] | None = None

    # -- SQLite ----------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        con = read_only_connection(self.db)
        con.create_function("mn_contains", 2, _contains, deterministic=True)
        return con

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        try:
            return self._rows(sql, params)
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) or not self.may_recover:
                raise
        self.recover()
        return self._rows(sql, params)

    def _rows(self, sql: str, params: Iterable[Any]) -> list[tuple]:
        con = self._connect()
        try:
            return con.execute(sql, tuple(params)).fetchall()
        finally:
            con.close()

    def recover(self) -> None:
        """Roll back what a killed writer left half done, as Chroma's client would on open."""
        con = sqlite3.connect(self.db, timeout=5.0)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchall()
        finally:
            con.close()

    def tables(self) -> set[str]:
        if self._tables is None:
            self._tables = {r[0] for r in self.rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return self._tables

    # -- collections -----------------------------------------------------------------

    def collections(self) -> list[Collection]:
        con_rows = self.rows("SELECT * FROM collections")
        columns = [d[0] for d in self._description("SELECT * FROM collections LIMIT 0")]
        metadata: dict[str, dict[str, Any]] = {}
        for cid, key, s, i, f, b in self.rows(
            "SELECT collection_id, key, str_value, int_value, float_value, bool_value FROM collection_metadata"
        ):
            metadata.setdefault(cid, {})[key] = _value(s, i, f, b)
        segments: dict[tuple[str, str], str] = {}
        for sid, scope, cid in self.rows("SELECT id, scope, collection FROM segments"):
            segments[(cid, str(scope).upper())] = sid
        out = []
        for row in con_rows:
            values = dict(zip(columns, row, strict=False))
            cid = str(values["id"])
            out.append(
                Collection(
                    id=cid,
                    name=str(values["name"]),
                    metadata=metadata.get(cid, {}),
                    configuration=_configuration(values),
                    dimension=values.get("dimension"),
                    metadata_segment=segments.get((cid, "METADATA")),
                    vector_segment=segments.get((cid, "VECTOR")),
                )
            )
        return sorted(out, key=lambda c: c.name)

    def _description(self, sql: str) -> list[tuple]:
        con = self._connect()
        try:
            return list(con.execute(sql).description or [])
        finally:
            con.close()

    # -- records ---------------------------------------------------------------------

    def count(self, col: Collection) -> int:
        total = int(self.rows("SELECT count(*) FROM embeddings WHERE segment_id = ?", [col.metadata_segment])[0][0])
        overlay, before = self._overlay(col)
        return total + sum(state is not None for state in overlay.values()) - len(before)

    def _overlay(self, col: Collection) -> tuple[dict[str, tuple[str | None, dict[str, Any]] | None], set[str]]:
        """Queued operations the metadata segment has not applied yet (a writer killed between
        Chroma's log and its metadata transaction; the client would apply them on open): the
        final state of each record they touch (None: gone), and which of those exist before."""
        if not col.metadata_segment:
            return {}, set()
        queued = self._queued(col, self._applied(col.metadata_segment))
        if not queued:
            return {}, set()
        queued = _well_formed(queued, self.dimension(col))
        base = self._stored(col, sorted({op.id for op in queued}))
        states: dict[str, tuple[str | None, dict[str, Any]] | None] = dict(base)
        for op in queued:
            _apply_metadata(states, op.id, op.operation, op.metadata)
        return states, set(base)

    def metadata(self, col: Collection) -> list[tuple[str, dict[str, Any]]]:
        """(record id, metadata) of every record, in insertion order."""
        rows = self.rows(
            "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
            "FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id AND m.key <> ? "
            "WHERE e.segment_id = ? ORDER BY e.id",
            [DOCUMENT_KEY, col.metadata_segment],
        )
        by_row: dict[int, tuple[str, dict[str, Any]]] = {}
        for rowid, record_id, key, s, i, f, b in rows:
            entry = by_row.get(rowid)
            if entry is None:
                entry = by_row[rowid] = (record_id, {})
            if key is not None:
                entry[1][key] = _value(s, i, f, b)
        self._merge_arrays(col, by_row, None)
        overlay, before = self._overlay(col)
        out = []
        for record_id, meta in by_row.values():
            state = overlay[record_id] if record_id in overlay else (None, meta)
            if state is not None:
                out.append((record_id, state[1]))
        out += [(rid, state[1]) for rid, state in overlay.items() if state is not None and rid not in before]
        return out

    def records(self, col: Collection, record_ids: list[str]) -> dict[str, tuple[str | None, dict[str, Any]]]:
        """Document and metadata of each record that exists, by id."""
        found = self._stored(col, record_ids)
        overlay, _ = self._overlay(col)
        for record_id in set(record_ids) & set(overlay):
            state = overlay[record_id]
            if state is None:
                found.pop(record_id, None)
            else:
                found[record_id] = state
        return found

    def _stored(self, col: Collection, record_ids: list[str]) -> dict[str, tuple[str | None, dict[str, Any]]]:
        found: dict[str, tuple[str | None, dict[str, Any]]] = {}
        for chunk in _chunks(record_ids):
            marks = ",".join("?" * len(chunk))
            rows = self.rows(
                "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
                "FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id "
                f"WHERE e.segment_id = ? AND e.embedding_id IN ({marks})",
                [col.metadata_segment, *chunk],
            )
            by_row: dict[int, tuple[str, dict[str, Any]]] = {}
            documents: dict[int, str | None] = {}
            for rowid, record_id, key, s, i, f, b in rows:
                entry = by_row.setdefault(rowid, (record_id, {}))
                documents.setdefault(rowid, None)
                if key == DOCUMENT_KEY:
                    documents[rowid] = s
                elif key is not None:
                    entry[1][key] = _value(s, i, f, b)
            self._merge_arrays(col, by_row, list(by_row))
            for rowid, (record_id, meta) in by_row.items():
                found[record_id] = (documents[rowid], meta)
        return found

    def _merge_arrays(self, col: Collection, by_row: dict[int, tuple[str, dict[str, Any]]], rowids: list[int] | None):
        if "embedding_metadata_array" not in self.tables():
            return
        sql = (
            "SELECT a.id, a.key, a.string_value, a.int_value, a.float_value, a.bool_value "
            "FROM embedding_metadata_array a JOIN embeddings e ON e.id = a.id WHERE e.segment_id = ?"
        )
        chunks: Iterable[list[int]] = [[]] if rowids is None else _chunks(rowids)
        for chunk in chunks:
            extra = f" AND a.id IN ({','.join('?' * len(chunk))})" if chunk else ""
            arrays: dict[tuple[int, str], list[Any]] = {}
            for rowid, key, s, i, f, b in self.rows(sql + extra + " ORDER BY a.rowid", [col.metadata_segment, *chunk]):
                arrays.setdefault((rowid, key), []).append(_value(s, i, f, b))
            for (rowid, key), values in arrays.items():
                if rowid in by_row:
                    by_row[rowid][1][key] = values

    def ids_containing(self, col: Collection, needle: str, text_keys: Iterable[str]) -> set[str]:
        """Records whose document or text-bearing metadata contains needle, ignoring case."""
        keys = [DOCUMENT_KEY, *text_keys]
        rows = self.rows(
            "SELECT DISTINCT e.embedding_id FROM embeddings e JOIN embedding_metadata m ON m.id = e.id "
            f"WHERE e.segment_id = ? AND m.key IN ({','.join('?' * len(keys))}) AND mn_contains(m.string_value, ?)",
            [col.metadata_segment, *keys, needle.casefold()],
        )
        found = {r[0] for r in rows}
        for record_id, state in self._overlay(col)[0].items():
            found.discard(record_id)
            texts = [] if state is None else [state[0], *(state[1].get(k) for k in keys[1:])]
            if any(_contains(text, needle.casefold()) for text in texts):
                found.add(record_id)
        return found

    # -- vectors ---------------------------------------------------------------------

    def _persisted(self, col: Collection) -> tuple[_Hnsw | None, int]:
        """The collection's persisted HNSW index, and the last queue operation it holds."""
        if not col.vector_segment or not (self.path / col.vector_segment / "header.bin").is_file():
            return None, 0
        hnsw = _Hnsw(self.path / col.vector_segment, normalized=col.space == "cosine")
        return hnsw, self._applied(col.vector_segment)

    def _applied(self, segment: str | None) -> int:
        """The last queue operation a segment holds."""
        seq = self.rows("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", [segment])
        return _seq(seq[0][0]) if seq else 0

    def _queued(self, col: Collection, after: int, record_id: str | None = None) -> list[_Queued]:
        sql = (
            "SELECT seq_id, operation, id, vector, encoding, metadata FROM embeddings_queue "
            "WHERE seq_id > ? AND topic LIKE ?"
        )
        params: list[Any] = [after, f"%/{col.id}"]
        if record_id is not None:
            sql += " AND id = ?"
            params.append(record_id)
        return [_Queued(*row) for row in self.rows(sql + " ORDER BY seq_id", params)]

    def dimension(self, col: Collection, hnsw: _Hnsw | None = None) -> int | None:
        """How many numbers each of the collection's vectors holds: its index's, else what
        chroma.sqlite3 records (None: not known yet)."""
        if hnsw is not None:
            return hnsw.header.dimension
        if col.vector_segment and (self.path / col.vector_segment / "header.bin").is_file():
            with contextlib.suppress(UnreadableStoreError):  # reading the vectors reports it
                return _Header.read(self.path / col.vector_segment).dimension
        return col.dimension if isinstance(col.dimension, int) and col.dimension > 0 else None

    def queue_faults(self, col: Collection) -> list[str]:
        """What is wrong with the operations still queued for the collection. Chroma's client
        stops at the first of them, and only after it has written to chroma.sqlite3."""
        queued = self._queued(col, min(self._applied(col.vector_segment), self._applied(col.metadata_segment)))
        return [
            f"queued operation {op.seq_id} on {op.id!r} in collection {col.name!r} has {fault}"
            for op, fault in _checked(queued, self.dimension(col))
            if fault is not None
        ]

    def structure_fault(self, col: Collection) -> str | None:
        """Why chromadb would fail on the collection's segments or recorded dimension, or None."""
        if not col.metadata_segment or not col.vector_segment:
            return f"it has no {'metadata' if not col.metadata_segment else 'vector'} segment"
        if col.dimension is None:
            return None
        if not isinstance(col.dimension, int) or col.dimension <= 0:
            return f"it records a vector dimension of {col.dimension!r}"
        indexed = self.dimension(col)
        if indexed is not None and indexed != col.dimension:
            return f"it records vectors of {col.dimension} numbers where its index holds vectors of {indexed}"
        return None

    def configuration_fault(self, col: Collection) -> str | None:
        """Why chromadb could not load the collection's configuration (it refuses to open the
        collection), or None."""
        columns = {d[0] for d in self._description("SELECT * FROM collections LIMIT 0")}
        for column in ("config_json_str", "schema_str"):
            if column not in columns:
                continue
            rows = self.rows(f"SELECT {column} FROM collections WHERE id = ?", [col.id])
            text = rows[0][0] if rows else None
            if text is None:
                continue
            try:
                loaded = json.loads(text)
            except (TypeError, ValueError):
                return f"its {column} is not JSON"
            if not isinstance(loaded, dict):
                return f"its {column} is not a JSON object"
        return None

    def vectors(self, col: Collection) -> Vectors:
        """Every vector of the collection as the client would return it."""
        hnsw, persisted = self._persisted(col)
        by_id: dict[str, Any] = dict(hnsw.items()) if hnsw else {}
        for op in _well_formed(self._queued(col, persisted), self.dimension(col, hnsw)):
            _apply(by_id, op)
        live = {r[0] for r in self.rows("SELECT embedding_id FROM embeddings WHERE segment_id = ?", [col.metadata_segment])}
        for record_id, state in self._overlay(col)[0].items():
            (live.discard if state is None else live.add)(record_id)
        out = Vectors()
        for record_id, vector in by_id.items():
            if record_id in live:
                out.ids.append(record_id)
                out.rows.append(vector)
        return out

    def vector(self, col: Collection, record_id: str) -> list[float] | None:
        """One record's vector, without reading the others."""
        hnsw, persisted = self._persisted(col)
        found: dict[str, Any] = {}
        if hnsw is not None:
            vector = hnsw.vector(record_id)
            if vector is not None:
                found[record_id] = vector
        for op in _well_formed(self._queued(col, persisted, record_id), self.dimension(col, hnsw)):
            _apply(found, op)
        return [float(x) for x in found[record_id]] if record_id in found else None


@dataclass(frozen=True)
class _Queued:
    """One row of Chroma's embeddings_queue: an operation its segments may not hold yet."""

    seq_id: int
    operation: int
    id: str
    vector: bytes | None
    encoding: Any
    metadata: Any

    def fault(self, dimension: int | None) -> str | None:
        """What keeps Chroma's client from applying the operation (None: nothing)."""
        if self.operation not in (_ADD, _UPDATE, _UPSERT, _DELETE):
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
                values = json.loads(self.metadata)
            except (TypeError, ValueError):
                return "metadata that is not JSON"
            if not isinstance(values, dict):
                return "metadata that is not a JSON object"
        return None


def _checked(queued: list[_Queued], dimension: int | None) -> Iterator[tuple[_Queued, str | None]]:
    """Each queued operation with what keeps Chroma's client from applying it (None: nothing).
    While the collection's dimension is not known, its first vector sets it."""
    for op in queued:
        fault = op.fault(dimension)
        if fault is None and dimension is None and op.vector is not None:
            dimension = len(op.vector) // 4
        yield op, fault


def _well_formed(queued: list[_Queued], dimension: int | None) -> list[_Queued]:
    """The queued operations Chroma's client could apply; the others are skipped (problems() names them)."""
    return [op for op, fault in _checked(queued, dimension) if fault is None]


def _apply(by_id: dict[str, Any], op: _Queued) -> None:
    import numpy as np

    if op.operation == _DELETE:
        by_id.pop(op.id, None)
        return
    if op.vector is None or (op.operation == _ADD and op.id in by_id) or (op.operation == _UPDATE and op.id not in by_id):
        return
    dtype = np.int32 if str(op.encoding).upper() == "INT32" else np.float32
    by_id[op.id] = np.frombuffer(op.vector, dtype=dtype).astype(np.float32)


def _apply_metadata(
    states: dict[str, tuple[str | None, dict[str, Any]] | None], record_id: str, op: int, metadata: Any
) -> None:
    """One queued operation on a record's (document, metadata), as Chroma's metadata segment applies it."""
    current = states.get(record_id)
    if op == _DELETE:
        states[record_id] = None
        return
    if (op == _ADD and current is not None) or (op == _UPDATE and current is None):
        return
    try:
        values = json.loads(metadata) if metadata else {}
    except (TypeError, ValueError):
        values = {}
    if not isinstance(values, dict):
        values = {}
    document, meta = (None, {}) if current is None else (current[0], dict(current[1]))
    for key, value in values.items():
        if key == DOCUMENT_KEY:
            document = value
        elif value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    states[record_id] = (document, meta)


@dataclass(frozen=True)
class _Header:
    """The fields of chroma-hnswlib's header.bin that say where each element's vector and label are."""

    capacity: int  # elements data_level0.bin has room for
    count: int
    size: int  # bytes per element: its links, then its vector, then its 8-byte label
    data_at: int
    label_at: int

    @property
    def dimension(self) -> int:
        return (self.label_at - self.data_at) // 4

    @classmethod
    def read(cls, folder: Path) -> _Header:
        path = folder / "header.bin"
        try:
            (version, _level0, capacity, count, size, label_at, data_at, *_rest) = _HEADER.unpack_from(path.read_bytes())
        except (OSError, struct.error) as exc:
            raise UnreadableStoreError(f"{path} is not an HNSW header ({exc}).") from None
        header = cls(capacity, count, size, data_at, label_at)
        if version != 1 or not header.consistent():
            raise UnreadableStoreError(
                f"{path} is damaged or in a layout Mnemoscope does not know (format {version}, {count} of "
                f"{capacity} elements of {size} bytes, vector at {data_at}, label at {label_at})."
            )
        return header

    def consistent(self) -> bool:
        return (
            0 < self.data_at < self.label_at
            and self.label_at + 8 == self.size
            and (self.label_at - self.data_at) % 4 == 0
            and self.count <= self.capacity
        )


class _Hnsw:
    """One persisted chroma-hnswlib index: level-0 elements hold the vector and its label."""

    def __init__(self, folder: Path, *, normalized: bool) -> None:
        import numpy as np

        self.folder = folder
        self.header = header = _Header.read(folder)
        count, size = header.count, header.size
        data = folder / "data_level0.bin"
        if count and (not data.is_file() or data.stat().st_size < count * size):
            raise UnreadableStoreError(f"{data} is shorter than its header says ({count} elements of {size} bytes).")
        self._elements = (
            np.memmap(data, dtype=np.uint8, mode="r", shape=(count, size)) if count else np.zeros((0, 0), np.uint8)
        )
        self._data = slice(header.data_at, header.label_at)
        self._label = slice(header.label_at, header.size)
        self._lengths = None
        if normalized and (folder / "length.bin").is_file():
            stored = np.fromfile(folder / "length.bin", dtype=np.float32)
            self._lengths = stored[:count] if stored.size >= count else None
        self._to_id = _label_to_id(folder / "index_metadata.pickle") if count else {}

    def _row(self, i: int) -> Any:
        import numpy as np

        vector = np.array(self._elements[i, self._data]).view(np.float32)
        return vector * self._lengths[i] if self._lengths is not None else vector

    def _labels(self) -> Any:
        import numpy as np

        return np.ascontiguousarray(self._elements[:, self._label]).view(np.uint64).ravel()

    def _live(self, i: int) -> bool:
        return not int(self._elements[i, 2]) & 1  # hnswlib's delete mark

    def items(self) -> Iterator[tuple[str, Any]]:
        for i, label in enumerate(self._labels()):
            record_id = self._to_id.get(int(label))
            if record_id is not None and self._live(i):
                yield record_id, self._row(i)

    def vector(self, record_id: str) -> Any:
        import numpy as np

        labels = [label for label, rid in self._to_id.items() if rid == record_id]
        if not labels:
            return None
        hits = np.flatnonzero(self._labels() == np.uint64(labels[0]))
        live = [int(i) for i in hits if self._live(int(i))]
        return self._row(live[0]) if live else None


def _value(s: Any, i: Any, f: Any, b: Any) -> Any:
    if b is not None:
        return bool(b)
    if i is not None:
        return int(i)
    if f is not None:
        return float(f)
    return s


def _contains(text: Any, needle: str) -> bool:
    return isinstance(text, str) and needle in text.casefold()


def _configuration(values: dict[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for column in ("config_json_str", "schema_str"):
        try:
            loaded = json.loads(values.get(column) or "{}")
        except (TypeError, ValueError):
            continue
        if isinstance(loaded, dict):
            config.update(loaded if column == "config_json_str" else {"schema": loaded})
    return config


def _seq(value: Any) -> int:
    if isinstance(value, bytes):  # chromadb < 0.5 stored seq ids as big-endian blobs
        return int.from_bytes(value, "big")
    return int(value)


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(items), _CHUNK):
        yield items[start : start + _CHUNK]
