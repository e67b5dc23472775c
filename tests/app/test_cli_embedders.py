"""`mnemoscope embedder`: set a store's embedder (an OpenAI-compatible endpoint, the local
model, the hashing one), refused when it is not the model of the store's vectors; `search`
says which embedder ranked its results. Against a real loopback server and real Chroma."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli_runs import run
from helpers.embedding_server import EmbeddingServer, closed_port_url
from mnemoscope.storage.embedders.openai_compatible import KEY_ENV

pytest.importorskip("wordllama", reason="the local embedder comes with the install (pyproject dependencies)")

from helpers.embedding_facts import FACTS, KEY, chroma_facts  # noqa: E402
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder  # noqa: E402


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "chroma"
    chroma_facts(path, LocalEmbedder().embed(FACTS))
    return path


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    with EmbeddingServer(KEY) as running:
        yield running


def test_search_through_the_endpoint_names_the_embedder(capsys, store: Path, server: EmbeddingServer) -> None:
    code, out, err = run(capsys, "embedder", store, "--openai-compatible", server.base_url + "/", "--model", LOCAL_MODEL,
                         "--dimensions", 256)
    assert code == 0, err
    assert f"embedder {LOCAL_MODEL}, 256 dimensions at {server.base_url}\n" in out
    assert "agent-facts" in out and "256" in out
    code, out, err = run(capsys, "search", store, "musician performing classical music", "--mode", "vector", "--k", 3)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "mode: vector"
    assert lines[1].startswith("score: relevance 0-1, 0.5 and above a match: how far the memory's cosine")
    assert lines[2].startswith(f"ranked by: {LOCAL_MODEL}, 256 dimensions (OpenAI-compatible endpoint {server.base_url}")
    assert lines[3].startswith("matches: ")
    assert FACTS[8][:40] in lines[6]  # the first row under the table's header and its rule
    data = json.loads(run(capsys, "search", store, "name of our pet kitten", "--mode", "vector", "--json")[1])
    assert data["hits"][0]["content"] == FACTS[6] and server.base_url in data["embedder"]
    assert KEY not in out and all(KEY.encode() not in p.read_bytes() for p in store.rglob("*") if p.is_file())


def test_the_local_embedder_and_clearing_it(capsys, store: Path) -> None:
    code, out, err = run(capsys, "embedder", store, "--local")
    assert code == 0, err
    assert f"embedder {LOCAL_MODEL}, 256 dimensions\n" in out
    data = json.loads(run(capsys, "embedder", store, "--json")[1])
    assert data["embedder"] == {"model": LOCAL_MODEL, "url": None, "dimensions": 256} and data["runs_here"]
    assert data["collections"] == [{"collection": "agent-facts", "model": None, "dimensions": 256, "recorded": None}]
    code, out, err = run(capsys, "search", store, "financial planning meeting", "--mode", "vector")
    assert code == 0 and "ranked by: wordllama-l2_supercat, 256 dimensions (local, offline" in out
    assert FACTS[4][:40] in out.splitlines()[6]
    code, out, _ = run(capsys, "embedder", store, "--clear")
    assert code == 0 and "no embedder set" in out
    code, out, err = run(capsys, "search", store, "financial planning meeting", "--mode", "vector")
    assert code == 0 and "ranked by" not in out and "cannot be embedded" in err and "mode: keyword" in out


def test_a_mismatched_embedder_is_refused_and_nothing_is_saved(capsys, store: Path, server: EmbeddingServer) -> None:
    code, _, err = run(capsys, "embedder", store, "--local", "--dimensions", 128)
    assert code == 1 and err.count("\n") == 1
    assert "wordllama-l2_supercat, 128 dimensions" in err and "256 dimensions" in err
    code, _, err = run(capsys, "embedder", store, "--hashing", "--dimensions", 64)
    assert code == 1 and "mnemoscope-hashing-64, 64 dimensions" in err
    code, _, err = run(capsys, "embedder", store, "--openai-compatible", server.base_url, "--model", LOCAL_MODEL,
                       "--dimensions", 64)
    assert code == 1 and "64 dimensions" in err and "256 dimensions" in err
    data = json.loads(run(capsys, "embedder", store, "--json")[1])
    assert data["embedder"] is None


def test_endpoint_failures_are_one_line_without_the_key(
    capsys, store: Path, server: EmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "sk-cli-wrong-0a9b8c7d6e5f"
    monkeypatch.setenv(KEY_ENV, wrong)
    code, out, err = run(capsys, "embedder", store, "--openai-compatible", server.base_url, "--model", LOCAL_MODEL)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "refused the API key (HTTP 401)" in err and f"embeddings:{server.base_url}" in err
    assert wrong not in err and wrong[:8] not in err
    code, _, err = run(capsys, "embedder", store, "--openai-compatible", closed_port_url(), "--model", LOCAL_MODEL)
    assert code == 2 and "could not be reached" in err
    code, _, err = run(capsys, "embedder", store, "--openai-compatible", server.base_url)
    assert code == 2 and "needs the endpoint's URL and a model name" in err
    assert json.loads(run(capsys, "embedder", store, "--json")[1])["embedder"] is None


def test_the_demo_says_its_embedder_is_the_local_semantic_model(capsys, demo_path: Path) -> None:
    code, out, _ = run(capsys, "search", demo_path, "caching", "--mode", "hybrid")
    assert code == 0 and f"ranked by: {LOCAL_MODEL}, 256 dimensions (local, offline" in out and "semantic" in out
    code, out, _ = run(capsys, "embedder", demo_path)
    assert code == 0 and f"embedder {LOCAL_MODEL}, 256 dimensions" in out and "semantic" in out
