"""What Chroma keeps of a record it deleted, and how a purge clears it from ``chroma.sqlite3``.

chromadb's client deletes a record's rows (``embeddings``, ``embedding_metadata``, the full-text
index's content) but leaves its text in three places of the file:

- ``embeddings_queue``: the log of every add and update it took, each with the record's metadata
  (its document under ``chroma:document``; mem0's text under ``data``). Chroma keeps these rows
  until every segment holds them, and the local client's vector segment often never says so;
- the full-text index (``embedding_fulltext_search``, FTS5): a deleted entry's trigrams stay in
  the older segments, and in the entry that deletes them, until the segments are merged;
- the space SQLite freed: chromadb's SQLite does not zero deleted content;
- the HNSW files: hnswlib writes its buffers whole, and the bytes it never set (the link slots an
  element does not use, the room for elements not added yet) hold whatever the writing process's
  memory held there before, a purged text included.

A purge therefore clears the metadata of the queued operations on its records that the metadata
segment has applied (those Chroma never reads again: their vectors stay, for the vector segment
that may still replay them), merges the full-text index, and VACUUMs the file as Chroma's own
maintenance does (rebuilt, no free page or free space left; recorded in ``maintenance_log``), and
zeroes the bytes of the HNSW files hnswlib never reads (its vectors, labels and links stay as they
are). Nothing here runs while chromadb's client is open: the caller closes it first (two SQLite
libraries in one process do not see each other's locks, and the client rewrites the HNSW files).
"""

from __future__ import annotations

import contextlib
import sqlite3
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path

from ...errors import UnreadableStoreError
from ...sqlite_files import BUSY_TIMEOUT, sqlite_error
from .embeddings_queue import DELETE
from .files import ChromaFiles, Collection
from .hnsw import HnswHeader

FULLTEXT = "embedding_fulltext_search"


def scrub(files: ChromaFiles, removed: Iterable[tuple[Collection, list[str]]]) -> list[str]:
    """Clear what the directory keeps of the records removed ((collection, record ids) pairs):
    their queued operations' metadata, the full-text index's older segments, chroma.sqlite3's free
    space and the HNSW files' unused bytes. Returns what could not be done, as notes; raises
    StoreError when chroma.sqlite3 cannot be written at all."""
    removed = list(removed)
    notes: list[str] = []
    with files.lock, contextlib.closing(sqlite3.connect(files.db, timeout=BUSY_TIMEOUT, isolation_level=None)) as con:
        try:
            con.execute("PRAGMA secure_delete = ON")
            con.execute("BEGIN IMMEDIATE")
            for col, keys in removed:
                _clear_queue(con, col, keys)
            notes += _merge_fulltext(con)
            con.execute("COMMIT")
            con.execute("VACUUM")
            if _has_table(con, "maintenance_log"):
                con.execute("INSERT INTO maintenance_log (operation, timestamp) VALUES ('vacuum', CURRENT_TIMESTAMP)")
            (mode,) = con.execute("PRAGMA journal_mode").fetchone()
            if str(mode).lower() == "wal":
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise sqlite_error(files.db, exc) from None
        for col, _keys in removed:
            if col.vector_segment and (files.path / col.vector_segment / "header.bin").is_file():
                notes += clear_hnsw(files.path / col.vector_segment)
    return notes


_ROWS = 1 << 16  # elements zeroed at a time


def clear_hnsw(folder: Path) -> list[str]:
    """Zero the bytes of a persisted HNSW index that hnswlib never reads: in data_level0.bin each
    element's level-0 link slots past its link count and the room past the last element, in
    length.bin the room past the last element, in link_lists.bin each upper-level list's slots past
    its count. Returns what could not be done, as notes."""
    import numpy as np

    try:
        header = HnswHeader.read(folder)
    except UnreadableStoreError as exc:
        return [f"{folder.name}: the HNSW index was left as it is ({exc})"]
    data = folder / "data_level0.bin"
    if data.is_file() and data.stat().st_size:
        rows = data.stat().st_size // header.size
        if rows:
            elements = np.memmap(data, dtype=np.uint8, mode="r+", shape=(rows, header.size))
            live = min(header.count, rows)
            slots = np.arange(header.data_at)[None, :]
            for start in range(0, live, _ROWS):
                block = elements[start : min(start + _ROWS, live), : header.data_at]
                counts = np.ascontiguousarray(block[:, 0:2]).view(np.uint16).ravel().astype(np.int64)
                block[slots >= (4 + 4 * np.minimum(counts, header.max_m0))[:, None]] = 0
            elements[live:] = 0
            elements.flush()
            del elements
        _zero_from(data, rows * header.size)
    lengths = folder / "length.bin"
    if lengths.is_file():
        _zero_from(lengths, 4 * header.count)
    if header.max_level > 0 and (folder / "link_lists.bin").is_file():
        return _clear_upper_links(folder / "link_lists.bin", header)
    return []


def _clear_upper_links(path: Path, header: HnswHeader) -> list[str]:
    data = bytearray(path.read_bytes())
    per_level = 4 + 4 * header.max_m
    at = 0
    for _element in range(header.count):
        if at + 4 > len(data):
            return [f"{path.name} is shorter than its index says; it was left as it is"]
        (size,) = struct.unpack_from("<I", data, at)
        at += 4
        if size % per_level or at + size > len(data):
            return [f"{path.name} does not hold whole link lists; it was left as it is"]
        for level in range(at, at + size, per_level):
            count = min(struct.unpack_from("<H", data, level)[0], header.max_m)
            data[level + 4 + 4 * count : level + per_level] = bytes(per_level - 4 - 4 * count)
        at += size
    data[at:] = bytes(len(data) - at)
    with open(path, "r+b") as handle:
        handle.write(data)
    return []


def _zero_from(path: Path, offset: int) -> None:
    """Zero a file's bytes from offset to its end, in place."""
    size = path.stat().st_size
    if size <= offset:
        return
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes(size - offset))


def _clear_queue(con: sqlite3.Connection, col: Collection, keys: list[str]) -> None:
    """The metadata of the queued operations on keys the metadata segment has applied, cleared."""
    row = con.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (col.metadata_segment,)).fetchone()
    applied = _seq(row[0]) if row else 0
    con.executemany(
        "UPDATE embeddings_queue SET metadata = NULL WHERE topic LIKE ? AND id = ? AND seq_id <= ? "
        "AND operation != ? AND metadata IS NOT NULL",
        [(f"%/{col.id}", key, applied, DELETE) for key in keys],
    )


def _merge_fulltext(con: sqlite3.Connection) -> list[str]:
    """Merge Chroma's full-text index into one segment, dropping deleted entries' tokens."""
    if not _has_table(con, FULLTEXT):
        return []
    try:
        with _savepoint(con):
            con.execute(f"INSERT INTO {FULLTEXT}({FULLTEXT}) VALUES ('optimize')")
    except sqlite3.Error as exc:  # an index this SQLite cannot write (a newer FTS5 format)
        return [f"Chroma's full-text index could not be merged here ({exc}); until Chroma merges it, its older "
                "segments keep the removed records' trigrams."]
    return []


@contextlib.contextmanager
def _savepoint(con: sqlite3.Connection) -> Iterator[None]:
    con.execute("SAVEPOINT mnemoscope_fulltext")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK TO mnemoscope_fulltext")
        con.execute("RELEASE mnemoscope_fulltext")
        raise
    con.execute("RELEASE mnemoscope_fulltext")


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None


def _seq(value: object) -> int:
    """A max_seq_id value: an integer, or the big-endian bytes older Chroma versions wrote."""
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    return int(value)  # type: ignore[call-overload]
