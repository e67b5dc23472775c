"""Vector search over a local Chroma directory's files (ChromaSource's half that finds the
nearest records): every vector read once into a matrix (files.py), compared exactly in small
collections; in big ones Chroma's own persisted HNSW graph (hnsw.py) is walked as hnswlib walks
it, the records the graph does not hold yet compared one by one. The query's filters are applied
to what was found, not before (a pre-filter would read every record's metadata first), from the
collection's record index (index.py). A server's vector search is Chroma's own (server.py)."""

from __future__ import annotations

from typing import Any

from ...errors import StoreError
from ...model import Memory, Status
from ...query import MemoryQuery
from ...source import Snapshot
from .files import ChromaFiles, Collection
from .index import IndexedReads, one_read
from .vector_collection import VectorCollection, sliced

_GRAPH_FROM = 20_000  # records from which a vector search walks Chroma's graph instead of comparing every vector


class LocalVectorSearch(IndexedReads):
    """_nearest_memories of a local directory, for ChromaSource. The source supplies its files,
    its collections (collection_info), its change token, _read (SQLite errors as a store error)
    and _memory (a record as a full memory, its revision hashed from the given embedding); the
    caches below are the source's, emptied when it writes or closes."""

    files: ChromaFiles
    _vectors: dict[str, tuple[str, list[str], Any, Any, Any]]  # collection -> the vector matrix (_vector_matrix)
    _graphs: dict[str, tuple[str, Any]]  # collection -> (token, the graph walk or None)
    _filters: dict[tuple[str, str, tuple[Any, ...]], Any]  # rows of the vector matrix a filter keeps
    _eligible: tuple[Any, ...]  # the graph elements the last filter kept
    _recent: dict[str, Memory]  # the last vector search's hits, as get() returns them
    _recent_token: str

    def collection_info(self, name: str) -> Collection:
        raise NotImplementedError

    def change_token(self) -> str:
        raise NotImplementedError

    def _read(self, read: Any) -> Any:
        raise NotImplementedError

    def _memory(
        self,
        name: str,
        record_id: str,
        document: str | None,
        meta: dict[str, Any],
        snap: Snapshot | None,
        embedding: Any = None,
    ) -> Memory:
        raise NotImplementedError

    @one_read
    def vector_collections(self) -> list[VectorCollection]:
        """Every collection's vectors: each read from the files as one array (kept for vector
        search until the directory changes) and handed out in slices of it."""
        return [self._vector_collection(name) for name in self.collections()]

    def _vector_collection(self, name: str) -> VectorCollection:
        _token, ids, matrix, _unit, _positions = self._vector_matrix(name)
        return VectorCollection(
            name, len(ids), int(matrix.shape[1]) if len(ids) else 0, self.collection_info(name).space, self.kind,
            sliced(ids, matrix), lambda: self.record_index(name),
        )

    def _nearest_memories(self, name: str, vector: list[float], query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        """The collection's k nearest records the query keeps, as memories with their distances."""
        found = self._nearest(name, vector, query, k)
        return [(m, d) for m, (_i, d) in zip(self._found_memories(name, found), found, strict=True)]

    def _found_memories(self, name: str, found: list[tuple[int, float]]) -> list[Memory]:
        """Full memories of rows of the collection's vector matrix, each as get() returns it (and
        kept for get(): a search's caller usually asks for each hit again)."""
        token, ids, matrix, _unit, _positions = self._vector_matrix(name)
        col = self.collection_info(name)
        records = self._read(lambda: self.files.records(col, [ids[row] for row, _d in found]))
        if self._recent_token != token:
            self._recent, self._recent_token = {}, token
        if len(self._recent) > 1000:
            self._recent.clear()
        out = []
        for row, _distance in found:
            record_id = ids[row]
            if record_id not in records:
                continue
            document, meta = records[record_id]
            snap = {"collection": name, "id": record_id, "document": document, "metadata": dict(meta)}
            memory = self._memory(name, record_id, document, meta, snap, matrix[row])
            self._recent[memory.id] = memory
            out.append(memory)
        return out

    def _nearest(self, name: str, vector: list[float], query: MemoryQuery, k: int) -> list[tuple[int, float]]:
        """The k nearest records (rows of the vector matrix) by exact distance in the collection's
        space; the query's filters are applied to the distances, not before them (Chroma's own
        pre-filter scans every record's metadata first)."""
        import numpy as np

        _token, ids, matrix, unit, positions = self._vector_matrix(name)
        if not ids:
            return []
        q = np.asarray(vector, dtype=np.float32)
        if matrix.shape[1] != q.shape[0]:
            raise StoreError(
                f"Vector search in collection {name!r} failed: the query has {q.shape[0]} dimensions, "
                f"the collection {matrix.shape[1]}."
            )
        space = self.collection_info(name).space
        allowed = self._vector_filter(name, query, positions)
        if len(ids) >= _GRAPH_FROM:
            found = self._graph_nearest(name, q, allowed, k)
            if found is not None:
                return found
        if space == "cosine":
            distances = 1.0 - _dot(unit, q / (np.linalg.norm(q) or 1.0))
        elif space == "ip":
            distances = 1.0 - _dot(matrix, q)
        else:
            distances = unit - 2.0 * _dot(matrix, q) + float(q @ q)  # unit holds the squared norms here
        if allowed is not None:
            distances = np.where(allowed, distances, np.inf)
        take = min(k, len(ids))
        if take <= 0:
            return []
        head = np.argpartition(distances, take - 1)[:take] if take < len(ids) else np.arange(len(ids))
        head = head[np.lexsort((head, distances[head]))]
        return [(int(i), float(distances[i])) for i in head if np.isfinite(distances[i])]

    def _graph_nearest(self, name: str, q: Any, allowed: Any, k: int) -> list[tuple[int, float]] | None:
        """The k nearest rows found as Chroma finds them, through its persisted HNSW graph (with the
        ef it searches with), the records its graph does not hold yet compared one by one. None:
        no graph to walk, or it found fewer than k of the rows the filters keep."""
        import numpy as np

        walk = self._vector_graph(name)
        if walk is None:
            return None
        graph, element_row, extra_rows = walk
        token, ids, matrix, unit, _positions = self._vector_matrix(name)
        space = self.collection_info(name).space
        query = q / (np.linalg.norm(q) or 1.0) if space == "cosine" else q
        key = (token, name, id(allowed))
        if self._eligible[0] != key:  # the elements the filters keep, kept while the filter is
            eligible = element_row >= 0
            if allowed is not None:
                eligible &= allowed[np.maximum(element_row, 0)]
            count = len(ids) if allowed is None else int(allowed.sum())
            self._eligible = (key, eligible, count, allowed)
        _key, eligible, count, _allowed = self._eligible
        elements, distances = graph.search(query, max(self._search_ef(name), k), eligible, k)
        rows, found = element_row[elements].tolist(), distances.tolist()
        extra = extra_rows if allowed is None else extra_rows[allowed[extra_rows]]
        if len(extra):
            if space == "cosine":
                d = 1.0 - unit[extra] @ query
            elif space == "ip":
                d = 1.0 - matrix[extra] @ q
            else:
                d = unit[extra] - 2.0 * (matrix[extra] @ q) + float(q @ q)
            rows += extra.tolist()
            found += d.tolist()
        wanted = min(k, count)
        if len(rows) < wanted:
            return None
        best = sorted(zip(found, rows, strict=True))[:k]
        return [(row, float(d)) for d, row in best]

    def _search_ef(self, name: str) -> int:
        col = self.collection_info(name)
        hnsw = col.configuration.get("hnsw") or {}
        value = col.metadata.get("hnsw:search_ef") or hnsw.get("ef_search")
        return int(value) if isinstance(value, (int, float)) and value > 0 else 100

    def _vector_graph(self, name: str) -> tuple[Any, Any, Any] | None:
        """(graph, each element's row in the vector matrix (-1: none), the rows no element holds)."""
        import numpy as np

        token, ids, _matrix, _unit, _positions = self._vector_matrix(name)
        cached = self._graphs.get(name)
        if cached is not None and cached[0] == token:
            return cached[1]
        col = self.collection_info(name)
        graph, element_ids, persisted = self._read(lambda: self.files.graph(col))
        walk = None
        if graph is not None:
            touched = self._read(lambda: self.files.queued_ids(col, persisted))
            row_of = {record_id: row for row, record_id in enumerate(ids)}
            element_row = np.array(
                [row_of.get(i, -1) if i is not None and i not in touched else -1 for i in element_ids], dtype=np.int64
            )
            held = np.zeros(len(ids), dtype=bool)
            held[element_row[element_row >= 0]] = True
            walk = (graph, element_row, np.flatnonzero(~held))
        self._graphs[name] = (token, walk)
        return walk

    def _vector_matrix(self, name: str) -> tuple[str, list[str], Any, Any, Any]:
        """(token, ids, vectors, unit vectors (squared norms for l2), each row's index position)."""
        import numpy as np

        token = self.change_token()
        cached = self._vectors.get(name)
        if cached and cached[0] == token:
            return cached
        vectors = self._read(lambda: self.files.vectors(self.collection_info(name)))
        matrix = vectors.matrix()
        space = self.collection_info(name).space
        if space == "cosine":
            norms = np.linalg.norm(matrix, axis=1, keepdims=True) if len(matrix) else np.ones((0, 1), np.float32)
            unit = matrix / np.where(norms == 0, 1.0, norms).astype(np.float32)
        elif space == "ip":
            unit = None
        else:
            unit = (matrix.astype(np.float64) ** 2).sum(axis=1)
        position = self._index_of(name).position()
        positions = np.array([position.get(i, -1) for i in vectors.ids], dtype=np.int64)
        self._vectors[name] = (token, vectors.ids, matrix, unit, positions)
        return self._vectors[name]

    def _vector_filter(self, name: str, query: MemoryQuery, positions: Any) -> Any:
        """Which rows of the vector matrix the query's filters keep (None: all)."""
        only_active = bool(query.statuses) and set(query.statuses) == {Status.ACTIVE}
        if not (only_active or query.channels or query.layers):
            return None
        index = self._index_of(name)
        narrowed = MemoryQuery(
            channels=query.channels, layers=query.layers, statuses=(Status.ACTIVE,) if only_active else ()
        )
        key = (index.token, name, (narrowed.channels, narrowed.layers, narrowed.statuses))
        if key not in self._filters:
            if len(self._filters) > 8:
                self._filters.clear()
            mask = self._mask(index, narrowed, name, contains=False, mirrors=True)  # a mirror stands for its memory
            self._filters[key] = (positions >= 0) & (mask[positions] if mask is not None else True)
        return self._filters[key]


def _dot(matrix: Any, q: Any) -> Any:
    """Each row's dot product with q, on this thread: BLAS would share a matrix-vector product
    out among threads, whose start-up on a busy machine costs several times the product."""
    import numpy as np

    return np.einsum("ij,j->i", matrix, q)
