"""A Chroma persistent directory read without chromadb, so that looking never writes.

Chroma's own client migrates, records and flushes on open: every ``info`` would change
``chroma.sqlite3`` and the HNSW files. ChromaFiles reads the same data the client would:

- collections, records and metadata from the SQLite metadata segment (``embeddings`` and
  ``embedding_metadata``), opened with ``mode=ro``; keyword counting and ranking run there too;
- vectors from the HNSW segment's files (hnsw.py), and the HNSW graph a vector search walks;
- both overlaid with the operations still waiting in ``embeddings_queue``
  (embeddings_queue.py; Chroma persists the index every ``sync_threshold`` writes).

Writing stays with chromadb (ChromaSource, local.py, opens a client only for a write).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ... import bounded_json
from ...errors import UnreadableStoreError
from ...sqlite_files import files_token, read_only_connection
from .embeddings_queue import (
    ADD,
    DELETE,
    UPDATE,
    QueuedOperation,
    apply_vector,
    checked_operations,
    well_formed,
)
from .hnsw import Graph, HnswHeader, HnswIndex, index_present, read_settled, segment_stamp

CHROMA_FILE = "chroma.sqlite3"
DOCUMENT_KEY = "chroma:document"
_CHUNK = 500
_FIRST_READ = 250  # records a keyword search reads first (the window asks for 100 hits, the CLI for 10)
MAX_WORDS = 100  # words of one query counted in one SQL pass (SQLite bounds a statement's columns and depth)
_LIKE_LIMIT = 50_000  # SQLite's longest LIKE pattern, in bytes: a longer word is looked for by mn_contains


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
    rows: Any = field(default_factory=list)  # a list of vectors, or one 2-D array

    def matrix(self):
        import numpy as np

        if isinstance(self.rows, np.ndarray):
            return np.ascontiguousarray(self.rows, dtype=np.float32)
        return np.vstack(self.rows).astype(np.float32) if len(self.rows) else np.zeros((0, 0), np.float32)



_DIR_LOCKS: dict[str, threading.RLock] = {}
_DIR_LOCKS_LOCK = threading.Lock()


def directory_lock(path: Path) -> threading.RLock:
    """The lock this process takes around any use of a Chroma directory's chroma.sqlite3.

    chromadb's client is Rust with its own SQLite; Mnemoscope reads the file with Python's.
    Two SQLite libraries in one process do not see each other's locks (POSIX locks belong to
    the process, and each library keeps its own account of them), so a read here could meet a
    half-written page of a write the client is making, and closing a connection here drops the
    client's locks. Within one process every read connection and every client call on a
    directory therefore hold this lock; other processes are kept apart by SQLite's own locks."""
    key = os.path.realpath(path)
    with _DIR_LOCKS_LOCK:
        return _DIR_LOCKS.setdefault(key, threading.RLock())


