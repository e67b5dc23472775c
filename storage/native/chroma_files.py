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
        applied = self.rows("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", [col.metadata_segment])
        queued = self.rows(
            "SELECT operation, id, metadata FROM embeddings_queue WHERE seq_id > ? AND topic LIKE ? ORDER BY seq_id",
            [_seq(applied[0][0]) if applied else 0, f"%/{col.id}"],
        )
        if not queued:
            return {}, set()
        base = self._stored(col, sorted({str(r[1]) for r in queued}))
        states: dict[str, tuple[str | None, dict[str, Any]] | None] = dict(base)
        for op, record_id, metadata in queued:
            _apply_metadata(states, str(record_id), op, metadata)
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
        seq = self.rows("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", [col.vector_segment])
        return hnsw, _seq(seq[0][0]) if seq else 0

    def _queued(self, col: Collection, after: int, record_id: str | None = None) -> list[tuple]:
        sql = "SELECT operation, id, vector, encoding FROM embeddings_queue WHERE seq_id > ? AND topic LIKE ?"
        params: list[Any] = [after, f"%/{col.id}"]
        if record_id is not None:
            sql += " AND id = ?"
            params.append(record_id)
        return self.rows(sql + " ORDER BY seq_id", params)

    def vectors(self, col: Collection) -> Vectors:
        """Every vector of the collection as the client would return it."""
        hnsw, persisted = self._persisted(col)
        by_id: dict[str, Any] = dict(hnsw.items()) if hnsw else {}
        for op, record_id, blob, encoding in self._queued(col, persisted):
            _apply(by_id, record_id, op, blob, encoding)
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
        for op, _id, blob, encoding in self._queued(col, persisted, record_id):
            _apply(found, record_id, op, blob, encoding)
        return [float(x) for x in found[record_id]] if record_id in found else None


def _apply(by_id: dict[str, Any], record_id: str, op: int, blob: bytes | None, encoding: Any) -> None:
    import numpy as np

    if op == _DELETE:
        by_id.pop(record_id, None)
        return
    if blob is None or (op == _ADD and record_id in by_id) or (op == _UPDATE and record_id not in by_id):
        return
    dtype = np.int32 if str(encoding).upper() == "INT32" else np.float32
    by_id[record_id] = np.frombuffer(blob, dtype=dtype).astype(np.float32)


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


class _Hnsw:
    """One persisted chroma-hnswlib index: level-0 elements hold the vector and its label."""

    def __init__(self, folder: Path, *, normalized: bool) -> None:
        import numpy as np

        self.folder = folder
        try:
            header = (folder / "header.bin").read_bytes()
            (version, _level0, _max, count, size, label_at, data_at, *_rest) = _HEADER.unpack_from(header)
        except (OSError, struct.error) as exc:
            raise UnreadableStoreError(f"{folder / 'header.bin'} is not an HNSW header ({exc}).") from None
        if version != 1 or not (0 < data_at < label_at <= size - 8) or (label_at - data_at) % 4:
            raise UnreadableStoreError(f"{folder} holds an HNSW index in a layout Mnemoscope does not know.")
        data = folder / "data_level0.bin"
        if count and (not data.is_file() or data.stat().st_size < count * size):
            raise UnreadableStoreError(f"{data} is truncated.")
        self.count = count
        self._elements = (
            np.memmap(data, dtype=np.uint8, mode="r", shape=(count, size)) if count else np.zeros((0, size), np.uint8)
        )
        self._data = slice(data_at, label_at)
        self._label = slice(label_at, label_at + 8)
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
