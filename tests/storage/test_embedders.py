"""Real embedders, configured per store: a local model (weights shipped in the wordllama
package) and an OpenAI-compatible endpoint (a real loopback server computing embeddings with
that model), matched against the model and dimension a store's vectors were written with.

No mocks: real Chroma directories (written by chromadb, and by chromadb's own OpenAI
embedding function through the server), a real mem0 store, a real HTTP server.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from helpers.embedding_server import EmbeddingServer, closed_port_url
from helpers.owners import require, run_owner
from mnemoscope.storage import Kind, open_store
from mnemoscope.storage.embedders.base import EmbedderError, EmbedderMismatchError, HashingEmbedder, RecordedEmbedder, same_model
from mnemoscope.storage.embedders.choice import make_embedder
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder
from helpers.keyring_daemon import keyring_daemon, secret_service  # noqa: F401
from mnemoscope.storage.credentials import credential_name, remember
from mnemoscope.storage.embedders.openai_compatible import KEY_ENV, OpenAICompatibleEmbedder, secret_name
from mnemoscope.storage.opening import create_workspace
from mnemoscope.storage.settings import StoreSettings
from mnemoscope.storage.views.search import search

pytest.importorskip("wordllama", reason="the local embedder is in the [embed-local] and [test] extras")

KEY = "sk-loopback-4f1c9a7e2b6d8f03a5c1"
FACTS = [
    "Alice is allergic to peanuts",
    "The user prefers dark mode in the editor",
    "Deployments to production happen every Friday afternoon",
    "Bob's favourite programming language is Rust",
    "The quarterly budget review is scheduled for March",
    "Dana moved to Lisbon last spring",
    "The team's cat is called Biscuit",
    "Backups of the database run nightly at two",
    "Carol plays the violin in an orchestra",
    "The office wifi password changes monthly",
]
# Paraphrases sharing no word with the memory they mean: only a semantic model finds them.
PARAPHRASES = {
    "food intolerance of a colleague": FACTS[0],
    "financial planning meeting": FACTS[4],
    "where does she live now in Portugal": FACTS[5],
    "name of our pet kitten": FACTS[6],
    "musician performing classical music": FACTS[8],
}


def _words(text: str) -> set[str]:
    return {w.casefold() for w in re.findall(r"\w+", text)}


def test_the_paraphrases_share_no_word_with_their_memory() -> None:
    for query, fact in PARAPHRASES.items():
        assert not _words(query) & _words(fact), query


def chroma_facts(path: Path, vectors: list[list[float]], name: str = "agent-facts", **collection: object) -> None:
    """A Chroma directory another tool wrote: documents and the vectors its model made."""
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection(
        name, embedding_function=collection.pop("embedding_function", None),
        metadata={"hnsw:space": "cosine"}, **collection,  # type: ignore[arg-type]
    )
    col.add(
        ids=[f"f{i}" for i in range(len(FACTS))],
        documents=FACTS,
        embeddings=vectors,  # type: ignore[arg-type]
        metadatas=[{"created_at": f"2026-03-{i + 1:02d}T10:00:00Z"} for i in range(len(FACTS))],
    )


@pytest.fixture
def local_store(tmp_path: Path) -> Path:
    """Vectors written by the local model (256 dimensions), nothing recorded about it."""
    path = tmp_path / "chroma"
    chroma_facts(path, LocalEmbedder().embed(FACTS))
    return path


@pytest.fixture
def server():
    with EmbeddingServer(KEY) as running:
        yield running


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> str:
    """The endpoint's key where Mnemoscope finds it without a keyring."""
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def _top(store, query: str) -> str:
    result = search(store, query, mode="vector", k=3)
    assert result.mode == "vector", result.notices
    return result.hits[0].memory.content


# -- the local embedder --------------------------------------------------------------------


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
        assert result.mode == "vector" and result.notices == []
        assert result.hits[0].memory.content == PARAPHRASES[query]
        assert LOCAL_MODEL in (result.embedder or "") and "local" in result.embedder
    with open_store(local_store, read_only=True) as store:  # the choice is the store's, kept
        assert store.settings.embedder == LOCAL_MODEL and store.settings.embedder_dimensions == 256
        assert _top(store, query) == PARAPHRASES[query]


def test_the_lexical_hashing_embedder_does_not_find_the_paraphrases(tmp_path: Path) -> None:
    """What the tests above prove: these queries need a semantic model."""
    path = tmp_path / "hashed"
    chroma_facts(path, HashingEmbedder().embed(FACTS))
    with open_store(path) as store:
        store.use_embedder(HashingEmbedder())
        found = [_top(store, q) == fact for q, fact in PARAPHRASES.items()]
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
        assert _top(store, "musician performing classical music") == FACTS[8]
        # Same dimension, another model: refused by name.
        with pytest.raises(EmbedderMismatchError) as refused:
            store.use_embedder(HashingEmbedder(256))
        assert "mnemoscope-hashing-256" in str(refused.value) and LOCAL_MODEL in str(refused.value)
        assert "model differs" in str(refused.value)


