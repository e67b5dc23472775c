"""The local model (weights shipped in the wordllama package): it runs with no network and no
download, its vectors are unit length and Matryoshka prefixes of each other, and it finds
paraphrases the lexical hashing embedder cannot."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.embedding_facts import FACTS, PARAPHRASES, chroma_facts, top_hit
from mnemoscope.storage import Kind, open_store
from mnemoscope.storage.embedders.base import EmbedderError, EmbedderMismatchError, HashingEmbedder
from mnemoscope.storage.opening import create_workspace
from mnemoscope.storage.views.search import search

pytest.importorskip("wordllama", reason="the local embedder comes with the install (pyproject dependencies)")
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder, available  # noqa: E402


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", text)}


def test_the_paraphrases_share_no_word_with_their_memory() -> None:
    for query, fact in PARAPHRASES.items():
        assert not _words(query) & _words(fact), query


def test_the_local_model_runs_with_no_network_and_no_download(tmp_path: Path) -> None:
    """In a fresh interpreter whose sockets all refuse, with an empty home: the weights come
    from the installed package, and nothing is written anywhere."""
    home = tmp_path / "home"
    home.mkdir()
    code = """
import socket, json
class Refusing(socket.socket):
    def __init__(self, *a, **k):
        raise OSError("no network in this test")
def refuse(*a, **k):
    raise OSError("no network in this test")
socket.socket = Refusing
socket.create_connection = refuse
socket.getaddrinfo = refuse
from mnemoscope.storage.embedders.local import LocalEmbedder
vectors = LocalEmbedder(128).embed(["Alice is allergic to peanuts", "food intolerance of a colleague"])
import sys
assert "wordllama" not in sys.modules and "requests" not in sys.modules
print(json.dumps([len(vectors[0]), sum(a * b for a, b in zip(*vectors))]))
"""
    env = {"HOME": str(home), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    dims, cosine = json.loads(done.stdout.strip().splitlines()[-1])
    assert dims == 128 and cosine > 0.2
    assert list(home.rglob("*")) == []


def test_local_vectors_are_unit_length_and_matryoshka_prefixes() -> None:
    full = np.array(LocalEmbedder(256).embed(FACTS[:3]))
    small = np.array(LocalEmbedder(64).embed(FACTS[:3]))
    assert full.shape == (3, 256) and small.shape == (3, 64)
    assert np.allclose(np.linalg.norm(full, axis=1), 1.0, atol=1e-5)
    prefix = full[:, :64] / np.linalg.norm(full[:, :64], axis=1, keepdims=True)
    assert np.allclose(prefix, small, atol=1e-5)
    with pytest.raises(EmbedderError, match="64, 128, 256"):
        LocalEmbedder(100)


@pytest.mark.parametrize("query", sorted(PARAPHRASES))
def test_a_paraphrase_finds_its_memory_through_the_local_embedder(local_store: Path, query: str) -> None:
    with open_store(local_store) as store:
        assert store.kinds == [Kind.CHROMA]
        store.use_embedder(LocalEmbedder())
        result = search(store, query, mode="vector", k=3)
        assert result.mode == "vector" and not [n for n in result.notices if not n.startswith("No memories match")]
        assert result.hits[0].memory.content == PARAPHRASES[query]  # first, a match or the best weak one
        assert LOCAL_MODEL in (result.embedder or "") and "local" in result.embedder
    with open_store(local_store, read_only=True) as store:  # the choice is the store's, kept
        assert store.settings.embedder == LOCAL_MODEL and store.settings.embedder_dimensions == 256
        assert top_hit(store, query) == PARAPHRASES[query]


def test_the_lexical_hashing_embedder_does_not_find_the_paraphrases(tmp_path: Path) -> None:
    """What the tests above prove: these queries need a semantic model."""
    path = tmp_path / "hashed"
    chroma_facts(path, HashingEmbedder().embed(FACTS))
    with open_store(path) as store:
        store.use_embedder(HashingEmbedder())
        found = [top_hit(store, q) == fact for q, fact in PARAPHRASES.items()]
        assert sum(found) <= 1, found
        assert "lexical" in search(store, "peanuts", mode="vector").embedder


def test_hybrid_search_says_which_embedder_ranked_it_and_keyword_says_none(local_store: Path) -> None:
    with open_store(local_store) as store:
        store.use_embedder(LocalEmbedder())
        hybrid = search(store, "name of our pet kitten", mode="hybrid", k=3)
        nearest = next(h for h in hybrid.hits if h.ranks.get("vector") == 1)
        assert nearest.memory.content == FACTS[6]
        assert hybrid.to_dict()["embedder"].startswith(LOCAL_MODEL)
        assert search(store, "Biscuit", mode="keyword").to_dict()["embedder"] is None


def test_a_native_workspace_made_with_the_local_model_records_it(tmp_path: Path) -> None:
    with create_workspace(tmp_path / "ws", LocalEmbedder()) as store:
        for fact in FACTS:
            store.add_memory(fact, channel="_global")
    with open_store(tmp_path / "ws") as store:
        assert store.embedder() is not None and store.embedder().name == LOCAL_MODEL
        recorded = {r.collection: r for r in store.recorded_embedders()}
        assert recorded["memories"].model == LOCAL_MODEL and recorded["memories"].dimensions == 256
        assert top_hit(store, "musician performing classical music") == FACTS[8]
        # Same dimension, another model: refused by name.
        with pytest.raises(EmbedderMismatchError) as refused:
            store.use_embedder(HashingEmbedder(256))
        assert "mnemoscope-hashing-256" in str(refused.value) and LOCAL_MODEL in str(refused.value)
        assert "model differs" in str(refused.value)



def test_the_local_model_says_what_it_is() -> None:
    assert available()
    embedder = LocalEmbedder(64)
    assert embedder.name == LOCAL_MODEL and embedder.dimensions == 64
    assert LOCAL_MODEL in embedder.label and "local" in embedder.label
