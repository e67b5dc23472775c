"""The command line on a five-layer agent's workspace: the markdown and its structured facts DB as one store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from formats.test_facts_db import build_facts_workspace

from mnemoscope.app.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main([str(a) for a in argv] + ["--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_info_ls_search_edit_and_undo_on_the_facts_workspace(capsys, tmp_path: Path) -> None:
    workspace = build_facts_workspace(tmp_path / "workspace")
    info = run(capsys, "info", workspace)
    assert {f["format"] for f in info["formats"]} == {"facts-db"} and info["total"] == 9
    facts = [m for m in run(capsys, "ls", workspace, "--limit", "50")["memories"] if m["source"].get("format") == "facts-db"]
    assert len(facts) == 4
    cat = next(m for m in facts if m["content"] == "My cat's name is Whiskerino")
    assert cat["tags"] == ["preference"] and cat["access_count"] == 7
    hits = run(capsys, "search", workspace, "Whiskerino salmon", "--mode", "keyword")["hits"]
    assert hits and hits[0]["content"] == "Whiskerino eats salmon on Fridays"
    run(capsys, "edit", workspace, cat["id"], "--content", "My cat's name is Whiskerina")
    db = workspace / "facts.db"
    assert sqlite3.connect(db).execute("SELECT value FROM facts WHERE id = 'fact_cat'").fetchone() == (
        "My cat's name is Whiskerina",)
    run(capsys, "undo", workspace)
    assert sqlite3.connect(db).execute("SELECT value FROM facts WHERE id = 'fact_cat'").fetchone() == (
        "My cat's name is Whiskerino",)
