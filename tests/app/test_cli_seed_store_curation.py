"""The command line on the seed systems' own stores (issue 11), where the other CLI tests stop at
reading: counts and facets, a curation step that reaches the owner's files, and its undo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from formats.test_agenticx import build_agenticx_history, listed_sessions, summaries
from formats.test_agentix import build_agentix
from helpers.store_state import state_of
from mnemoscope.app.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def run_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict:
    return json.loads(run(capsys, *argv, "--json"))


def test_agentix_counts_scopes_and_sub_agents_then_edit_delete_and_undo(
    capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, home = build_agentix(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = state_of(project), state_of(home / ".agentix")
    info = run_json(capsys, "info", project)
    assert info["total"] == 7
    assert info["counts"]["channels"] == {"main": 3, "project/researcher": 2, "local/researcher": 1, "user/writer": 1}
    # one sub-agent across its scopes: both of its channels
    researcher = run_json(capsys, "ls", project, "--channel", "project/researcher", "--channel", "local/researcher")
    assert {(m["metadata"]["scope"], m["metadata"]["agent"]) for m in researcher["memories"]} == {
        ("project", "researcher"), ("local", "researcher")} and researcher["total"] == 3

    listed = run_json(capsys, "ls", project, "--limit", "50")["memories"]
    findings = next(m for m in listed if m["metadata"]["file"] == "findings.yaml")
    style = next(m for m in listed if m["channel"] == "user/writer")
    run(capsys, "edit", project, findings["id"], "--content", "night_train: false\n")
    assert (project / ".agentix/agent-memory/researcher/findings.yaml").read_text() == "night_train: false\n"
    run(capsys, "rm", project, style["id"])
    assert not (home / ".agentix/agent-memory/writer/style.md").exists()
    assert run_json(capsys, "info", project)["counts"]["channels"].get("user/writer", 0) == 0
    run(capsys, "undo", project)
    run(capsys, "undo", project)
    assert (state_of(project), state_of(home / ".agentix")) == before


def test_agenticx_summary_edit_and_delete_with_undo_read_back_as_agenticx_reads_them(capsys, tmp_path: Path) -> None:
    home = build_agenticx_history(tmp_path)
    db = home / "memory" / "sessions.sqlite"
    info = run_json(capsys, "info", home)
    # every status: the index's chunk of a file AgenticX deleted is listed as deleted, not active
    assert info["counts"]["statuses"] == {"active": 15, "deleted": 1}
    assert info["counts"]["channels"] == {"travel": 1, "s1": 2, "s2": 1, "_global": 12}
    listed = run_json(capsys, "ls", home, "--channel", "s1")["memories"]
    planned = next(m for m in listed if m["content"] == "Planned the Porto trip")
    run(capsys, "edit", home, planned["id"], "--content", "Planned the Porto trip in May")
    assert summaries(db, "May") == [("sum-1", "Planned the Porto trip in May")]
    run(capsys, "rm", home, planned["id"])
    assert [r[0] for r in summaries(db)] == ["sum-3", "sum-2"] and listed_sessions(db) == ["s2", "s1"]
    run(capsys, "undo", home)
    run(capsys, "undo", home)
    assert summaries(db, "Planned") == [("sum-1", "Planned the Porto trip")]


def test_mem0_qdrant_delete_and_undo_on_the_command_line_read_back_by_mem0(capsys, tmp_path: Path) -> None:
    from formats.test_mem0_qdrant import build_synthorg, owner_view

    data = build_synthorg(tmp_path / "synthorg")
    ceo = tmp_path / "ceo"
    shutil.copytree(data / "ceo", ceo)
    listed = run_json(capsys, "ls", ceo)["memories"]
    flask = next(m for m in listed if "Flask" in m["content"])
    key = flask["id"].rsplit(":", 1)[1]
    run(capsys, "rm", ceo, flask["id"])
    seen = owner_view(ceo, key, collection="synthorg_memories")
    assert seen["one"] is None and [h["event"] for h in seen["history"]] == ["ADD", "DELETE"]
    assert run_json(capsys, "info", ceo)["counts"]["channels"] == {"agent:ceo": 1}
    run(capsys, "undo", ceo)
    assert owner_view(ceo, key, collection="synthorg_memories")["one"]["memory"] == "The team chose Litestar over Flask"
    assert run_json(capsys, "info", ceo)["counts"]["channels"] == {"agent:ceo": 2}
