"""What a store records about the model that wrote its vectors, and the refusal of an embedder
whose model or dimension differs; the deterministic hashing embedder of the tests and the demo."""

from __future__ import annotations

import math
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings
from helpers.embedding_server import EmbeddingServer
from mnemoscope.storage import open_store
from mnemoscope.storage.embedders.base import (
    EMBEDDER_KEY,
    EmbedderMismatchError,
    HashingEmbedder,
    RecordedEmbedder,
    check_match,
    recorded_in_chroma,
    same_model,
)
from mnemoscope.storage.settings import StoreSettings
from mnemoscope.storage.views.search import search

pytest.importorskip("wordllama", reason="the local embedder comes with the install (pyproject dependencies)")
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder  # noqa: E402


def test_a_mismatched_dimension_is_refused_naming_both(local_store: Path, server: EmbeddingServer, keyed: str) -> None:
    with open_store(local_store) as store:
        with pytest.raises(EmbedderMismatchError) as refused:
            store.use_embedder(LocalEmbedder(128))
        message = str(refused.value)
        assert "128 dimensions" in message and "256 dimensions" in message and "dimension differs" in message
        assert store.settings.embedder is None  # nothing was saved
        # A setting written some other way is refused when a search would use it.
        store.save_settings(StoreSettings(embedder=LOCAL_MODEL, embedder_url=server.base_url, embedder_dimensions=64))
        with pytest.raises(EmbedderMismatchError, match="64 dimensions"):
            search(store, "financial planning meeting", mode="hybrid")
        assert server.requests == []  # refused before anything was sent


def test_a_default_chroma_collection_names_the_model_it_expects(tmp_path: Path) -> None:
    """Chroma's default embedding function (all-MiniLM-L6-v2, which downloads its model and
    does not run here) is recorded by name: another model is refused by name."""
    path = tmp_path / "default-chroma"
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection("docs")  # records the default embedding function
    col.add(ids=["a"], documents=["x"], embeddings=[[0.1] * 384])  # passed explicitly: nothing downloaded
    del col, client
    with open_store(path) as store:
        (recorded,) = store.recorded_embedders()
        assert recorded == RecordedEmbedder(
            "docs", "all-MiniLM-L6-v2", 384, "Chroma embedding function 'default': all-MiniLM-L6-v2"
        )
        with pytest.raises(EmbedderMismatchError, match="all-MiniLM-L6-v2"):
            store.use_embedder(LocalEmbedder())
        fallback = search(store, "x", mode="vector")
        assert fallback.mode == "keyword" and any("cannot be embedded" in n for n in fallback.notices)


def test_model_names_match_across_spellings() -> None:
    assert same_model("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2")
    assert same_model("nomic-embed-text:latest", "nomic-embed-text")
    assert not same_model("text-embedding-3-small", "text-embedding-3-large")



def test_the_hashing_embedder_is_deterministic_unit_length_and_lexical() -> None:
    embedder = HashingEmbedder(64)
    assert embedder.name == "mnemoscope-hashing-64" and embedder.dimensions == 64
    a, b, c = embedder.embed(["Dana moved to Lisbon", "Dana moved to Lisbon", "quarterly budget review"])
    assert a == b and len(a) == 64
    assert math.isclose(sum(x * x for x in a), 1.0)
    near = sum(x * y for x, y in zip(a, HashingEmbedder(64).embed(["Dana moved to Lisbon last spring"])[0], strict=True))
    far = sum(x * y for x, y in zip(a, c, strict=True))
    assert near > 0.5 > far
    assert embedder.embed([""]) == [[1.0] + [0.0] * 63]  # no word: still a unit vector


def test_a_collection_records_our_key_else_chromas_embedding_function() -> None:
    ours = recorded_in_chroma("memories", {EMBEDDER_KEY: "mnemoscope-hashing-256"}, {}, 256)
    assert ours == RecordedEmbedder("memories", "mnemoscope-hashing-256", 256, "mnemoscope-hashing-256")
    configured = {"embedding_function": {"type": "known", "name": "openai",
                                         "config": {"model_name": "text-embedding-3-small", "dimensions": 512}}}
    theirs = recorded_in_chroma("facts", {}, configured, None)
    assert (theirs.model, theirs.dimensions) == ("text-embedding-3-small", 512)
    assert theirs.recorded == "Chroma embedding function 'openai': text-embedding-3-small"
    assert recorded_in_chroma("bare", {}, {}, 8) == RecordedEmbedder("bare", None, 8, None)
    assert theirs.describe() == "text-embedding-3-small, 512 dimensions (collection 'facts')"
    assert RecordedEmbedder("bare").describe() == "an unrecorded model (collection 'bare')"


def test_check_match_refuses_another_model_or_size_and_passes_an_empty_collection() -> None:
    recorded = [RecordedEmbedder("memories", "mnemoscope-hashing-256", 256)]
    check_match(HashingEmbedder(256), recorded)
    check_match(HashingEmbedder(128), [RecordedEmbedder("empty", "mnemoscope-hashing-256", None)])
    check_match(HashingEmbedder(128), [RecordedEmbedder("unnamed", None, 128)])
    with pytest.raises(EmbedderMismatchError, match="the model and dimension differ"):
        check_match(HashingEmbedder(128), [RecordedEmbedder("memories", "other-model", 256)])
    with pytest.raises(EmbedderMismatchError, match="the model differs"):
        check_match(HashingEmbedder(128), [RecordedEmbedder("memories", "other-model", 128)])
    with pytest.raises(EmbedderMismatchError, match="the dimension differs"):
        check_match(HashingEmbedder(128), [RecordedEmbedder("memories", None, 256)])
