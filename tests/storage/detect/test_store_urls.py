"""Store locations: paths as always, sqlite:// spellings of paths, server URLs whose secrets never
reach the text that is shown and saved."""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemoscope.storage import UnreadableStoreError, open_store
from mnemoscope.storage.detect.store_urls import (
    CHROMA_SERVER,
    PATH,
    POSTGRESQL,
    REDIS,
    LocationError,
    parse_location,
    server_folder,
)


@pytest.mark.parametrize("text, expected", [
    ("sqlite:///relative/memory.db", Path("relative/memory.db")),
    ("sqlite:////srv/agents/memory.db", Path("/srv/agents/memory.db")),
    ("/srv/agents", Path("/srv/agents")),
    ("agents/demo", Path("agents/demo")),
])
def test_paths_and_sqlite_urls_are_paths(text: str, expected: Path) -> None:
    location = parse_location(text)
    assert (location.kind, location.path, location.is_server) == (PATH, expected, False)


def test_a_home_folder_path_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert parse_location("~/agents").path == tmp_path / "agents"


@pytest.mark.parametrize("text, kind, shown", [
    ("postgresql+psycopg://bob:hunter2@db.example/agents", POSTGRESQL, "postgresql+psycopg://bob@db.example/agents"),
    ("postgresql://bob@db.example:5433/agents", POSTGRESQL, "postgresql://bob@db.example:5433/agents"),
    ("postgres://db.example/agents?sslmode=require&password=hunter2", POSTGRESQL,
     "postgres://db.example/agents?sslmode=require"),
    ("http://127.0.0.1:8000", CHROMA_SERVER, "http://127.0.0.1:8000"),
    ("https://chroma.example/?tenant=t1&database=d1&collection=facts&token=hunter2", CHROMA_SERVER,
     "https://chroma.example/?tenant=t1&database=d1&collection=facts"),
    ("redis://:hunter2@cache.example:6379/0", REDIS, "redis://cache.example:6379/0"),
    ("rediss://agentx:hunter2@cache.example/2", REDIS, "rediss://agentx@cache.example/2"),
    ("unix:///run/redis/redis.sock?db=1&password=hunter2", REDIS, "unix:///run/redis/redis.sock?db=1"),
])
def test_a_server_url_is_shown_without_its_secret(text: str, kind: str, shown: str) -> None:
    location = parse_location(text)
    assert (location.kind, location.text, location.is_server) == (kind, shown, True)
    assert "hunter2" not in location.text + repr(location)
    if "hunter2" in text:
        assert location.secret is not None and location.secret.reveal() == "hunter2"


def test_the_driver_url_carries_the_password_and_the_psycopg_driver() -> None:
    location = parse_location("postgresql://bob:p%40ss@db.example:5433/agents")
    assert location.driver_url() == "postgresql+psycopg://bob:p%40ss@db.example:5433/agents"
    assert parse_location("postgresql://bob@db.example/agents").driver_url() == "postgresql+psycopg://bob@db.example/agents"


@pytest.mark.parametrize("text, says", [
    ("ftp://example.org/memories", "does not open ftp:// stores"),
    ("postgresql+psycopg://bob@db.example", "names no database"),
    ("http:///collection", "names no server"),
    ("sqlite://", "names no file"),
    ("unix://redis.sock", "names no socket"),
    ("bolt://neo4j:hunter2@graph.example:7687", "Neo4j cannot be read here: bolt://neo4j@graph.example:7687"),
    ("neo4j+s://graph.example", "Neo4j cannot be read here"),
])
def test_a_url_naming_nothing_openable_is_refused_with_what_to_write(text: str, says: str) -> None:
    with pytest.raises(LocationError, match=says):
        parse_location(text)
    with pytest.raises(UnreadableStoreError, match=says):
        open_store(text)


def test_vectors_go_with_a_server_store_only(demo_path: Path) -> None:
    with pytest.raises(UnreadableStoreError, match="is a path"):
        open_store(demo_path, vectors="http://127.0.0.1:9")
    with pytest.raises(UnreadableStoreError, match="takes a Chroma server's URL"):
        open_store("postgresql+psycopg://bob@127.0.0.1:9/agents", vectors=str(demo_path))


def test_each_server_gets_its_own_folder_in_the_data_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path))
    one = server_folder(parse_location("postgresql+psycopg://bob:pw1@db.example/agents"))
    same = server_folder(parse_location("postgresql+psycopg://bob:pw2@db.example/agents"))
    other = server_folder(parse_location("postgresql+psycopg://bob@db.example/other"))
    assert one == same != other
    assert one.parent == tmp_path / "servers"
    assert not one.exists()  # made when first written, never by a read