# -- the OpenAI-compatible endpoint -----------------------------------------------------------


@pytest.mark.parametrize("query", sorted(PARAPHRASES))
def test_a_paraphrase_finds_its_memory_through_the_loopback_server(
    local_store: Path, server: EmbeddingServer, keyed: str, query: str
) -> None:
    with open_store(local_store) as store:
        store.use_embedder(OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 256))
    with open_store(local_store, read_only=True) as store:
        assert store.settings.embedder_url == server.base_url
        result = search(store, query, mode="vector", k=3)
        assert result.hits[0].memory.content == PARAPHRASES[query]
        assert server.base_url in result.embedder and LOCAL_MODEL in result.embedder
    sent = server.requests[-1]
    assert sent == {"model": LOCAL_MODEL, "input": [query], "dimensions": 256}
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"


def test_the_endpoint_answers_what_the_local_model_computes(server: EmbeddingServer, keyed: str) -> None:
    texts = [f"memory number {i}: {FACTS[i % len(FACTS)]}" for i in range(150)]
    remote = OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 128, batch=64).embed(texts)
    assert [len(r["input"]) for r in server.requests] == [64, 64, 22]  # batched
    assert np.allclose(np.array(remote), np.array(LocalEmbedder(128).embed(texts)), atol=1e-6)


def test_a_store_chroma_wrote_through_the_server_records_its_model_and_is_matched(
    tmp_path: Path, server: EmbeddingServer, keyed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """chromadb's own OpenAI embedding function, pointed at the loopback server, writes the
    vectors and records itself in the collection's configuration."""
    from chromadb.utils.embedding_functions import OpenAIEmbeddingFunction

    monkeypatch.setenv("CHROMA_OPENAI_API_KEY", KEY)
    monkeypatch.setenv("NO_PROXY", "*")
    path = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    ef = OpenAIEmbeddingFunction(model_name=LOCAL_MODEL, api_base=server.base_url)
    col = client.get_or_create_collection("facts", embedding_function=ef, metadata={"hnsw:space": "cosine"})
    col.add(ids=[f"f{i}" for i in range(len(FACTS))], documents=FACTS)  # embedded by chromadb, via HTTP
    assert server.requests and server.requests[0]["input"] == FACTS
    del col, client
    with open_store(path) as store:
        (recorded,) = store.recorded_embedders()
        assert recorded.model == LOCAL_MODEL and recorded.dimensions == 256
        assert "openai" in (recorded.recorded or "")
        with pytest.raises(EmbedderMismatchError, match="text-embedding-3-small.*wordllama-l2_supercat"):
            store.use_embedder(OpenAICompatibleEmbedder(server.base_url, "text-embedding-3-small", 256))
        store.use_embedder(OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL))  # dimensions from the answer
        assert _top(store, "food intolerance of a colleague") == FACTS[0]
        store.use_embedder(LocalEmbedder())  # the same model, run here: matched too
        assert _top(store, "name of our pet kitten") == FACTS[6]


def test_a_mem0_store_whose_embedder_was_the_served_model(tmp_path: Path, server: EmbeddingServer, keyed: str) -> None:
    """mem0 (its own OpenAI embedder, pointed at the server) writes the store; Mnemoscope
    searches it through the same endpoint. mem0 records no model, only the vectors' size."""
    require("mem0")
    root = tmp_path / "mem0"
    root.mkdir()
    run_owner(
        """
from mem0 import Memory
m = Memory.from_config({
    "vector_store": {"provider": "chroma", "config": {"collection_name": "mem0", "path": root + "/chroma"}},
    "history_db_path": root + "/history.db",
    "embedder": {"provider": "openai", "config": {"model": model, "api_key": key, "openai_base_url": url,
                                                  "embedding_dims": 256}},
})
for fact in facts:
    m.add(fact, user_id="dana", infer=False)
print(json.dumps(len(m.get_all(filters={"user_id": "dana"})["results"])))
""",
        root=str(root), mem0_dir=str(root / ".mem0"), model=LOCAL_MODEL, key=KEY, url=server.base_url, facts=FACTS,
    )
    assert any(r.get("dimensions") == 256 for r in server.requests)
    with open_store(root) as store:
        assert Kind.CHROMA in store.kinds and store.count() == len(FACTS)
        no_embedder = search(store, "financial planning meeting", mode="vector")
        assert no_embedder.mode == "keyword" and no_embedder.embedder is None
        with pytest.raises(EmbedderMismatchError, match="128 dimensions.*256 dimensions"):
            store.use_embedder(LocalEmbedder(128))
        store.use_embedder(OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 256))
        result = search(store, "financial planning meeting", mode="vector", k=3)
        assert result.hits[0].memory.content == FACTS[4]
        assert server.base_url in result.embedder


# -- refusals ----------------------------------------------------------------------------------


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


