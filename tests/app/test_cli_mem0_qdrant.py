"""mem0 on Qdrant's local mode through the command line: a SynthOrg data folder, one store per
agent, written by the real mem0ai library (tests/storage/formats/test_mem0_qdrant.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from formats.test_mem0_qdrant import AGENTS, build_synthorg, owner_view
from mnemoscope.app.cli import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.fixture(scope="module")
def synthorg(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_synthorg(tmp_path_factory.mktemp("synthorg") / "memory")


def test_each_agents_store_reads_on_the_command_line(capsys, synthorg: Path):
    ceo = str(synthorg / "ceo")
    info = run_json(capsys, "info", ceo)
    assert info["total"] == 2 and info["counts"]["channels"] == {"agent:ceo": 2}
    assert [(f["format"], f["label"]) for f in info["formats"]] == [("mem0", "SynthOrg (mem0 on Qdrant local)")]
    assert info["capabilities"]["mem0"]["editable_fields"] == ["content"]
    listed = run_json(capsys, "ls", ceo)
    assert {m["content"] for m in listed["memories"]} == set(AGENTS["ceo"])
    flask = next(m for m in listed["memories"] if "Flask" in m["content"])
    shown = run_json(capsys, "show", ceo, flask["id"])
    assert shown["source"]["format"] == "mem0" and (shown["channel"], shown["layer"]) == ("agent:ceo", "semantic")
    assert [h["event"] for h in shown["owner_history"]] == ["ADD"]
    found = run_json(capsys, "search", ceo, "approvals", "--mode", "keyword")
    assert [h["content"] for h in found["hits"]] == ["PRs require 2 approvals"]


def test_the_data_folder_names_the_agents_stores(capsys, synthorg: Path):
    assert main(["ls", str(synthorg)]) == 2
    err = capsys.readouterr().err
    assert f"{synthorg} is no memory store itself but holds 2: " in err
    assert str(synthorg / "ceo") in err and str(synthorg / "qa-lead") in err
    stores = run_json(capsys, "discover", str(synthorg))["stores"]
    assert [(Path(s["path"]).name, s["memories"]) for s in stores] == [("ceo", 2), ("qa-lead", 1)]


def test_edit_and_undo_on_the_command_line_reach_mem0(capsys, synthorg: Path, tmp_path: Path):
    agent = tmp_path / "qa-lead"
    shutil.copytree(synthorg / "qa-lead", agent)
    [memory] = run_json(capsys, "ls", str(agent))["memories"]
    key = memory["id"].rsplit(":", 1)[1]
    assert main(["edit", str(agent), memory["id"], "--content", "The QA lead wants short test plans"]) == 0
    capsys.readouterr()
    view = owner_view(agent, key, collection="synthorg_memories")
    assert view["one"]["memory"] == "The QA lead wants short test plans"
    assert main(["undo", str(agent)]) == 0
    capsys.readouterr()
    assert owner_view(agent, key, collection="synthorg_memories")["one"]["memory"] == "The QA lead prefers detailed test plans"
