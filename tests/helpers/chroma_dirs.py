"""Chroma persistent directories written by chromadb's own client, for the tests of
storage/native/chroma (files, hnsw, local vector search)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import numpy as np
from chromadb.config import Settings


def chroma_client(path: Path) -> Any:
    return chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def written(path: Path, n: int, space: str = "cosine", dim: int = 16) -> np.ndarray:
    """A collection "facts" past Chroma's persist threshold (1000): part HNSW files, part queue,
    with deletes, updates and list metadata. The vectors as first added."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    col = chroma_client(path).get_or_create_collection("facts", embedding_function=None, metadata={"hnsw:space": space})
    for start in range(0, n, 400):
        ids = range(start, min(n, start + 400))
        col.add(
            ids=[f"f{i}" for i in ids],
            embeddings=vectors[start : start + 400].tolist(),
            documents=[f"Fact {i} about Caché and Redis" if i % 3 else f"fact {i}" for i in ids],
            metadatas=[{"n": i, "ok": i % 2 == 0, "w": i / 7, "tags": ["a", f"t{i % 5}"]} for i in ids],
        )
    col.delete(ids=["f3", f"f{n - 2}"])
    col.update(ids=["f4", f"f{n - 3}"], embeddings=[[2.0] * dim, [3.0] * dim], documents=["four", "late"])
    col.upsert(ids=["f5"], embeddings=[[-1.0] * dim], metadatas=[{"n": 5, "changed": True}])
    return vectors


def clustered(path: Path, n: int, space: str = "cosine", dim: int = 8) -> tuple[Any, list[str], np.ndarray]:
    """A collection "facts" of n vectors around 40 centres, every tenth record's status "deleted":
    (chromadb's collection, the ids, the vectors)."""
    rng = np.random.default_rng(4)
    centres = rng.normal(size=(40, dim)).astype(np.float32)
    data = centres[np.arange(n) % 40] + rng.normal(scale=0.3, size=(n, dim)).astype(np.float32)
    col = chroma_client(path).get_or_create_collection("facts", embedding_function=None, metadata={"hnsw:space": space})
    ids = [f"v{i}" for i in range(n)]
    for start in range(0, n, 500):
        col.add(
            ids=ids[start : start + 500],
            embeddings=data[start : start + 500].tolist(),
            documents=[f"vector {i}" for i in range(start, min(n, start + 500))],
            metadatas=[{"status": "deleted" if i % 10 == 0 else "active"} for i in range(start, min(n, start + 500))],
        )
    return col, ids, data
