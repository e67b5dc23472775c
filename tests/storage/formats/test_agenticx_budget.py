"""How close an AgenticX home is to its own limits: each session's context to ContextCompactor's
compaction (20 messages / 48,000 characters, the last 8 kept), each workspace file to MemoryHook's
cap (MEMORY.md 4,000, daily logs 8,000, dedup past 2,000), as seed 000 sets them.

The sessions' folders are laid out as AgenticX 0.6.5's studio writes them (messages.json: the chat
history with timestamps; agent_messages.json: the model's context, provider-safe messages, tool calls
as an assistant message with tool_calls followed by tool messages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formats.test_agenticx import build_agenticx_home

from mnemoscope.storage.opening import open_store

# 12 messages of the model's context holding 47,000 characters of content: 8 more messages or
# 1,000 more characters before ContextCompactor compacts it.
NEAR = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:02d} " + "x" * (47_000 // 12 - 3)}
        for i in range(12)]
NEAR[-1]["content"] += "y" * (47_000 - sum(len(m["content"]) for m in NEAR))
CALL = {"role": "assistant", "content": "",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "file_read", "arguments": "{}"}}]}


def over_limit() -> list[dict]:
    """21 messages: past the 20. Counting back 8 lands on a tool message, so the tail kept starts at
    the assistant message that called it (the call is never summarised away from its output)."""
    messages: list[dict] = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(12)]
    messages += [CALL, {"role": "tool", "tool_call_id": "call_1", "name": "file_read", "content": "file text"}]
    messages += [{"role": "user" if i % 2 == 0 else "assistant", "content": f"later {i}"} for i in range(7)]
    assert len(messages) == 21 and messages[21 - 8]["role"] == "tool"
    return messages


ROLLED = [{"role": "system", "content": "[session_memory]{}\n\n[compacted] 已压缩 14 条历史消息，以下为摘要：\nBooked Porto."}] + [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"after {i}"} for i in range(5)]
MEMORY_MD = "# Memory\n\n- 用户偏好: 靠窗座位\n" + "- " + "记" * 3_964 + "\n"  # characters, not bytes: 3,990
assert len(MEMORY_MD) == 3_990 and len(MEMORY_MD.encode()) > 4_000
DAILY = "2026-11-21"


def _session(home: Path, session_id: str, context: list[dict], history: list[dict] | None = None) -> None:
    folder = home / "sessions" / session_id
    folder.mkdir(parents=True, exist_ok=True)
    chat = history if history is not None else [{**m, "timestamp": 1763700000000 + i * 1000} for i, m in enumerate(context)]
    (folder / "messages.json").write_text(json.dumps(chat, ensure_ascii=False, indent=2), encoding="utf-8")
    (folder / "agent_messages.json").write_text(json.dumps(context, ensure_ascii=False, indent=2), encoding="utf-8")


def build_budget_home(tmp_path: Path) -> Path:
    home = build_agenticx_home(tmp_path)
    _session(home, "near", NEAR)
    _session(home, "over", over_limit())
    _session(home, "rolled", ROLLED, history=[{"role": "user", "content": f"m{i}", "timestamp": 1763700000000} for i in range(19)])
    workspace = home / "workspace"
    (workspace / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (workspace / "memory" / f"{DAILY}.md").write_text(
        f"## Session Facts ({DAILY})\n" + "".join(f"- fact {i:03d} " + "z" * 60 + "\n" for i in range(108)), encoding="utf-8")
    return home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return build_budget_home(tmp_path)


def test_each_session_says_how_far_it_is_from_compaction(home: Path) -> None:
    with open_store(home) as store:
        sessions = {s.id: s for s in store.sessions()}
    near, over, rolled = (sessions[k].compaction for k in ("near", "over", "rolled"))
    assert near is not None and over is not None and rolled is not None
    assert (near.messages, near.messages_left, near.characters, near.characters_left) == (12, 8, 47_000, 1_000)
    assert not near.due and (near.retained, near.summarised) == (8, 4)
    assert near.measured_on == "sessions/near/agent_messages.json"
    assert over.due and over.messages == 21 and over.messages_left == 0
    assert (over.summarised, over.retained) == (12, 9)  # the kept tail opens with the tool call, not its output
    # After a compaction only the messages after its summary count (19 in the chat history, 5 in the context).
    assert rolled.compacted_before and (rolled.messages, rolled.messages_left, rolled.summarised) == (5, 15, 0)
    assert "1,000 characters left" in near.describe() and "summarise the oldest 4 and keep the last 8" in near.describe()
    assert over.describe().startswith("compaction due: 21 messages")
    assert sessions["s2"].compaction is None  # a session with no messages anywhere: nothing to measure


def test_info_shows_the_compaction_distance_and_each_files_cap(home: Path) -> None:
    with open_store(home) as store:
        formats = {f["format"]: f for f in store.info()["formats"]}
    sessions = formats["agenticx"]
    assert sessions["compaction"]["near"]["messages_left"] == 8 and sessions["compaction"]["over"]["due"]
    assert any(line.strip().startswith("session near: 8 message(s) and 1,000 characters left")
               for line in sessions["owner_view"])
    caps = {c["file"]: c for c in formats["agenticx-workspace"]["caps"]}
    assert (caps["MEMORY.md"]["characters"], caps["MEMORY.md"]["cap"], caps["MEMORY.md"]["left"]) == (3_990, 4_000, 10)
    daily = (home / "workspace" / "memory" / f"{DAILY}.md").read_text(encoding="utf-8")
    assert caps[f"memory/{DAILY}.md"]["left"] == 8_000 - len(daily) and len(daily) > 2_000
    lines = formats["agenticx-workspace"]["owner_view"]
    assert "  MEMORY.md: 3,990 of 4,000 characters; 10 left before MemoryHook stops appending Auto-extracted sections" in lines
    assert any(f"memory/{DAILY}.md: {len(daily):,} of 8,000" in line and "deduplicated on the day" in line for line in lines)
