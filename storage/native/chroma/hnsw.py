"""Chroma's persisted HNSW index read directly, without chromadb (chroma-hnswlib's files in a
vector segment's folder):

- ``header.bin``: where each element's links, vector and label are (HnswHeader);
- ``data_level0.bin``: each element's level-0 links, its vector and its 8-byte label, mapped
  read-only; ``length.bin``: the lengths of a cosine space's normalized vectors;
- ``index_metadata.pickle``: label -> record id, read with an unpickler that builds plain
  containers only;
- ``link_lists.bin``: the links of the levels above 0, so that a vector search can walk the graph
  as hnswlib does (Graph).

ChromaFiles (files.py) overlays these with the operations still queued in chroma.sqlite3.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import stat
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import UnreadableStoreError

INDEX_FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle")
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # chroma-hnswlib's header.bin, format version 1


class _PlainUnpickler(pickle.Unpickler):
    """Chroma's index_metadata.pickle is a dict of dicts (1.x) or one dataclass (0.4-0.6)
    holding them; no other object may be built from a file found on disk."""

    def find_class(self, module: str, name: str) -> Any:
        if name == "PersistentData" and module.startswith("chromadb."):
            return _PersistentData
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


class _YieldingUnpickler(pickle._Unpickler):
    """The same, in pickle's pure-Python implementation: 2-3 times slower, but it lets other
    threads run while it works. The C unpickler holds the GIL for the whole file (0.1-0.3 s
    for a 100k-record collection), which a window's UI thread would feel as a freeze."""

    find_class = _PlainUnpickler.find_class


class _PersistentData:
    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


def _label_to_id(path: Path) -> tuple[dict[int, str], int]:
    """label -> record id, and how many bytes the file holds past the pickle's end (chromadb's reader
    refuses those; this one stops at the end)."""
    try:
        off_main = threading.current_thread() is not threading.main_thread()
        unpickler = _YieldingUnpickler if off_main else _PlainUnpickler
        buffer = io.BytesIO(path.read_bytes())
        loaded = unpickler(buffer).load()
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        raise UnreadableStoreError(f"{path} is not a Chroma index map Mnemoscope can read ({exc}).") from None
    state = loaded if isinstance(loaded, dict) else getattr(loaded, "__dict__", {})
    mapping = state.get("label_to_id") if isinstance(state, dict) else None
    if not isinstance(mapping, dict):
        raise UnreadableStoreError(f"{path} holds no label map.")
    try:
        return {int(k): str(v) for k, v in mapping.items()}, len(buffer.getbuffer()) - buffer.tell()
    except (TypeError, ValueError, OverflowError) as exc:
        raise UnreadableStoreError(f"{path} holds a label map Mnemoscope cannot read ({exc}).") from None


@dataclass(frozen=True)
class HnswHeader:
    """The fields of chroma-hnswlib's header.bin that say where each element's vector and label are."""

    capacity: int  # elements data_level0.bin has room for
    count: int
    size: int  # bytes per element: its links, then its vector, then its 8-byte label
    data_at: int
    label_at: int
    max_level: int = 0
    entry: int = 0  # the element a search starts from
    max_m: int = 0  # links per element on levels above 0
    max_m0: int = 0  # links per element on level 0
    built: tuple[Any, ...] = ()  # offset of level 0, M, mult and ef_construction: what hnswlib derives the rest from

    @property
    def dimension(self) -> int:
        return (self.label_at - self.data_at) // 4

    @classmethod
    def read(cls, folder: Path) -> HnswHeader:
        path = folder / "header.bin"
        try:
            (version, level0, capacity, count, size, label_at, data_at, max_level, entry, max_m, max_m0, m, mult,
             construction) = _HEADER.unpack_from(path.read_bytes())
        except (OSError, struct.error) as exc:
            raise UnreadableStoreError(f"{path} is not an HNSW header ({exc}).") from None
        header = cls(capacity, count, size, data_at, label_at, max_level, entry, max_m, max_m0, (level0, m, mult, construction))
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


