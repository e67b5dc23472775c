"""The OpenAI Agents SDK's ``SQLiteSession`` (agents/memory/sqlite_session.py).

Two tables whose names the caller chooses (``agent_sessions`` and
``agent_messages`` by default), so they are found by their columns: sessions
(session_id, created_at, updated_at) and messages (id, session_id, message_data,
created_at), message_data being one Responses API input item as JSON.

Each item is an episodic memory in the channel of its session, and each session
a conversation of those items as turns. Message text is editable the way the
SDK stores it (the item's JSON, same id, so the order holds); a delete removes
the item as ``pop_item`` does, and undo puts it back under its old id. Tool calls,
tool outputs and reasoning items are shown but not edited: their JSON is the
model's own record of what happened.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import UnsupportedError
from ..model import Layer, Session, Turn
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from . import FormatMatch
from .base import Contents, FormatSource, make_memory, plain_row, reading, sqlite_files, sqlite_tables

SESSION_COLUMNS = {"session_id", "created_at", "updated_at"}
MESSAGE_COLUMNS = {"id", "session_id", "message_data", "created_at"}


def find_tables(tables: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(sessions table, messages table) pairs, matched by columns and name stem."""
    sessions = [t for t, cols in tables.items() if SESSION_COLUMNS <= cols and "message_data" not in cols]
    messages = [t for t, cols in tables.items() if MESSAGE_COLUMNS <= cols]
    pairs = []
    for m in messages:
        stem = m.removesuffix("messages")
        partner = next((s for s in sessions if s.removesuffix("sessions") == stem), None)
        partner = partner or (sessions[0] if len(sessions) == 1 else None)
        if partner is not None:
            pairs.append((partner, m))
    return pairs


class AgentsSessionSource(FormatSource):
    format = "openai-agents"
    label = "OpenAI Agents SDK session"
    editable_fields = ("content",)
    turns_are_memories = True

    def __init__(self, path: Path, sessions_table: str, messages_table: str) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.sessions_table = sessions_table
        self.messages_table = messages_table
        self.id_prefix = f"oai:{path.name}:{messages_table}:"

    def load(self) -> Contents:
        contents = Contents()
        with reading(self.path) as con:
            known = {
                row["session_id"]: row
                for row in con.execute(f'SELECT * FROM "{self.sessions_table}"')
            }
            rows = con.execute(f'SELECT * FROM "{self.messages_table}" ORDER BY session_id, id').fetchall()
        for row in rows:
            item = _item(row["message_data"])
            role, text = item_role(item), item_text(item)
            created = parse_time(row["created_at"]) or utcnow()
            contents.memories.append(
                make_memory(
                    self, str(row["id"]), text,
                    location=f"{self.path.name}:{self.messages_table}/{row['id']}", path=self.path.name,
                    created=created, layer=Layer.EPISODIC, channel=row["session_id"],
                    metadata={"session_id": row["session_id"], "role": role, "item_type": item.get("type", "message")},
                    snapshot=plain_row(row),
                )
            )
            turns = contents.turns.setdefault(row["session_id"], [])
            turns.append(Turn(row["session_id"], len(turns), role, text, created))
        for session_id in sorted(set(known) | set(contents.turns)):
            row = known.get(session_id)
            started = parse_time(row["created_at"]) if row is not None else None
            turns = contents.turns.get(session_id, [])
            started = started or (turns[0].timestamp if turns else utcnow())
            contents.sessions.append(Session(session_id, session_id, f"session {session_id}", started, len(turns)))
            if row is None:
                contents.problems.append(f"messages of session {session_id} have no row in {self.sessions_table}")
        return contents

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "tables": [self.sessions_table, self.messages_table]}

    # -- the write primitive ---------------------------------------------------------------

    def _row_id(self, record_id: str) -> int:
        try:
            return int(record_id[len(self.id_prefix):])
        except ValueError:
            raise UnsupportedError(f"{record_id} is not an OpenAI Agents session item id.") from None

    def read_record(self, record_id: str) -> Snapshot | None:
        with reading(self.path) as con:
            row = con.execute(f'SELECT * FROM "{self.messages_table}" WHERE id = ?', (self._row_id(record_id),)).fetchone()
        return plain_row(row) if row is not None else None

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        item = _item(snap["message_data"])
        kind = item.get("type", "message")
        if kind != "message" and "role" not in item:
            raise UnsupportedError(
                f"This item is a {kind}; only message text is edited (tool calls and outputs are the model's record)."
            )
        text = requested["content"]
        content = item.get("content")
        if isinstance(content, list):
            parts = [p for p in content if isinstance(p, dict) and "text" in p]
            if not parts:
                raise UnsupportedError("This message has no text part to edit.")
            first = {**parts[0], "text": text}
            item["content"] = [first] + [p for p in content if not (isinstance(p, dict) and "text" in p)]
        else:
            item["content"] = text
        return {**snap, "message_data": json.dumps(item, ensure_ascii=False)}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        return self.write_row(
            self.path, self.messages_table, {"id": self._row_id(record_id)}, record_id, expected, new,
            updates=("message_data",), before=self._session_row,
        )

    def _session_row(self, con: Any, current: Any, new: Snapshot | None) -> None:
        """An item put back by undo needs its session's row, as add_items makes it."""
        if current is None and new is not None:
            con.execute(f'INSERT OR IGNORE INTO "{self.sessions_table}" (session_id) VALUES (?)', (new["session_id"],))


def _item(data: Any) -> dict[str, Any]:
    try:
        item = json.loads(data)
    except (TypeError, json.JSONDecodeError):
        return {"type": "unreadable", "raw": str(data)}
    return item if isinstance(item, dict) else {"type": "value", "value": item}


def item_role(item: dict[str, Any]) -> str:
    if "role" in item:
        return str(item["role"])
    kind = str(item.get("type", ""))
    return "tool" if "call" in kind or "output" in kind else kind or "item"


def item_text(item: dict[str, Any]) -> str:
    """What a person reads of an input item: message text, or a call and its arguments."""
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p]
        if texts:
            return "\n".join(texts)
    kind = item.get("type", "")
    if kind == "function_call":
        return f"{item.get('name', '?')}({item.get('arguments', '')})"
    if kind == "function_call_output":
        return str(item.get("output", ""))
    if kind == "reasoning":
        summary = item.get("summary") or []
        return "\n".join(str(s.get("text", "")) for s in summary if isinstance(s, dict)) or "(reasoning)"
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


def detect(path: Path) -> list[FormatMatch]:
    matches = []
    for candidate in sqlite_files(path):
        for sessions, messages in find_tables(sqlite_tables(candidate)):
            matches.append(
                FormatMatch(
                    "openai-agents", "OpenAI Agents SDK session", candidate,
                    open=partial(AgentsSessionSource, candidate, sessions, messages),
                )
            )
    return matches
