"""The command line on an AgenticX home with session histories and MemoryHook's workspace writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formats.test_agenticx import DAY, DONE, build_agenticx_history

from mnemoscope.app.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def test_session_turns_show_the_compaction_as_its_own_kind(capsys, tmp_path: Path) -> None:
    home = build_agenticx_history(tmp_path)
    data = json.loads(run(capsys, "sessions", home, "--session", "s1", "--json"))
    assert [t["kind"] for t in data["turns"]] == ["message", "message", "compaction", "message", "message", "message"]
    text = run(capsys, "sessions", home, "--session", "s1")
    assert "#2 " in text and "system [compaction]: [session_memory]" in text
    assert "user: Find me a hotel in Porto" in text and "user [" not in text


def test_ls_and_show_tell_auto_extracted_bullets_from_hand_written_ones(capsys, tmp_path: Path) -> None:
    home = build_agenticx_history(tmp_path)
    listed = json.loads(run(capsys, "ls", home, "--limit", "100", "--json"))["memories"]
    fact = next(m for m in listed if m["content"] == DONE[2:] and m["source"]["path"] == "MEMORY.md")
    shown = json.loads(run(capsys, "show", home, fact["id"], "--json"))
    assert shown["metadata"]["origin"] == "auto-extracted" and "auto-extracted" in shown["tags"]
    seat = next(m for m in listed if m["content"] == "The user prefers window seats.")
    assert seat["metadata"]["origin"] == "manual" and seat["tags"] == []
    info = json.loads(run(capsys, "info", home, "--json"))
    workspace = next(f for f in info["formats"] if f["format"] == "agenticx-workspace")
    assert sum(f"memory/{DAY}.md: lines" in p for p in workspace["problems"]) == 2
    assert f"memory/{DAY}.md: lines 2, 6 repeat one fact" in run(capsys, "info", home)


def test_sessions_and_info_say_how_far_each_session_and_file_is_from_agenticx_limits(capsys, tmp_path: Path) -> None:
    from formats.test_agenticx_budget import build_budget_home

    home = build_budget_home(tmp_path / "budget")
    table = run(capsys, "sessions", home)
    rows = {line.split()[0]: line for line in table.splitlines()[2:]}
    assert "UNTIL COMPACTION" in table.splitlines()[0]
    assert rows["near"].endswith("8 msgs / 1,000 chars left") and rows["over"].endswith("due")
    assert rows["s2"].endswith("—")
    detail = run(capsys, "sessions", home, "--session", "over")
    assert "  compaction: compaction due: 21 messages" in detail and "summarise the oldest 12 and keep the last 9" in detail
    data = json.loads(run(capsys, "sessions", home, "--json"))
    near = next(s for s in data["sessions"] if s["id"] == "near")
    assert (near["compaction"]["messages_left"], near["compaction"]["characters_left"]) == (8, 1_000)
    assert "compaction" not in next(s for s in data["sessions"] if s["id"] == "s2")  # nothing measured: omitted
    info = run(capsys, "info", home)
    assert "ContextCompactor: compacts past 20 messages or 48,000 characters, keeps the last 8 verbatim" in info
    assert "MEMORY.md: 3,990 of 4,000 characters; 10 left" in info
