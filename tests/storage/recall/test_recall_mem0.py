"""mem0's Memory.search on a store the real mem0 library wrote (formats/test_mem0_qdrant.py's):
the scope filter, then the vector store's cosine alone, no recency, no threshold."""

from __future__ import annotations

import numpy as np
import pytest
from formats.test_mem0_qdrant import _template, mem0_store  # noqa: F401  (fixtures)
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.recall import recall, who_asks
from mnemoscope.storage.recall.mem0 import scope_of

QUESTION = "what does Dana drink"


def test_the_scopes_memories_rank_by_cosine_alone_and_other_scopes_are_dropped(mem0_store) -> None:
    root, ids = mem0_store
    with open_store(root) as store:
        store.use_embedder(HashingEmbedder())
        kind, scopes = who_asks(store)
        result = recall(store, QUESTION, as_agent="user:dana")
        contents = {h.memory.id: h.memory.content for h in result.hits}
    assert kind == "scope" and "user:dana" in scopes
    q = np.asarray(HashingEmbedder().embed([QUESTION])[0])

    def by_hand(text: str) -> float:
        m = np.asarray(HashingEmbedder().embed([text])[0])
        return float(q @ m / (np.linalg.norm(q) * np.linalg.norm(m)))

    expected = sorted(contents, key=lambda i: -by_hand(contents[i]))
    assert [h.memory.id for h in result.hits] == expected
    assert set(contents.values()) == {"Dana prefers green tea", "Dana lives in Lisbon"}
    for hit in result.hits:
        assert hit.score == pytest.approx(by_hand(hit.memory.content), abs=1e-4)
        assert hit.explanation() == f"cosine {hit.score:.3f} = {hit.score:.3f}"
    assert any(d.reason.startswith("scope agent:helper/run:r1") for d in result.dropped)


def test_a_scope_is_required_and_read_as_mem0_reads_its_ids(mem0_store) -> None:
    root, _ids = mem0_store
    with open_store(root, read_only=True) as store, pytest.raises(UnsupportedError, match="give --as SCOPE"):
        recall(store, QUESTION)
    assert scope_of("dana") == {"user_id": "dana"}
    assert scope_of("agent:helper/run:r1") == {"agent_id": "helper", "run_id": "r1"}
    with pytest.raises(UnsupportedError, match="names none of them"):
        scope_of("team:core")
