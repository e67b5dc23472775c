"""The command line on servers: the native store on a real PostgreSQL, its vectors on a real
`chroma run`, alone and combined, giving what the same commands give on a local workspace
holding the same data; and no password anywhere Mnemoscope wrote or printed.

Each command runs as its own process, with MNEMOSCOPE_HOME in tmp_path.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers.chroma_server import ChromaServer, chroma_server, copy_to_server  # noqa: F401
from helpers.cli_process import Cli
from helpers.postgres_server import PostgresServer, postgres_server  # noqa: F401


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home")


@pytest.fixture
def database(postgres_server: PostgresServer) -> tuple[str, str]:  # noqa: F811
    """A new empty database: its URL with the password, and without."""
    name = "cli_" + uuid.uuid4().hex[:10]
    return postgres_server.create_database(name), postgres_server.url(name, password=False)


@pytest.fixture
def stores(cli: Cli, tmp_path: Path, database: tuple[str, str], chroma_server: ChromaServer) -> dict[str, list[str]]:  # noqa: F811
    """The demo imported three ways: a local workspace, PostgreSQL alone, PostgreSQL + Chroma server."""
    chroma_server.reset()
    url, _clean = database
    cli("demo", str(tmp_path / "demo"))
    local = tmp_path / "local"
    cli("import", str(tmp_path / "demo"), str(local))
    collection = chroma_server.url  # the native collection, "memories" (reset above)
    combined_db = database[0].rsplit("/", 1)[0] + "/" + _new_database(database)
    cli("import", str(tmp_path / "demo"), url)
    cli("import", str(tmp_path / "demo"), combined_db, "--vectors", collection)
    return {"local": [str(local)], "postgresql": [url], "combined": ["--vectors", collection, combined_db]}


def _new_database(database: tuple[str, str]) -> str:
    import psycopg

    name = "cli_" + uuid.uuid4().hex[:10]
    with psycopg.connect(database[0].replace("postgresql+psycopg", "postgresql"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def _rows(listing: Any) -> list[tuple[Any, ...]]:
    """The memories listed, as a sorted list: each import gives new ids and one import time, so
    rows tie in every order (the storage tests compare orders on identical rows)."""
    return sorted((m["content"], m["channel"], m["layer"], m["status"]) for m in listing["memories"])


@pytest.mark.parametrize("where", ["postgresql", "combined"])
def test_reading_commands_give_what_the_local_workspace_gives(cli: Cli, stores: dict[str, list[str]], where: str) -> None:
    local, server = stores["local"], stores[where]
    for args in (["ls", "--order", "created", "--limit", "500"], ["ls", "--channel", "webshop", "--order", "salience", "--limit", "500"],
                 ["ls", "--contains", "stripe", "--limit", "500"]):
        assert _rows(cli.json(*args[:1], *server, *args[1:])) == _rows(cli.json(*args[:1], *local, *args[1:]))
    local_info, server_info = cli.json("info", *local), cli.json("info", *server)
    for key in ("channels", "layers", "statuses", "total"):
        assert server_info["counts"][key] == local_info["counts"][key], key
    # the same bins, each row of memory.db counted as a sqlite row there and a postgresql row here
    server_bins = cli.json("timeline", *server, "--bin", "week")["bins"]
    local_bins = cli.json("timeline", *local, "--bin", "week")["bins"]
    assert [{**b, "counts": {"sqlite" if k == "postgresql" else k: n for k, n in b["counts"].items()}}
            for b in server_bins] == local_bins
    assert any("postgresql" in b["counts"] for b in server_bins)
    found = cli.json("search", *server, "stripe payments", "--mode", "keyword")
    assert found["hits"] and sorted(hit["content"] for hit in found["hits"]) == \
        sorted(hit["content"] for hit in cli.json("search", *local, "stripe payments", "--mode", "keyword")["hits"])
    # The store's decay at the same moment (at_risk ties on salience, so its cut differs by id).
    at = ["--at", "2026-12-31"]
    assert cli.json("salience", *server, *at)["histogram"] == cli.json("salience", *local, *at)["histogram"]


def test_curation_and_undo_on_a_server_store(cli: Cli, stores: dict[str, list[str]]) -> None:
    server = stores["combined"]
    first = cli.json("ls", *server, "--contains", "Stripe in test mode")["memories"][0]
    cli("edit", *server, first["id"], "--content", "webshop payments go through Stripe live since launch.")
    assert cli.json("show", *server, first["id"])["content"].endswith("live since launch.")
    nearest = cli.json("search", *server, "Stripe live since launch", "--mode", "vector")
    assert nearest["mode"] == "vector" and nearest["hits"][0]["id"] == first["id"]
    cli("rm", *server, first["id"])
    assert cli.json("show", *server, first["id"])["status"] == "deleted"
    cli("undo", *server)
    cli("undo", *server)
    assert cli.json("show", *server, first["id"])["content"] == first["content"]
    project = cli.json("ls", *server, "--channel", "webshop", "--limit", "1")["memories"][0]
    cli("promote", *server, project["id"], "--force")
    assert [entry["operation"] for entry in cli.json("history", *server)["entries"]][:1] == ["promote"]


def test_no_password_is_printed_or_written(cli: Cli, stores: dict[str, list[str]], database: tuple[str, str],
                                           postgres_server: PostgresServer, tmp_path: Path) -> None:  # noqa: F811
    url, clean = database
    wrong = cli("info", clean, "--password-stdin", stdin="not-the-password\n", code=2)
    assert "refused" in wrong.stderr and "not-the-password" not in wrong.stderr
    cli("info", clean, "--password-stdin", stdin=postgres_server.password + "\n")
    cli("ls", url)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written  # the demo, the local workspace: Mnemoscope did write there
    for path in written:
        assert postgres_server.password.encode() not in path.read_bytes(), path
    for text in cli.printed:
        assert postgres_server.password not in text


def test_a_chroma_server_alone_reads_as_the_same_local_directory_and_is_curated(
    cli: Cli, chroma_server: ChromaServer, chroma_only: Path, tmp_path: Path  # noqa: F811
) -> None:
    chroma_server.reset()
    copy_to_server(chroma_only, chroma_server, tmp_path)
    server, local = [chroma_server.url], [str(chroma_only)]
    listing = ["ls", "--limit", "500"]
    assert _rows(cli.json(*listing[:1], *server, *listing[1:])) == _rows(cli.json(*listing[:1], *local, *listing[1:]))
    assert cli.json("info", *server)["counts"] == cli.json("info", *local)["counts"]
    assert cli.json("timeline", *server, "--bin", "week")["bins"] == cli.json("timeline", *local, "--bin", "week")["bins"]
    query = ["search", "stripe payments", "--mode", "keyword"]
    assert sorted(h["content"] for h in cli.json(query[0], *server, *query[1:])["hits"]) == \
        sorted(h["content"] for h in cli.json(query[0], *local, *query[1:])["hits"])

    first = cli.json("ls", *server, "--contains", "Stripe", "--limit", "1")["memories"][0]
    cli("edit", *server, first["id"], "--content", "Stripe is live.")
    assert cli.json("show", *server, first["id"])["content"] == "Stripe is live."
    cli("rm", *server, first["id"])
    assert cli.json("show", *server, first["id"])["status"] == "deleted"
    cli("undo", *server)
    cli("undo", *server)
    assert cli.json("show", *server, first["id"])["content"] == first["content"]
    assert [e["operation"] for e in cli.json("history", *server)["entries"]][:4] == ["undo", "undo", "delete", "edit"]


def test_a_postgresql_store_remembers_its_chroma_server(cli: Cli, stores: dict[str, list[str]]) -> None:
    _flag, vectors, database = stores["combined"]
    alone = cli.json("info", database)
    assert alone["path"] == f"{_without_password(database)} + {vectors}"
    assert alone["kinds"] == ["postgresql", "chroma"]
    assert alone["settings"]["vectors_url"] == vectors
    assert cli.json("info", *stores["postgresql"])["kinds"] == ["postgresql"]


def _without_password(url: str) -> str:
    from mnemoscope.storage.credentials import redacted

    return redacted(url)
