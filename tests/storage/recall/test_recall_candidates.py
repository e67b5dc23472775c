"""The signals a system's rules score by, read on the demo: each candidate's cosine and L2
distance to the question's vector agree with the stored vectors, and keyword-only candidates are
measured too."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from mnemoscope.storage.embedders.choice import default_embedder
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.query import MemoryQuery
from mnemoscope.storage.recall.candidates import gather, similarity


def test_each_candidate_carries_the_cosine_and_distance_of_its_stored_vector(demo_path: Path) -> None:
    question = "which payment provider do we use"
    q = np.asarray(default_embedder().embed([question])[0], dtype=np.float64)
    with open_store(demo_path, read_only=True) as store:
        gathered = gather(store, question, 8)
        stored = {c.memory.id: store.embedding_of(c.memory.id) for c in gathered.candidates}
    assert gathered.by_vector and gathered.embedding is not None
    keyword_only = [c for c in gathered.candidates if c.vector_rank is None and stored[c.memory.id] is not None]
    assert keyword_only, "the question finds memories by keyword beyond the vector list"
    for c in gathered.candidates:
        if stored[c.memory.id] is None:  # a markdown entry: no vector to measure
            assert c.cosine is None and c.distance is None
            continue
        v = np.asarray(stored[c.memory.id], dtype=np.float64)
        assert c.cosine == pytest.approx(float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v))), abs=1e-5)
        assert c.distance == pytest.approx(float(np.linalg.norm(q - v)), abs=1e-4)
        assert similarity(c, True) == ("cosine", c.cosine)
    nearest = sorted((c for c in gathered.candidates if c.vector_rank), key=lambda c: c.vector_rank or 0)
    assert [c.cosine for c in nearest] == sorted((c.cosine or 0.0 for c in nearest), reverse=True)
    assert not math.isnan(sum(c.cosine or 0.0 for c in gathered.candidates))


def test_without_vectors_only_keyword_candidates_come_and_keyword_relevance_stands_in(sqlite_only: Path) -> None:
    with open_store(sqlite_only, read_only=True) as store:
        gathered = gather(store, "Stripe payments", 5, MemoryQuery())
    assert not gathered.by_vector and gathered.candidates
    assert all(c.cosine is None and c.keyword is not None for c in gathered.candidates)
    assert similarity(gathered.candidates[0], False)[0] == "keyword"
