"""app/arguments.py: a store argument keeps a server's URL as written and makes anything else a path."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.app.arguments import STORE_HELP, store_argument


def test_a_url_stays_text_and_a_path_becomes_a_path() -> None:
    url = "postgresql+psycopg://bob@db.example//agents"
    assert store_argument(url) == url  # a Path would fold its "//"
    assert store_argument("http://chroma:8000/?collection=facts") == "http://chroma:8000/?collection=facts"
    assert store_argument("~/memory//MEMORY.md") == Path("~/memory/MEMORY.md")
    assert isinstance(store_argument("relative"), Path)
    assert "postgresql+psycopg://" in STORE_HELP and "http(s)://" in STORE_HELP