class HnswIndex:
    """One persisted chroma-hnswlib index: level-0 elements hold the vector and its label."""

    def __init__(self, folder: Path, *, normalized: bool) -> None:
        import numpy as np

        self.folder = folder
        self.header = header = HnswHeader.read(folder)
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
        self._to_id, self.map_trailing = _label_to_id(folder / "index_metadata.pickle") if count else ({}, 0)
        self._label_column: Any = None
        self._rows_of: dict[str, list[int]] | None = None
        self._graph: Graph | None | bool = None

    def _row(self, i: int) -> Any:
        import numpy as np

        vector = np.array(self._elements[i, self._data]).view(np.float32)
        return vector * self._lengths[i] if self._lengths is not None else vector

    def _labels(self) -> Any:
        import numpy as np

        if self._label_column is None:
            self._label_column = np.ascontiguousarray(self._elements[:, self._label]).view(np.uint64).ravel()
        return self._label_column

    def _live(self, i: int) -> bool:
        return not int(self._elements[i, 2]) & 1  # hnswlib's delete mark

    def every(self) -> tuple[list[str], Any]:
        """The ids and vectors (one array, a row each) of every live element with a known id."""
        import numpy as np

        count = self.header.count
        if not count:
            return [], np.zeros((0, self.header.dimension), np.float32)
        labels = self._labels().tolist()
        live = (self._elements[:, 2] & 1) == 0
        rows, ids = [], []
        for i, label in enumerate(labels):
            record_id = self._to_id.get(int(label))
            if record_id is not None and live[i]:
                rows.append(i)
                ids.append(record_id)
        matrix = np.ascontiguousarray(self._elements[:, self._data]).view(np.float32)
        if len(rows) < count:
            matrix = matrix[rows]
        if self._lengths is not None:
            matrix *= self._lengths[rows][:, None]
        return ids, matrix

    def items(self) -> Iterator[tuple[str, Any]]:
        for i, label in enumerate(self._labels()):
            record_id = self._to_id.get(int(label))
            if record_id is not None and self._live(i):
                yield record_id, self._row(i)

    def vector(self, record_id: str) -> Any:
        if self._rows_of is None:
            rows_of: dict[str, list[int]] = {}
            for i, label in enumerate(self._labels().tolist()):
                found = self._to_id.get(int(label))
                if found is not None:
                    rows_of.setdefault(found, []).append(i)
            self._rows_of = rows_of
        live = [i for i in self._rows_of.get(record_id, ()) if self._live(i)]
        return self._row(live[0]) if live else None

    def element_ids(self) -> list[str | None]:
        """Each element's record id (None: marked deleted, or no id)."""
        live = ((self._elements[:, 2] & 1) == 0).tolist() if self.header.count else []
        return [self._to_id.get(int(label)) if ok else None for label, ok in zip(self._labels().tolist(), live, strict=True)]

    def graph(self, space: str) -> Graph | None:
        if self._graph is None:
            try:
                self._graph = Graph(self, space)
            except (OSError, ValueError, struct.error, UnreadableStoreError):
                self._graph = False
        return self._graph if isinstance(self._graph, Graph) else None


