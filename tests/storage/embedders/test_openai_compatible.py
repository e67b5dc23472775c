"""An OpenAI-compatible endpoint (a real loopback server computing embeddings with the local
model): it finds what the local model finds, Chroma's and mem0's own clients writing through it
are matched, its key comes from the keyring or the environment and is never written or repeated,
and every failure of the endpoint is one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from helpers.embedding_facts import FACTS, KEY, PARAPHRASES, top_hit
from helpers.embedding_server import EmbeddingServer, closed_port_url
from helpers.keyring_daemon import keyring_daemon, secret_service  # noqa: F401
from helpers.owners import require, run_owner
from mnemoscope.storage import Kind, open_store
from mnemoscope.storage.credentials import credential_name, remember
from mnemoscope.storage.embedders.base import EmbedderError, EmbedderMismatchError
from mnemoscope.storage.embedders.openai_compatible import (
    KEY_ENV,
    OpenAICompatibleEmbedder,
    api_key,
    normalized_url,
    secret_name,
)
from mnemoscope.storage.views.search import search

pytest.importorskip("wordllama", reason="the local embedder comes with the install (pyproject dependencies)")
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder  # noqa: E402


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
        assert top_hit(store, "food intolerance of a colleague") == FACTS[0]
        store.use_embedder(LocalEmbedder())  # the same model, run here: matched too
        assert top_hit(store, "name of our pet kitten") == FACTS[6]


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



def test_an_endpoints_url_is_stored_plain_and_its_key_named_by_it() -> None:
    assert normalized_url(" http://127.0.0.1:8080/v1/ ") == "http://127.0.0.1:8080/v1"
    assert secret_name("http://127.0.0.1:8080/v1/") == secret_name("http://127.0.0.1:8080/v1")
    assert secret_name("http://127.0.0.1:8080/v1") != secret_name("http://127.0.0.1:8081/v1")
    with pytest.raises(EmbedderError, match="Not an http"):
        normalized_url("127.0.0.1:8080")


def test_the_key_is_taken_from_the_environment_when_no_keyring_holds_one(monkeypatch: pytest.MonkeyPatch) -> None:
    url = closed_port_url()
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert api_key(url) is None
    monkeypatch.setenv(KEY_ENV, KEY)
    assert api_key(url) == KEY


def test_an_embedder_says_what_it_asks_and_refuses_a_bad_setup(server: EmbeddingServer, keyed: str) -> None:
    embedder = OpenAICompatibleEmbedder(server.base_url + "/", LOCAL_MODEL)
    assert embedder.base_url == server.base_url and embedder.dimensions is None
    assert server.requests == []  # nothing is sent until it embeds
    assert len(embedder.embed(["x"])[0]) == 256 and embedder.dimensions == 256
    assert f"{LOCAL_MODEL}, 256 dimensions" in embedder.label and server.base_url in embedder.label
    with pytest.raises(EmbedderError, match="needs a model name"):
        OpenAICompatibleEmbedder(server.base_url, "")
    with pytest.raises(EmbedderError, match="must be positive, not 0"):
        OpenAICompatibleEmbedder(server.base_url, LOCAL_MODEL, 0)
