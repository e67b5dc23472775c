"""Stores on servers: a URL's mistakes are refused before any server is asked (a path given
vectors, --vectors that is not a Chroma server, two Chroma servers), and on real loopback servers
a workspace made on PostgreSQL with its vectors on Chroma reopens as one from its URL alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import helpers.chroma_server
import pytest
from helpers.chroma_server import ChromaServer
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import open_store
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import UnreadableStoreError
from mnemoscope.storage.model import Kind
from mnemoscope.storage.opening import create_workspace, open_location

chroma_server = helpers.chroma_server.chroma_server  # the session fixture: one real `chroma run`
# Nothing listens here: a test that reached a server would fail to connect, not pass.
NOBODY = "http://127.0.0.1:9"


def test_a_path_with_vectors_on_a_server_is_refused_naming_what_goes_together(demo_path: Path) -> None:
    with pytest.raises(UnreadableStoreError, match="is a path: a Chroma server's vectors go with a PostgreSQL store"):
        open_store(demo_path, vectors=NOBODY)
    with pytest.raises(UnreadableStoreError, match="is a path"):
        open_location(str(demo_path), NOBODY, read_only=True, credentials=None)


def test_vectors_must_be_a_chroma_servers_url(tmp_path: Path) -> None:
    for vectors in (str(tmp_path / "vectors"), "postgresql+psycopg://dana@127.0.0.1:9/agent"):
        with pytest.raises(UnreadableStoreError, match=r"--vectors takes a Chroma server's URL \(http\(s\)://HOST:PORT\)"):
            open_location("postgresql+psycopg://dana@127.0.0.1:9/agent", vectors, read_only=True, credentials=None)


def test_a_chroma_server_given_vectors_of_another_is_refused() -> None:
    with pytest.raises(UnreadableStoreError, match="is a Chroma server already: give --vectors with a PostgreSQL store"):
        open_store(NOBODY, vectors="http://127.0.0.1:10")


def test_an_unknown_kind_of_url_is_refused_with_the_kinds_there_are() -> None:
    with pytest.raises(UnreadableStoreError, match="does not open ftp:// stores") as refused:
        open_store("ftp://127.0.0.1/agent")
    assert "postgresql+psycopg://USER@HOST/DATABASE" in str(refused.value)


@pytest.fixture
def database(postgres_server: Any, request: pytest.FixtureRequest) -> Iterator[str]:  # noqa: F811
    name = "opening_servers_" + request.node.name[-20:].lower()
    postgres_server.create_database(name)
    yield postgres_server.url(name)
    postgres_server.drop_database(name)


def test_a_workspace_on_servers_reopens_as_one_from_its_url(database: str, chroma_server: ChromaServer) -> None:
    chroma_server.reset()
    try:
        with create_workspace(database, HashingEmbedder(), vectors=chroma_server.url) as store:
            assert store.kinds == [Kind.POSTGRESQL, Kind.CHROMA]
            assert store.settings.vectors_url == chroma_server.url
            memory_id = store.add_memory("Dana prefers tea", channel="_global")
            location = store.location
        password = urlsplit(database).password
        assert password and password not in location  # a store's location is its URL without the secret
        with open_store(database) as store:  # the store names its Chroma server: both open
            assert store.kinds == [Kind.POSTGRESQL, Kind.CHROMA]
            assert store.opened_as[1] == chroma_server.url
            assert store.get(memory_id).content == "Dana prefers tea"
            assert store.embedding_of(memory_id) is not None
    finally:
        chroma_server.reset()
