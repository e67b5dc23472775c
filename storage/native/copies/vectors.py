"""The workspace's vector copies (collection ``memories``) against the memory rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ...consistency_report import Finding
from ...embedders.base import Embedder
from ..chroma.records import MIRROR_KEY, NATIVE_COLLECTION, STALE_KEY, record_id_for
from .rows import existing_ids, row_pages

# A recomputed vector this close (cosine) to the stored one is the same vector: models served
# over a network are not bit-for-bit repeatable, a tampered or outdated vector is far off.
SAME_VECTOR = 0.995
COMPARED_METADATA = ("status", "channel", "layer")
_ID_PAGE = 1000


def cosines(stored: Sequence[Sequence[float]], recomputed: Sequence[Sequence[float]]) -> list[float]:
    """Row-wise cosine similarity of two equally long lists of vectors of one length."""
    import numpy as np

    a, b = np.asarray(stored, dtype=np.float64), np.asarray(recomputed, dtype=np.float64)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    dots = np.einsum("ij,ij->i", a, b)
    both_zero = (np.linalg.norm(a, axis=1) == 0) & (np.linalg.norm(b, axis=1) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = np.where(norms > 0, dots / np.where(norms > 0, norms, 1), np.where(both_zero, 1.0, 0.0))
    return [float(x) for x in similarity]


class VectorCheck:
    """Row-side and record-side checks of one workspace's native collection."""

    def __init__(self, db: Any, vectors: Any, embedder: Embedder | None) -> None:
        self.db = db
        self.vectors = vectors
        self.files = vectors.files
        self.col = vectors.collection_info(NATIVE_COLLECTION)
        self.embedder = embedder
        dimension = embedder.dimensions if embedder is not None else None
        self.dimension = dimension or self.files.dimension(self.col)
        self.orphan_texts: list[str] = []  # the text of each orphan vector (its bullet may be left too)

    def source(self) -> str:
        return f"vectors/{NATIVE_COLLECTION}"

    def rows(self, progress: Callable[[int], None]) -> Iterator[Finding]:
        """Each row's vector: there, of the right length, current, and saying what the row says."""
        for page in row_pages(self.db):
            with self.files.batch():  # one connection to chroma.sqlite3 for the page's reads
                found = list(self._page(page))
            yield from found
            progress(len(page))

    def _page(self, rows: list[dict[str, Any]]) -> Iterator[Finding]:
        found = self.files.records(self.col, [r["id"] for r in rows])
        to_compare: list[tuple[dict[str, Any], list[float]]] = []
        for row in rows:
            rid = record_id_for(NATIVE_COLLECTION, row["id"])
            record = found.get(row["id"])
            vector = self.files.vector(self.col, row["id"]) if record is not None else None
            if record is None or vector is None:
                why = "never embedded (no embedder ran when it was added)" if row["vector_state"] == "none" else (
                    "its vector record is gone" if record is None else "its record holds no vector")
                yield Finding("missing-vector", rid, why, row["id"], self.source())
                continue
            document, meta = record
            mismatched = [k for k in COMPARED_METADATA if meta.get(k) != row[k]]
            if document != row["content"]:
                mismatched.append("text")
            if mismatched:
                yield Finding("vector-metadata-mismatch", rid, "differs from the row in " + ", ".join(mismatched),
                              row["id"], self.source())
            if self.dimension and len(vector) != self.dimension:
                yield Finding("vector-dimension", rid, f"{len(vector)} numbers where the collection's model makes "
                              f"{self.dimension}", row["id"], self.source())
            elif row["vector_state"] == "stale" or meta.get(STALE_KEY):
                yield Finding("stale-vector", rid, "marked stale (edited without an embedder)", row["id"], self.source())
            elif self.embedder is not None:
                to_compare.append((row, vector))
        if to_compare:
            assert self.embedder is not None
            fresh = self.embedder.embed([row["content"] for row, _ in to_compare])
            same_length = [(row, stored, new) for (row, stored), new in zip(to_compare, fresh, strict=True)
                           if len(stored) == len(new)]
            similarities = cosines([s for _, s, _ in same_length], [n for _, _, n in same_length]) if same_length else []
            for (row, _, _), similarity in zip(same_length, similarities, strict=True):
                if similarity < SAME_VECTOR:
                    yield Finding("stale-vector", record_id_for(NATIVE_COLLECTION, row["id"]),
                                  f"cosine {similarity:.3f} to the vector of its current text ({self.embedder.label})",
                                  row["id"], self.source())

    def records(self) -> Iterator[Finding]:
        """Vector copies whose row is gone (records that copy nothing are memories of their own)."""
        last = -1
        while True:
            page = self.files.rows(
                "SELECT id, embedding_id FROM embeddings WHERE segment_id = ? AND id > ? ORDER BY id LIMIT ?",
                [self.col.metadata_segment, last, _ID_PAGE],
            )
            if not page:
                return
            last = int(page[-1][0])
            keys = [str(key) for _, key in page]
            rows = existing_ids(self.db, keys)
            unmatched = [k for k in keys if k not in rows]
            if not unmatched:
                continue
            for key, (document, meta) in self.files.records(self.col, unmatched).items():
                if meta.get(MIRROR_KEY) is True:
                    self.orphan_texts.append(document or "")
                    yield Finding("orphan-vector", record_id_for(NATIVE_COLLECTION, key),
                                  "a vector copy of a memory no longer in memory.db", None, self.source())