def test_a_wrong_key_is_one_clear_error_without_the_key(
    local_store: Path, server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "sk-wrong-9d2e7c1b5a3f4e6d"
    with open_store(local_store) as store:
        store.use_embedder(OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 256))
        monkeypatch.setenv(KEY_ENV, wrong)
        with pytest.raises(EmbedderError) as refused:
            search(store, "financial planning meeting", mode="vector")
        message = str(refused.value)
        assert "refused the API key (HTTP 401)" in message and secret_name(server.base_url) in message
        assert wrong not in message and wrong[:8] not in message and wrong[-6:] not in message
        assert refused.value.__cause__ is None and refused.value.__suppress_context__
        monkeypatch.delenv(KEY_ENV)
        with pytest.raises(EmbedderError, match="needs an API key"):
            search(store, "financial planning meeting", mode="vector")
    files = [p for p in local_store.rglob("*") if p.is_file()]
    assert files and not any(wrong.encode() in p.read_bytes() or KEY.encode() in p.read_bytes() for p in files)


def test_the_key_is_never_written_to_the_store(local_store: Path, server: EmbeddingServer, keyed: str) -> None:
    with open_store(local_store) as store:
        store.use_embedder(OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 256))
        search(store, "name of our pet kitten", mode="hybrid")
        info = json.dumps(store.info(), default=str)
    assert KEY not in info
    for path in local_store.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_an_unreachable_endpoint_is_one_clear_error() -> None:
    url = closed_port_url()
    with pytest.raises(EmbedderError, match=r"could not be reached \(Connection refused\)") as failed:
        OpenAICompatibleEmbedder(url, LOCAL_MODEL, 256).embed(["x"])
    assert url in str(failed.value)


def test_an_endpoint_that_answers_another_dimension_is_refused(keyed: str) -> None:
    with EmbeddingServer(KEY, honour_dimensions=False) as ignoring:
        with pytest.raises(EmbedderError, match="vectors of 256 dimensions .* where 128 were expected"):
            OpenAICompatibleEmbedder(ignoring.base_url, LOCAL_MODEL, 128).embed(["x"])


def test_an_unknown_model_and_a_slow_endpoint(server: EmbeddingServer, keyed: str) -> None:
    with pytest.raises(EmbedderError, match="does not serve model 'no-such-model'.*HTTP 404"):
        OpenAICompatibleEmbedder(server.base_url, "no-such-model").embed(["x"])
    import socket

    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        with pytest.raises(EmbedderError, match="did not answer within 0.5 s"):
            OpenAICompatibleEmbedder(f"http://127.0.0.1:{port}/v1", LOCAL_MODEL, timeout=0.5).embed(["x"])


def test_urls_with_credentials_are_refused_without_repeating_them() -> None:
    with pytest.raises(EmbedderError) as refused:
        OpenAICompatibleEmbedder("https://user:hunter2@example.invalid/v1", "m")
    assert "hunter2" not in str(refused.value) and "embeddings:https://example.invalid/v1" in str(refused.value)
    with pytest.raises(EmbedderError, match="Not an http"):
        OpenAICompatibleEmbedder("ftp://example.invalid", "m")


# -- settings and names --------------------------------------------------------------------------


def test_settings_keep_the_endpoint_and_dimensions_and_read_older_ones() -> None:
    settings = StoreSettings(embedder="text-embedding-3-small", embedder_url="http://127.0.0.1:1/v1", embedder_dimensions=512)
    again = StoreSettings.from_dict(json.loads(json.dumps(settings.to_dict())))
    assert again == settings
    older = StoreSettings.from_dict({"embedder": "mnemoscope-hashing-256"})
    assert older.embedder_url is None and older.embedder_dimensions is None
    assert isinstance(make_embedder(older.embedder), HashingEmbedder)
    remote = make_embedder(settings.embedder, settings.embedder_url, settings.embedder_dimensions)
    assert isinstance(remote, OpenAICompatibleEmbedder) and remote.dimensions == 512
    assert make_embedder("text-embedding-3-small") is None  # no endpoint: it does not run here
    assert isinstance(make_embedder(LOCAL_MODEL, dimensions=64), LocalEmbedder)


def test_model_names_match_across_spellings() -> None:
    assert same_model("sentence-transformers/all-MiniLM-L6-v2", "all-minilm-l6-v2")
    assert same_model("nomic-embed-text:latest", "nomic-embed-text")
    assert not same_model("text-embedding-3-small", "text-embedding-3-large")


def test_the_api_key_comes_from_the_keyring_under_the_name_the_cli_stores(
    local_store: Path, server: EmbeddingServer, secret_service, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    # As `mnemoscope credentials set embeddings:<URL>` stores it, spelled differently from the store's URL.
    remember(credential_name(f"embeddings:{server.base_url.replace('http://', 'HTTP://')}/"), KEY)
    with open_store(local_store) as store:
        store.use_embedder(OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 256))
        query = sorted(PARAPHRASES)[0]
        assert search(store, query, mode="vector", k=3).hits[0].memory.content == PARAPHRASES[query]
    assert server.headers[-1]["Authorization"] == f"Bearer {KEY}"