class Graph:
    """A persisted chroma-hnswlib graph, searched as hnswlib searches it: greedy descent through
    the upper levels, then a best-first search of level 0 that keeps the ef closest elements;
    here several candidates are expanded per step (numpy per step, not per link), which looks at a
    few more elements than hnswlib and finds at least as good a result."""

    def __init__(self, hnsw: HnswIndex, space: str) -> None:
        import numpy as np

        header = hnsw.header
        count = header.count
        if header.max_m0 <= 0 or 4 + 4 * header.max_m0 > header.data_at or not 0 <= header.entry < count:
            raise ValueError("no level-0 links where the header says")
        self.space = space
        elements = hnsw._elements
        self.vectors = np.ascontiguousarray(elements[:, hnsw._data]).view(np.float32)  # as hnswlib compares them
        self.links0 = np.ascontiguousarray(elements[:, 4 : 4 + 4 * header.max_m0]).view(np.uint32).astype(np.int64)
        counts = np.ascontiguousarray(elements[:, 0:2]).view(np.uint16).ravel().astype(np.int64)
        self.links0[np.arange(header.max_m0)[None, :] >= counts[:, None]] = -1
        if (self.links0 >= count).any():
            raise ValueError("a level-0 link points past the last element")
        self.entry, self.max_level = header.entry, header.max_level
        self.upper = self._upper_links(hnsw.folder / "link_lists.bin", header) if header.max_level > 0 else {}

    @staticmethod
    def _upper_links(path: Path, header: HnswHeader) -> dict[int, Any]:
        """Each element's links on levels 1 and up: element -> array (level - 1, links)."""
        import numpy as np

        data = path.read_bytes()
        per_level = 4 + 4 * header.max_m
        upper: dict[int, Any] = {}
        at = 0
        for element in range(header.count):
            (size,) = struct.unpack_from("<I", data, at)
            at += 4
            if size:
                if size % per_level or at + size > len(data):
                    raise ValueError("link_lists.bin does not hold whole link lists")
                lists = np.frombuffer(data, dtype=np.uint32, count=size // 4, offset=at).reshape(-1, per_level // 4)
                counts = lists[:, 0] & 0xFFFF
                links = lists[:, 1:].astype(np.int64)
                links[np.arange(header.max_m)[None, :] >= counts[:, None]] = -1
                upper[element] = links
                at += size
        return upper

    def distances(self, rows: Any, q: Any) -> Any:
        if self.space == "l2":
            diff = self.vectors[rows] - q
            return (diff * diff).sum(axis=1)
        return 1.0 - self.vectors[rows] @ q

    def search(self, q: Any, ef: int, eligible: Any, k: int, step: int = 8) -> tuple[Any, Any]:
        """The k closest eligible elements hnswlib's search with this ef would consider (and their
        distances), closest first. q: normalized for a cosine space."""
        import numpy as np

        current = self.entry
        best = float(self.distances([current], q)[0])
        for level in range(self.max_level, 0, -1):
            moved = True
            while moved:
                moved = False
                lists = self.upper.get(current)
                if lists is None or level - 1 >= len(lists):
                    break
                links = lists[level - 1]
                links = links[links >= 0]
                if len(links):
                    d = self.distances(links, q)
                    j = int(d.argmin())
                    if d[j] < best:
                        best, current, moved = float(d[j]), int(links[j]), True
        visited = np.zeros(len(self.vectors), dtype=bool)
        first = np.empty(len(self.vectors), dtype=np.int64)
        visited[current] = True
        pool = np.array([current])
        pool_d = np.array([best], dtype=np.float64)
        done = np.zeros(1, dtype=bool)
        seen, seen_d = [pool], [pool_d]
        while True:
            waiting = np.flatnonzero(~done)
            if not len(waiting):
                break
            if len(waiting) > step:
                waiting = waiting[np.argpartition(pool_d[waiting], step - 1)[:step]]
            done[waiting] = True
            links = self.links0[pool[waiting]].ravel()
            links = links[links >= 0]
            links = links[~visited[links]]
            if not len(links):
                continue
            visited[links] = True
            if len(waiting) > 1:  # two expanded elements may share a neighbour: keep its first mention
                order = np.arange(len(links))
                first[links[::-1]] = order[::-1]
                links = links[first[links] == order]
            d = self.distances(links, q).astype(np.float64)
            seen.append(links)
            seen_d.append(d)
            pool, pool_d, done = np.concatenate([pool, links]), np.concatenate([pool_d, d]), np.concatenate([done, np.zeros(len(links), dtype=bool)])
            if len(pool) > ef:
                keep = np.argpartition(pool_d, ef - 1)[:ef]
                pool, pool_d, done = pool[keep], pool_d[keep], done[keep]
        found, found_d = np.concatenate(seen), np.concatenate(seen_d)
        keep = eligible[found]
        found, found_d = found[keep], found_d[keep]
        head = np.lexsort((found, found_d))[:k]
        return found[head], found_d[head]


def segment_stamp(folder: Path) -> tuple:
    """When and how big each file of an HNSW segment is (the index is read again when one changes)."""
    out: list[tuple[int, int, int] | None] = []
    for name in INDEX_FILES:
        try:
            st = (folder / name).stat()
        except OSError:
            out.append(None)
            continue
        out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(out)

def segment_fault(folder: Path, normalized: bool) -> str | None:
    """Why chromadb could not load the segment's index files as they are (None: it could, or there are
    none yet): its client fails on them only after it has written to chroma.sqlite3, so a write is
    refused on this first. Every file is read as hnswlib reads it: the header, the elements, the
    label map, the lengths of a cosine space's vectors, the link lists of the upper levels."""
    try:
        if not index_present(folder):
            present = [name for name in INDEX_FILES[1:] if (folder / name).exists()]
            return f"{folder}: its header.bin is missing beside {', '.join(present)}" if present else None
        if not os.access(folder, os.W_OK | os.X_OK):
            return f"{folder} is read-only here"
        index = HnswIndex(folder, normalized=False)
        header = index.header
        if header.capacity * header.size > 1 << 32 and header.capacity > 4 * max(header.count, 1000):
            return f"{folder / 'header.bin'} says the index has room for {header.capacity:,} elements"
        if (derived := _derived_fault(header)) is not None:
            return f"{folder / 'header.bin'} {derived}"
        if index.map_trailing:
            return f"{folder / 'index_metadata.pickle'} holds {index.map_trailing} bytes past its end"
        if (mapped := _map_fault(folder / "index_metadata.pickle", header.count)) is not None:
            return f"{folder / 'index_metadata.pickle'} {mapped}"
        if normalized and header.count and (folder / "length.bin").stat().st_size < 4 * header.count:
            return f"{folder / 'length.bin'} is shorter than its header says ({header.count} elements)"
        links = _links_fault(index)
    except UnreadableStoreError as exc:
        return str(exc).rstrip(".")
    except (OSError, ValueError, struct.error) as exc:
        links = f"its index files are damaged ({exc})"
    return f"{folder}: {links}" if links else None


def index_present(folder: Path) -> bool:
    """Whether the segment folder holds an index (its header.bin); UnreadableStoreError where this
    user may not look (an index that may be there is not taken for none)."""
    try:
        return stat.S_ISREG(os.stat(folder / "header.bin").st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise UnreadableStoreError(f"{folder / 'header.bin'} cannot be read ({exc.strerror}).") from None


def _map_fault(path: Path, count: int) -> str | None:
    """What in the label map chromadb would fail on, or crash over: its two maps not each other's
    inverse, more labels than the index has elements, a label past the ones it handed out."""
    if not path.is_file():
        return None
    try:
        state = _PlainUnpickler(io.BytesIO(path.read_bytes())).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
        return f"is not a label map ({exc})"
    state = state if isinstance(state, dict) else getattr(state, "__dict__", {})
    to_id, to_label = state.get("label_to_id"), state.get("id_to_label")
    added = state.get("total_elements_added")
    if not isinstance(to_id, dict) or not isinstance(to_label, dict) or not isinstance(added, int):
        return "lacks its maps or its count"
    if len(to_id) != len(to_label) or any(to_label.get(record) != label for label, record in to_id.items()):
        return "holds two maps that disagree"
    if len(to_id) > count or any(not isinstance(label, int) or not 0 <= label <= added for label in to_id):
        return f"maps {len(to_id):,} labels (up to {added:,} handed out) onto an index of {count:,} elements"
    return None


def _derived_fault(header: HnswHeader) -> str | None:
    """What in the header is not what hnswlib derives from M (it trusts the file)."""
    level0, m, mult, construction = header.built or (0, 0, 0.0, 0)
    if level0 != 0:
        return f"places level 0 at offset {level0} (hnswlib writes 0)"
    if m < 2 or header.max_m != m or header.max_m0 != 2 * m or header.data_at != 4 + 4 * header.max_m0:
        return f"holds link sizes hnswlib would not write (M {m}, {header.max_m} and {header.max_m0} links)"
    if not math.isfinite(mult) or abs(mult - 1 / math.log(m)) > 1e-6 or not 0 < construction < 1 << 31:
        return f"holds build parameters hnswlib would not write (mult {mult!r}, ef_construction {construction})"
    return None


def _links_fault(index: HnswIndex) -> str | None:
    """What in the graph's links would take hnswlib past its elements (it follows them unchecked, and
    a bad one crashes the process): a link count over the level's room, a link to no element."""
    import numpy as np

    header, count = index.header, index.header.count
    if not count:
        return None
    if header.max_m0 <= 0 or 4 + 4 * header.max_m0 > header.data_at or not 0 <= header.entry < count:
        return "its header places no level-0 links, or no entry point, among its elements"
    room = np.arange(header.max_m0)[None, :]
    for start in range(0, count, 1 << 16):  # a block at a time: a big index is not copied whole
        block = np.ascontiguousarray(index._elements[start : start + (1 << 16), : 4 + 4 * header.max_m0])
        counts = block[:, 0:2].copy().view(np.uint16).ravel()
        if (counts > header.max_m0).any():
            return "an element has more level-0 links than the index has room for"
        if (block[:, 4:].copy().view(np.uint32)[room < counts[:, None]] >= count).any():
            return "a level-0 link points past the last element"
    if header.max_level > 0:
        for links in Graph._upper_links(index.folder / "link_lists.bin", header).values():
            if (links >= count).any():
                return "a link of an upper level points past the last element"
    return None


TORN_READ_PATIENCE = 2.0  # seconds a reader waits out another process rewriting an HNSW segment


def read_settled(folder: Path, stamp: tuple, normalized: bool) -> tuple[tuple, HnswIndex]:
    """The segment's index, read again while another process (chromadb persisting) is rewriting
    its files: a read that failed or saw the files change under it is retried until they settle.
    A damaged segment at rest fails at once."""
    deadline = time.monotonic() + TORN_READ_PATIENCE
    pause = 0.01
    while True:
        try:
            index = HnswIndex(folder, normalized=normalized)
            failure: UnreadableStoreError | None = None
        except UnreadableStoreError as exc:
            failure = exc
        except (OSError, ValueError, struct.error) as exc:  # a file cut or replaced between two reads of it
            failure = UnreadableStoreError(f"{folder} could not be read whole ({exc}).")
        after = (segment_stamp(folder), stamp[1])
        if after == stamp and (failure is None or not _recently_written(stamp[0])):
            if failure is not None:
                raise failure
            return stamp, index
        if time.monotonic() > deadline:
            raise failure or UnreadableStoreError(
                f"{folder} kept changing while it was read (another program rewriting it for "
                f"{TORN_READ_PATIENCE:g} s); try again.")
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
        stamp = after


def _recently_written(files: tuple) -> bool:
    """Whether a file of the segment changed within the last torn-read patience (a writer may be at it)."""
    now = time.time_ns()
    return any(f is not None and now - f[0] < TORN_READ_PATIENCE * 1e9 for f in files)
