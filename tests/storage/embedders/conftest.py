"""Fixtures of the embedder tests: a Chroma directory the local model wrote, the real loopback
embeddings server, and the endpoint's key in the environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.embedding_facts import FACTS, KEY, chroma_facts
from helpers.embedding_server import EmbeddingServer
from mnemoscope.storage.embedders.openai_compatible import KEY_ENV


@pytest.fixture
def local_store(tmp_path: Path) -> Path:
    """Vectors written by the local model (256 dimensions), nothing recorded about it."""
    from mnemoscope.storage.embedders.local import LocalEmbedder

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


