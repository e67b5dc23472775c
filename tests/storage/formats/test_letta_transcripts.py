"""Letta's conversation as its own views show it: a MemGPT-style agent answers through its
send_message tool, so a turn's tool calls and what tools returned are part of the transcript."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from formats.test_letta import build_letta_home
from mnemoscope.storage import open_store

SEND = {"id": "call-1", "type": "function",
        "function": {"name": "send_message", "arguments": json.dumps({"message": "Your 9:00 train is booked."})}}
SEARCH = {"id": "call-2", "type": "function",
          "function": {"name": "archival_memory_search", "arguments": json.dumps({"query": "Lisbon trains"})}}


def test_turns_show_tool_calls_what_tools_returned_and_the_reply_sent_through_a_tool(tmp_path: Path) -> None:
    home = build_letta_home(tmp_path)
    db = home / ".letta" / "sqlite.db"
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE messages ADD COLUMN tool_call_id VARCHAR")
    con.execute("ALTER TABLE messages ADD COLUMN tool_returns JSON")
    rows = [
        ("msg-3", "assistant", [{"type": "text", "text": "Ana asked for trains; search first."}], [SEARCH], None, None),
        ("msg-4", "tool", [{"type": "text", "text": '{"status": "OK", "message": "Ana took the 9:00 train"}'}], None,
         "call-2", None),
        ("msg-5", "assistant", [{"type": "reasoning", "reasoning": "Confirm to Ana."}], [SEND], None, None),
        ("msg-6", "tool", None, None, "call-1", [{"status": "success", "func_response": '{"status": "OK"}'}]),
    ]
    for seq, (mid, role, content, calls, call_id, returns) in enumerate(rows, start=3):
        con.execute(
            "INSERT INTO messages (id, agent_id, role, content, tool_calls, tool_call_id, tool_returns, sequence_id, "
            "created_at) VALUES (?, 'agent-1', ?, ?, ?, ?, ?, ?, ?)",
            (mid, role, json.dumps(content) if content else None, json.dumps(calls) if calls else None, call_id,
             json.dumps(returns) if returns else None, seq, f"2026-11-19 10:00:{seq:02d}"),
        )
    con.commit()
    con.close()
    with open_store(home / ".letta", read_only=True) as store:
        [session] = store.sessions()
        turns = store.turns(session.id)
    assert [t.content for t in turns] == [
        "Book the 9:00 train",
        "Booked.",
        'Ana asked for trains; search first.\narchival_memory_search({"query": "Lisbon trains"})',
        '{"status": "OK", "message": "Ana took the 9:00 train"}',
        '(reasoning) Confirm to Ana.\nsend_message({"message": "Your 9:00 train is booked."})',
        '(returned) {"status": "OK"}',
    ]
    assert [t.role for t in turns] == ["user", "assistant", "assistant", "tool", "assistant", "tool"]


def _last_turn_after(tmp_path: Path, role: str, columns: dict[str, str], added: str | None = None) -> str:
    """The content of the last turn once a message (its JSON columns as given) follows the
    fixture's conversation; added: a JSON column the fixture's messages table lacks."""
    home = build_letta_home(tmp_path)
    con = sqlite3.connect(home / ".letta" / "sqlite.db")
    if added:
        con.execute(f"ALTER TABLE messages ADD COLUMN {added} JSON")
    con.execute(
        f"INSERT INTO messages (id, agent_id, role, sequence_id, created_at, {', '.join(columns)}) "
        f"VALUES ('msg-3', 'agent-1', ?, 3, '2026-11-19 10:00:03', {', '.join('?' * len(columns))})",
        (role, *columns.values()),
    )
    con.commit()
    con.close()
    with open_store(home / ".letta", read_only=True) as store:
        [session] = store.sessions()
        return store.turns(session.id)[-1].content


def test_a_message_whose_json_holds_nan_reads_as_python_wrote_it(tmp_path: Path) -> None:
    """Letta's JSON columns are written by Python's json (SQLAlchemy's JSON type), which writes a
    float NaN as a bare NaN: strict parsers refuse it, the turn must not lose its text for it."""
    returns = json.dumps([{"status": "success", "func_response": "scored", "score": float("nan")}])
    assert "NaN" in returns
    content = json.dumps([{"type": "text", "text": "score ready", "confidence": float("nan")}])
    last = _last_turn_after(tmp_path, "tool", {"content": content, "tool_returns": returns}, added="tool_returns")
    assert last == "score ready\n(returned) scored"


def test_an_integer_past_64_bits_in_a_tool_call_is_shown_exactly(tmp_path: Path) -> None:
    """An agent's tool argument may be a big number (an account, an order id): it is shown as
    Letta stored it, not rounded to a float."""
    call = {"id": "call-9", "type": "function",
            "function": {"name": "refund", "arguments": {"order": 123456789012345678901234567890}}}
    content = json.dumps([{"type": "text", "text": "Refunding."}])
    last = _last_turn_after(tmp_path, "assistant", {"content": content, "tool_calls": json.dumps([call])})
    assert last == 'Refunding.\nrefund({"order": 123456789012345678901234567890})'
