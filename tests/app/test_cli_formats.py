"""The read commands on a store another tool wrote, through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from helpers.owners import require, run_owner

BUILD = """
import asyncio
from agents import SQLiteSession
async def main():
    s = SQLiteSession("trip-1", db)
    await s.add_items([{"role": "user", "content": "Find a quiet hotel in Porto"},
                       {"role": "assistant", "content": "Casa do Rio has quiet rooms."}])
asyncio.run(main())
print(json.dumps("ok"))
"""


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.fixture
def agents_db(tmp_path: Path) -> Path:
    require("agents")
    db = tmp_path / "agent.db"
    run_owner(BUILD, db=str(db))
    return db


def test_every_read_command_answers_on_an_agents_session(capsys, agents_db: Path):
    db = str(agents_db)
    info = run_json(capsys, "info", db)
    assert info["total"] == 2 and info["formats"][0]["format"] == "openai-agents"
    assert info["capabilities"]["openai-agents"]["editable_fields"] == ["content"]
    listed = run_json(capsys, "ls", db)
    assert {m["content"] for m in listed["memories"]} == {"Find a quiet hotel in Porto", "Casa do Rio has quiet rooms."}
    first = next(m for m in listed["memories"] if m["content"].startswith("Find"))
    shown = run_json(capsys, "show", db, first["id"])
    assert shown["source"]["format"] == "openai-agents" and shown["metadata"]["role"] == "user"
    found = run_json(capsys, "search", db, "quiet hotel", "--mode", "keyword")
    assert found["hits"][0]["id"] == first["id"]
    timeline = run_json(capsys, "timeline", db)
    assert sum(b["memories"] for b in timeline["bins"]) == 2
    assert sum(b["turns"] for b in timeline["bins"]) == 0  # the items are the memories, not counted twice
    sessions = run_json(capsys, "sessions", db)
    assert [(s["id"], s["turn_count"]) for s in sessions["sessions"]] == [("trip-1", 2)]
    turns = run_json(capsys, "sessions", db, "--session", "trip-1")
    assert [t["role"] for t in turns["turns"]] == ["user", "assistant"]
    pad = run_json(capsys, "scratchpad", db)
    assert [s["id"] for s in pad["sessions"]] == ["trip-1"]


def test_claude_memory_directory_edit_through_the_cli(capsys, tmp_path: Path):
    memories = tmp_path / "memories"
    memories.mkdir()
    (memories / "notes.md").write_text("Dana prefers tea\n")
    run_json(capsys, "edit", str(memories), "claude:notes.md", "--content", "Dana prefers green tea")
    assert (memories / "notes.md").read_text() == "Dana prefers green tea\n"
    code = main(["promote", str(memories), "claude:notes.md"])
    assert code == 1
    assert "no project and global channels" in capsys.readouterr().err
    run_json(capsys, "undo", str(memories))
    assert (memories / "notes.md").read_text() == "Dana prefers tea\n"


def _tool_stores():
    from formats.test_agenticx import build_agenticx_home
    from formats.test_crewai import build_crewai_storage
    from formats.test_letta import build_letta_home
    from formats.test_openclaw import build_openclaw_state

    # builder, memories, a keyword and the memory it finds, a session with scratchpad keys
    return {
        "agenticx": (build_agenticx_home, 7, "tax", "Reviewed the tax forms", "s1"),
        "openclaw": (build_openclaw_state, 9, "Porto-Lisbon", "Booked the Porto-Lisbon train.", None),  # + 2 transcript chunks
        "crewai": (build_crewai_storage, 4, "fastest", "The 9:00 train is fastest", None),
        "letta": (build_letta_home, 3, "careful", "I am a careful travel agent.", None),
    }


@pytest.mark.parametrize("name", ["agenticx", "openclaw", "crewai", "letta"])
def test_read_commands_on_each_tool_store(capsys, tmp_path: Path, name: str):
    build, total, word, hit, scratch_session = _tool_stores()[name]
    path = str(build(tmp_path))
    info = run_json(capsys, "info", path)
    assert info["total"] == total and info["formats"]
    listed = run_json(capsys, "ls", path, "--limit", "50")
    assert len(listed["memories"]) == info["counts"]["statuses"]["active"]
    assert len(run_json(capsys, "ls", path, "--limit", "50", "--status", "all")["memories"]) == total
    found = run_json(capsys, "search", path, word, "--mode", "keyword")
    assert found["hits"][0]["content"] == hit
    shown = run_json(capsys, "show", path, found["hits"][0]["id"])
    assert shown["content"] == hit and shown["id"] == found["hits"][0]["id"]
    timeline = run_json(capsys, "timeline", path)
    assert sum(b["memories"] for b in timeline["bins"]) == total
    pad = run_json(capsys, "scratchpad", path)
    if scratch_session:
        session = next(s for s in pad["sessions"] if s["id"] == scratch_session)
        assert session["entries"]


def _assert_counts_agree(capsys, path: str) -> None:
    """info, ls and both exports count the same memories, and each says what it counts."""
    info = run_json(capsys, "info", path)
    total, counts = info["total"], info["counts"]
    assert "every status" in info["counted"]
    for axis in ("kinds", "channels", "layers", "statuses"):
        assert sum(counts[axis].values()) == total, (axis, counts[axis])
    assert run_json(capsys, "ls", path, "--status", "all", "--limit", "0")["total"] == total
    active = counts["statuses"].get("active", 0)
    assert run_json(capsys, "ls", path, "--limit", "0")["total"] == active
    for channel, n in counts["channels"].items():
        assert run_json(capsys, "ls", path, "--status", "all", "--channel", channel, "--limit", "0")["total"] == n
    out = Path(path).parent / "export.jsonl" if Path(path).is_file() else Path(path).parent / f"{Path(path).name}.jsonl"
    jsonl = run_json(capsys, "export", path, str(out), "--format", "jsonl")
    assert jsonl["exported"] == total == len(out.read_text().splitlines()) and jsonl["statuses"] == ["all"]
    markdown = run_json(capsys, "export", path, str(out.with_suffix(".md")), "--format", "markdown")
    assert markdown["exported"] == active and markdown["statuses"] == ["active"]


@pytest.mark.parametrize("name", ["agenticx", "openclaw", "crewai", "letta"])
def test_counts_agree_on_each_tool_store(capsys, tmp_path: Path, name: str):
    _assert_counts_agree(capsys, str(_tool_stores()[name][0](tmp_path)))


def test_counts_agree_on_an_agents_session(capsys, agents_db: Path):
    _assert_counts_agree(capsys, str(agents_db))


def test_counts_agree_on_the_demo_workspace_after_curation(capsys, demo_path: Path):
    ids = [m["id"] for m in run_json(capsys, "ls", str(demo_path), "--limit", "3")["memories"]]
    run_json(capsys, "rm", str(demo_path), *ids)  # some deleted, some archived by a promote
    run_json(capsys, "promote", str(demo_path), run_json(capsys, "ls", str(demo_path), "--channel", "webshop", "--limit", "1")["memories"][0]["id"])
    _assert_counts_agree(capsys, str(demo_path))