class ChromaFiles:
    """Read-only access to one Chroma directory. ``may_recover``: a journal left by a killed
    writer may be rolled back first (SQLite must, before anyone can read); without it such a
    database is reported instead of touched."""

    def __init__(self, path: Path, *, may_recover: bool = True) -> None:
        self.path = Path(path)
        self.db = self.path / CHROMA_FILE
        self._real_db = os.path.realpath(self.db)  # (resolved once: a search asks for the token a dozen times)
        self.may_recover = may_recover
        self._tables: set[str] | None = None
        self._local = threading.local()
        self.lock = directory_lock(self.path)
        self._hnsw: dict[str, tuple[Any, HnswIndex]] = {}
        self._overlays: dict[str, tuple[Any, Any]] = {}  # collection id -> (files token, _overlay's answer)
        self._arrays: tuple[str, bool] = ("", False)  # (files token, whether any record has a list value)
        self._text_keys: dict[str, tuple[Any, list[str]]] = {}
        self._sole_segments: dict[str, tuple[str, bool]] = {}  # collection id -> (files token, _sole_segment)
        self._ascii: tuple[Any, bool] = ("", False)  # ((files token, keys), whether every text under keys is ASCII)

    # -- SQLite ----------------------------------------------------------------------

    def token(self) -> str:
        """chroma.sqlite3's change token (see files_token)."""
        return files_token(self._real_db, real=True)

    def _connect(self) -> sqlite3.Connection:
        con = read_only_connection(self._real_db, real=True)
        con.create_function("mn_contains", 2, _contains, deterministic=True)
        return con

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """One connection for every read of this thread inside the block (opening one, and
        SQLite reading Chroma's schema, costs more than most of the queries); closed at its end."""
        if getattr(self._local, "batching", False):
            yield  # inside another batch: its connection
            return
        self._local.con = None
        self._local.batching = True
        try:
            with self.lock:
                try:
                    yield
                finally:
                    con, self._local.con, self._local.batching = self._local.con, None, False
                    if con is not None:
                        con.close()
        finally:
            self._local.batching = False

    def rows(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        try:
            return self._rows(sql, params)
        except sqlite3.OperationalError as exc:
            if "readonly" not in str(exc) or not self.may_recover:
                raise
        self._drop_batch_connection()
        self.recover()
        return self._rows(sql, params)

    def _drop_batch_connection(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            self._local.con = None
            con.close()

    def _rows(self, sql: str, params: Iterable[Any]) -> list[tuple]:
        if getattr(self._local, "batching", False):
            if self._local.con is None:
                self._local.con = self._connect()
            return self._local.con.execute(sql, tuple(params)).fetchall()
        with self.lock:
            con = self._connect()
            try:
                return con.execute(sql, tuple(params)).fetchall()
            finally:
                con.close()

    def recover(self) -> None:
        """Roll back what a killed writer left half done, as Chroma's client would on open."""
        with self.lock:
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
        if getattr(self._local, "batching", False):
            if self._local.con is None:
                self._local.con = self._connect()
            return list(self._local.con.execute(sql).description or [])
        with self.lock:
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
        key = (self.token(), col.id)
        if self._overlays.get(col.id, (None,))[0] == key:
            return self._overlays[col.id][1]  # chroma.sqlite3 has not changed since: nor has its queue
        found: tuple[dict[str, tuple[str | None, dict[str, Any]] | None], set[str]] = ({}, set())
        queued = self._queued(col, self._applied(col.metadata_segment))
        if queued:
            queued = well_formed(queued, self.dimension(col))
            base = self._stored(col, sorted({op.id for op in queued}))
            states: dict[str, tuple[str | None, dict[str, Any]] | None] = dict(base)
            for op in queued:
                _apply_metadata(states, op.id, op.operation, op.metadata)
            found = (states, set(base))
        self._overlays[col.id] = (key, found)
        return found

    def metadata(self, col: Collection, keys: Iterable[str] | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(record id, metadata) of every record, in insertion order; keys: only those keys
        (every record is listed all the same)."""
        wanted = sorted(set(keys) - {DOCUMENT_KEY}) if keys is not None else None
        only = f"m.key IN ({','.join('?' * len(wanted))})" if wanted else "m.key <> ?"
        rows = self.rows(
            "SELECT e.id, e.embedding_id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value "
            f"FROM embeddings e LEFT JOIN embedding_metadata m ON m.id = e.id AND {only} "
            "WHERE e.segment_id = ? ORDER BY e.id",
            [*(wanted or [DOCUMENT_KEY]), col.metadata_segment],
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

    def pivot(self, col: Collection, keys: list[str]) -> list[tuple[Any, ...]] | None:
        """(record id, then each key's value or None) of every record, in insertion order, folded
        in SQL (one row per record, not one per value); None when records carry list values under
        these keys or have operations still queued (read them through metadata())."""
        if self._overlay(col)[0]:
            return None
        if "embedding_metadata_array" in self.tables():
            marks = ",".join("?" * len(keys))
            if self.rows(f"SELECT EXISTS (SELECT 1 FROM embedding_metadata_array WHERE key IN ({marks}))", keys)[0][0]:
                return None
        # A flag comes back as a one-byte blob, so that True stays apart from 1 (as _value keeps it).
        value = (
            "CASE WHEN m.bool_value IS NOT NULL THEN CASE WHEN m.bool_value THEN X'01' ELSE X'00' END "
            "ELSE coalesce(m.int_value, m.float_value, m.string_value) END"
        )
        columns = ", ".join(f"max(CASE WHEN m.key = ? THEN {value} END)" for _ in keys)
        sql = (
            f"SELECT e.embedding_id, {columns} FROM embeddings e NOT INDEXED "
            "LEFT JOIN embedding_metadata m ON m.id = e.id WHERE e.segment_id = ? GROUP BY e.id ORDER BY e.id"
        )
        return [
            (row[0], *(bool(v[0]) if isinstance(v, bytes) else v for v in row[1:]))
            for row in self.rows(sql, [*keys, col.metadata_segment])
        ]

    def stored_times(self, col: Collection) -> dict[str, str]:
        """When Chroma stored each record (embeddings.created_at, UTC text): the time a record
        whose metadata keeps none was made. A record still only queued (a writer killed before
        Chroma applied its log) has its first queued write's time until Chroma's client applies
        the queue, which stores the time it does so instead."""
        times = {str(i): at for i, at in self.rows(
            "SELECT embedding_id, created_at FROM embeddings WHERE segment_id = ?", [col.metadata_segment]
        )}
        if self._overlay(col)[0]:
            for record_id, at in self.rows(
                "SELECT id, min(created_at) FROM embeddings_queue WHERE seq_id > ? AND topic LIKE ? GROUP BY id",
                [self._applied(col.metadata_segment), f"%/{col.id}"],
            ):
                times.setdefault(str(record_id), at)
        return times

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
        token = self.token()
        if self._arrays[0] != token:
            self._arrays = (token, bool(self.rows("SELECT EXISTS (SELECT 1 FROM embedding_metadata_array)")[0][0]))
        if not self._arrays[1]:
            return
        columns = "SELECT a.id, a.key, a.string_value, a.int_value, a.float_value, a.bool_value FROM embedding_metadata_array a "
        chunks: Iterable[list[int]] = [[]] if rowids is None else _chunks(rowids)
        for chunk in chunks:
            if chunk:  # rows of the segment already: looked up by id, not by scanning the segment
                sql, params = columns + f"WHERE a.id IN ({','.join('?' * len(chunk))})", list[Any](chunk)
            else:
                sql, params = columns + "JOIN embeddings e ON e.id = a.id WHERE e.segment_id = ?", [col.metadata_segment]
            arrays: dict[tuple[int, str], list[Any]] = {}
            for rowid, key, s, i, f, b in self.rows(sql + " ORDER BY a.rowid", params):
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

    def keyword_hits(
        self, col: Collection, words: list[str], text_keys: Iterable[str], frequencies: list[int] | None = None
    ) -> Generator[tuple[str, int], None, None]:
        """(record id, how many of words its document or text-bearing metadata contains, ignoring
        case; a word given twice counts twice) for every record with a hit, most hits first, then
        by id, streamed. Records with queued operations are left to the caller (queued_states).
        frequencies, when given, is filled before the first record with how many records hold each word.

        One counting pass first (_word_counts: how many records hold each word, and how many hold
        each number of them), then the records with the most hits, down to the number of hits at
        which _FIRST_READ records are reached; the others only if the caller reads on."""
        keys = self._keys_present(col, [DOCUMENT_KEY, *text_keys])
        if not keys:
            return
        per_word, per_hits = self._word_counts(col, words, keys)
        if frequencies is not None:
            frequencies[:] = per_word
        for low, high in _hit_ranges(per_hits, _FIRST_READ):
            yield from self._ranked(col, words, keys, low, high, per_word)

    def document_frequencies(self, col: Collection, words: list[str], text_keys: Iterable[str]) -> list[int]:
        """How many records' text contains each word (ignoring case), every word in one pass."""
        keys = self._keys_present(col, [DOCUMENT_KEY, *text_keys])
        if not keys or not words:
            return [0] * len(words)
        chunks = [words[at : at + MAX_WORDS] for at in range(0, len(words), MAX_WORDS)]
        return [n for chunk in chunks for n in self._word_counts(col, chunk, keys)[0]]

    def _word_counts(self, col: Collection, words: list[str], keys: list[str]) -> tuple[list[int], list[int]]:
        """How many records hold each word, and how many hold exactly h of words (item h), in one pass."""
        flags, params = self._word_flags(col, words, keys)
        hits = " + ".join(f"c{i}" for i in range(len(words)))
        sums = [f"sum(c{i})" for i in range(len(words))] + [f"sum({hits} = {h})" for h in range(1, len(words) + 1)]
        (row,) = self.rows(f"SELECT {', '.join(sums)} FROM ({flags})", params)
        counts = [int(n or 0) for n in row]
        return counts[: len(words)], [0, *counts[len(words) :]]

    def _word_flags(self, col: Collection, words: list[str], keys: list[str]) -> tuple[str, list[Any]]:
        """SQL of one row per record of the collection with text: c0, c1, ... whether it holds each word."""
        tests, params = _containment_tests(words, self._all_ascii(keys))
        columns = ", ".join(f"{test} AS c{i}" for i, test in enumerate(tests))
        text = "m.string_value IS NOT NULL"
        if len(keys) > 1:  # a record holds a word if any of its texts does
            flags = ", ".join(f"max(x.c{i}) AS c{i}" for i in range(len(words)))
            return (
                f"SELECT {flags} FROM (SELECT m.id AS id, {columns} FROM embedding_metadata m "
                f"WHERE m.key IN ({','.join('?' * len(keys))}) AND {text}) x "
                "JOIN embeddings e ON e.id = x.id WHERE e.segment_id = ? GROUP BY e.id",
                [*params, *keys, col.metadata_segment],
            )
        # LIMIT -1 keeps SQLite from copying each test into every sum that reads its flag.
        if self._sole_segment(col):
            # Every text row of the directory is this collection's (Chroma deletes a record's
            # metadata with the record): Chroma's index on (key, string_value) answers alone.
            return f"SELECT {columns} FROM embedding_metadata m WHERE m.key = ? AND {text} LIMIT -1", [*params, keys[0]]
        return (
            f"SELECT {columns} FROM embedding_metadata m JOIN embeddings e ON e.id = m.id "
            f"WHERE m.key = ? AND {text} AND e.segment_id = ? LIMIT -1",
            [*params, keys[0], col.metadata_segment],
        )

    def _ranked(self, col: Collection, words: list[str], keys: list[str], low: int, high: int,
                per_word: list[int] | None = None) -> Iterator[tuple[str, int]]:
        """(record id, hits) of the records holding low to high of words, most hits first, then by id
        (per_word: how many records hold each word, when counted)."""
        if per_word is not None and low == len(words) and len(keys) == 1:
            # Every word: each tested in turn, the rarest first, so that most texts fail at one test.
            each = [_containment_tests([words[i]], self._all_ascii(keys))
                    for i in sorted(range(len(words)), key=per_word.__getitem__)]
            sql = (
                f"SELECT e.embedding_id, {len(words)} FROM embedding_metadata m JOIN embeddings e ON e.id = m.id "
                f"WHERE m.key = ? AND m.string_value IS NOT NULL AND {' AND '.join(f'({t[0]})' for t, _p in each)} "
                "AND +e.segment_id = ? ORDER BY e.embedding_id"
            )
            return self._stream(sql, [keys[0], *(p for _t, params in each for p in params), col.metadata_segment])
        tests, params = _containment_tests(words, self._all_ascii(keys))
        if len(keys) > 1:
            columns = ", ".join(f"{test} AS c{i}" for i, test in enumerate(tests))
            hits = " + ".join(f"max(x.c{i})" for i in range(len(words)))
            sql = (
                f"SELECT e.embedding_id, {hits} AS hits FROM (SELECT m.id AS id, {columns} FROM embedding_metadata m "
                f"WHERE m.key IN ({','.join('?' * len(keys))}) AND m.string_value IS NOT NULL) x "
                "JOIN embeddings e ON e.id = x.id WHERE e.segment_id = ? GROUP BY e.id HAVING hits BETWEEN ? AND ? "
                "ORDER BY hits DESC, e.embedding_id"
            )
            return self._stream(sql, [*params, *keys, col.metadata_segment, low, high])
        # +e.segment_id: the records are found through the index on (key, string_value), where
        # each text is tested before its record is read, not by reading every record in id order.
        hits = " + ".join(f"({test})" for test in tests)
        sql = (
            f"SELECT e.embedding_id, {hits} AS hits FROM embedding_metadata m JOIN embeddings e ON e.id = m.id "
            "WHERE m.key = ? AND m.string_value IS NOT NULL AND +e.segment_id = ? AND hits BETWEEN ? AND ? "
            "ORDER BY hits DESC, e.embedding_id"
        )
        return self._stream(sql, [*params, keys[0], col.metadata_segment, low, high])

    def _sole_segment(self, col: Collection) -> bool:
        """Whether every record in the directory is this collection's (two lookups in Chroma's index)."""
        token = self.token()
        cached = self._sole_segments.get(col.id)
        if cached is None or cached[0] != token:
            segment = col.metadata_segment
            sole = self.rows(
                "SELECT (SELECT min(segment_id) FROM embeddings) = ? AND (SELECT max(segment_id) FROM embeddings) = ?",
                [segment, segment],
            )[0][0]
            cached = self._sole_segments[col.id] = (token, bool(sole))
        return cached[1]

    def _all_ascii(self, keys: list[str]) -> bool:
        """Whether every text of the directory under keys is ASCII (one pass, kept while the
        files are unchanged): where it is, a word's LIKE miss is final (see _containment_tests)."""
        stamp = (self.token(), tuple(keys))
        if self._ascii[0] != stamp:
            other = self.rows(
                f"SELECT 1 FROM embedding_metadata WHERE key IN ({','.join('?' * len(keys))}) AND string_value IS NOT "
                "NULL AND length(string_value) != length(CAST(string_value AS BLOB)) LIMIT 1", keys)
            self._ascii = (stamp, not other)
        return self._ascii[1]

    def _keys_present(self, col: Collection, keys: list[str]) -> list[str]:
        """Those of keys some record holds text under (each looked up in Chroma's index)."""
        token = self.token()
        cached = self._text_keys.get(col.id)
        if cached is not None and cached[0] == (token, tuple(keys)):
            return cached[1]
        present = [
            key for key in keys
            if self.rows("SELECT 1 FROM embedding_metadata WHERE key = ? AND string_value IS NOT NULL LIMIT 1", [key])
        ]
        self._text_keys[col.id] = ((token, tuple(keys)), present)
        return present

    def _stream(self, sql: str, params: list[Any]) -> Generator[tuple, None, None]:
        with self.lock:
            con = self._connect()  # its own: the caller may read other rows while it streams
            try:
                yield from con.execute(sql, params)
            finally:
                con.close()

    def queued_states(self, col: Collection) -> dict[str, tuple[str | None, dict[str, Any]] | None]:
        """The final (document, metadata) of each record that queued operations touch (None: gone)."""
        return self._overlay(col)[0]

    # -- vectors ---------------------------------------------------------------------

    def _persisted(self, col: Collection) -> tuple[HnswIndex | None, int]:
        """The collection's persisted HNSW index, and the last queue operation it holds."""
        if not col.vector_segment or not index_present(self.path / col.vector_segment):
            return None, 0
        folder = self.path / col.vector_segment
        stamp = (segment_stamp(folder), col.space)
        cached = self._hnsw.get(col.vector_segment)
        if cached is None or cached[0] != stamp:
            cached = self._hnsw[col.vector_segment] = read_settled(folder, stamp, col.space == "cosine")
        return cached[1], self._applied(col.vector_segment)

    def graph(self, col: Collection) -> tuple[Graph | None, list[str | None], int]:
        """The collection's persisted HNSW graph (None: none, or one Mnemoscope cannot walk), the
        record id of each of its elements (None: deleted), and the last queue operation it holds."""
        hnsw, persisted = self._persisted(col)
        if hnsw is None or not hnsw.header.count:
            return None, [], persisted
        graph = hnsw.graph(col.space)
        return graph, hnsw.element_ids(), persisted

    def queued_ids(self, col: Collection, after: int) -> set[str]:
        """The records queued operations after ``after`` touch."""
        return {op.id for op in self._queued(col, after)}

    def _applied(self, segment: str | None) -> int:
        """The last queue operation a segment holds."""
        seq = self.rows("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", [segment])
        return _seq(seq[0][0]) if seq else 0

    def _queued(self, col: Collection, after: int, record_id: str | None = None) -> list[QueuedOperation]:
        sql = (
            "SELECT seq_id, operation, id, vector, encoding, metadata FROM embeddings_queue "
            "WHERE seq_id > ? AND topic LIKE ?"
        )
        params: list[Any] = [after, f"%/{col.id}"]
        if record_id is not None:
            sql += " AND id = ?"
            params.append(record_id)
        return [QueuedOperation(*row) for row in self.rows(sql + " ORDER BY seq_id", params)]

    def dimension(self, col: Collection, hnsw: HnswIndex | None = None) -> int | None:
        """How many numbers each of the collection's vectors holds: its index's, else what
        chroma.sqlite3 records (None: not known yet)."""
        if hnsw is not None:
            return hnsw.header.dimension
        with contextlib.suppress(UnreadableStoreError):  # reading the vectors reports it
            if col.vector_segment and index_present(self.path / col.vector_segment):
                return HnswHeader.read(self.path / col.vector_segment).dimension
        return col.dimension if isinstance(col.dimension, int) and col.dimension > 0 else None

    def queue_faults(self, col: Collection) -> list[str]:
        """What is wrong with the operations still queued for the collection. Chroma's client
        stops at the first of them, and only after it has written to chroma.sqlite3."""
        queued = self._queued(col, min(self._applied(col.vector_segment), self._applied(col.metadata_segment)))
        return [
            f"queued operation {op.seq_id} on {op.id!r} in collection {col.name!r} has {fault}"
            for op, fault in checked_operations(queued, self.dimension(col))
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
                loaded = bounded_json.loads(text)
            except (TypeError, ValueError):
                return f"its {column} is not JSON"
            if not isinstance(loaded, dict):
                return f"its {column} is not a JSON object"
        return None

    def vectors(self, col: Collection) -> Vectors:
        """Every vector of the collection as the client would return it: the persisted index read
        as one array, with the queued operations applied over it."""
        import numpy as np

        hnsw, persisted = self._persisted(col)
        base_ids, base = hnsw.every() if hnsw else ([], None)
        position = {record_id: i for i, record_id in enumerate(base_ids)}
        changed: dict[str, Any] = {}  # record id -> its vector now (None: deleted)
        for op in well_formed(self._queued(col, persisted), self.dimension(col, hnsw)):
            present = {op.id: changed[op.id]} if op.id in changed else {op.id: True} if op.id in position else {}
            present = {k: v for k, v in present.items() if v is not None}
            apply_vector(present, op)
            changed[op.id] = present.get(op.id)
        live = {r[0] for r in self.rows("SELECT embedding_id FROM embeddings WHERE segment_id = ?", [col.metadata_segment])}
        for record_id, state in self._overlay(col)[0].items():
            (live.discard if state is None else live.add)(record_id)
        keep = [i for i, record_id in enumerate(base_ids) if record_id in live and record_id not in changed]
        ids = [base_ids[i] for i in keep]
        parts = [base if len(keep) == len(base_ids) else base[keep]] if base is not None and keep else []
        extra = [(rid, v) for rid, v in changed.items() if v is not None and v is not True and rid in live]
        if base is not None:
            extra += [(rid, base[position[rid]]) for rid, v in changed.items() if v is True and rid in live]
        if extra:
            ids += [rid for rid, _ in extra]
            parts.append(np.vstack([np.asarray(v, dtype=np.float32) for _, v in extra]))
        if not parts:
            return Vectors()
        return Vectors(ids, np.vstack(parts) if len(parts) > 1 else parts[0])

    def vector(self, col: Collection, record_id: str) -> list[float] | None:
        """One record's vector, without reading the others."""
        hnsw, persisted = self._persisted(col)
        found: dict[str, Any] = {}
        if hnsw is not None:
            vector = hnsw.vector(record_id)
            if vector is not None:
                found[record_id] = vector
        for op in well_formed(self._queued(col, persisted, record_id), self.dimension(col, hnsw)):
            apply_vector(found, op)
        return [float(x) for x in found[record_id]] if record_id in found else None



def _containment_tests(words: list[str], ascii_texts: bool = False) -> tuple[list[str], list[str]]:
    """SQL tests of whether m.string_value contains each word, ignoring case (1 or 0), and their
    parameters; ascii_texts: every text is known to be ASCII (a LIKE miss is final)."""
    tests, params = [], []
    for word in words:
        needle = word.casefold()
        pattern = "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        if needle.isascii() and len(pattern) < _LIKE_LIMIT:
            if ascii_texts:
                tests.append("(m.string_value LIKE ? ESCAPE '\\')")
                params.append(pattern)
                continue
            # LIKE folds ASCII case as casefold does, so its match is one in any text; a miss is
            # final only in ASCII text (casefold maps some other letters to ASCII: 'ﬁ' to 'fi').
            tests.append(
                "CASE WHEN m.string_value LIKE ? ESCAPE '\\' THEN 1 "
                "WHEN length(m.string_value) = length(CAST(m.string_value AS BLOB)) THEN 0 "
                "ELSE mn_contains(m.string_value, ?) END"
            )
            params += [pattern, needle]
        else:
            tests.append("mn_contains(m.string_value, ?)")
            params.append(needle)
    return tests, params


def _hit_ranges(per_hits: list[int], first: int) -> Iterator[tuple[int, int]]:
    """The (fewest, most) hits of each read, best first: from the most hits some record has down
    to the number at which first records are reached, then the rest (per_hits[h]: records with h)."""
    held = [h for h in range(len(per_hits) - 1, 0, -1) if per_hits[h]]
    found = 0
    for i, hits in enumerate(held):
        found += per_hits[hits]
        if found >= first or i == len(held) - 1:
            yield hits, held[0]
            if i + 1 < len(held):
                yield held[-1], held[i + 1]
            return



def _apply_metadata(
    states: dict[str, tuple[str | None, dict[str, Any]] | None], record_id: str, op: int, metadata: Any
) -> None:
    """One queued operation on a record's (document, metadata), as Chroma's metadata segment applies it."""
    current = states.get(record_id)
    if op == DELETE:
        states[record_id] = None
        return
    if (op == ADD and current is not None) or (op == UPDATE and current is None):
        return
    try:
        values = bounded_json.loads(metadata) if metadata else {}
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
            loaded = bounded_json.loads(values.get(column) or "{}")
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

