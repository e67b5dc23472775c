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


def test_an_id_longer_than_any_store_gives_is_refused_quickly_and_shown_cut(demo_path: Path, capsys) -> None:
    """A 100,000-character id (a paste gone wrong) is refused before the store is opened: exit 2,
    one line, its start and length, never the id whole."""
    import time

    from mnemoscope.app.arguments import MAX_ID
    from mnemoscope.app.cli import main

    long_id = "m-" + "a" * 100_000
    for argv in (["show", str(demo_path), long_id], ["rm", str(demo_path), "m-1", long_id],
                 ["search", str(demo_path), "--like", long_id], ["history", str(demo_path), "--id", long_id]):
        started = time.monotonic()
        assert main(argv) == 2
        assert time.monotonic() - started < 0.5
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("mnemoscope: an id of 100,002 characters")
        assert len(err) < 300 and "m-aaaa" in err
    capsys.readouterr()
    assert main(["show", str(demo_path), "m-" + "a" * (MAX_ID - 2)]) == 1  # as long as a store's may be: looked up
    assert "No memory" in capsys.readouterr().err
