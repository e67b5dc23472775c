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

A tool's call and its output (``function_call`` / ``function_call_output`` as the Runner
stores a function tool's run, and the hosted and custom tools' ``*_call`` items) are turns
of kind "tool": the call as ``name(arguments)``, the output as ``name → output``, the name
found through the ``call_id`` they share.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..errors import UnsupportedError
from ..model import GLOBAL_CHANNEL, Layer, Memory, ScratchEntry, Session, SourceRef, Turn
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from .base import plain_row, sqlite_files, sqlite_tables
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision

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


class AgentsSessionSource(SqlFormatSource):
    """One (sessions, messages) table pair, read with SQL where it lives (sql_backed.py).

    Pages run in the SDK's own item order (``id``, AUTOINCREMENT: items are inserted as they
    happen, with ``created_at`` = CURRENT_TIMESTAMP), newest first, on the primary key; a session
    filter uses the SDK's index on (session_id, id)."""

    format = "openai-agents"
    label = "OpenAI Agents SDK session"
    editable_fields = ("content",)
    turns_are_memories = True
    layer = Layer.EPISODIC
    # Rows whose message_data does not hold every plain word of the text shown: those that are not
    # a JSON object (shown inside a {"type": "value", ...} wrapper), and for the needles that wrapper
    # or repr() add, broken JSON (shown as {"raw": ..., "type": "unreadable"}) and tool outputs that
    # are not a string (shown as Python prints them: None for null).
    # (Not starting with "{", said with two comparisons: cheaper per row than substr().)
    odd_rows = "(message_data < '{' OR message_data >= '|')"

    def odd_rows_for(self, needles: Sequence[str]) -> str:
        odd = [self.odd_rows]
        if any(n in word for n in needles for word in ("raw", "type", "unreadable", " ")):
            odd.append("NOT json_valid(message_data)")
        if any(n in word for n in needles for word in ("none", " ")):
            odd.append(
                "(instr(message_data, 'function_call_output') > 0 AND instr(message_data, '\"output\": \"') = 0)"
            )
        return "(" + " OR ".join(odd) + ")"

    def __init__(self, path: Path, sessions_table: str, messages_table: str) -> None:
        super().__init__(path.parent, [path], path)
        self.sessions_table = sessions_table
        self.messages_table = messages_table
        self.id_prefix = f"oai:{path.name}:{messages_table}:"
        self._file, self._location = path.name, f"{path.name}:{messages_table}/"
        self.spec = TableSpec(
            messages_table, key="id", channel="session_id", created="created_at", text="message_data"
        )

    def memory_of(self, row: sqlite3.Row) -> Memory:
        item = _item(row["message_data"])
        created = self.time_of(row["created_at"])
        key, session = row["id"], row["session_id"]
        return Memory(
            id=f"{self.id_prefix}{key}",
            source=SourceRef(self.kind, f"{self._location}{key}", path=self._file, format=self.format),
            layer=Layer.EPISODIC,
            channel=session or GLOBAL_CHANNEL,
            content=item_text(item),
            created_at=created,
            updated_at=created,
            last_accessed=created,
            metadata={"session_id": session, "role": item_role(item), "item_type": item.get("type", "message")},
            revision=row_revision(row),
        )

    def text_of(self, raw: Any) -> str:
        return item_text(_item(raw))

    # -- sessions, turns, problems: SQL on the SDK's (session_id, id) index -----------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        wanted = f" WHERE session_id IN ({', '.join('?' * len(channels))})" if channels else ""
        counted = {
            row["session_id"]: row
            for row in self.rows(
                f'SELECT session_id, count(*) AS n, min(id) AS first FROM "{self.messages_table}"{wanted} GROUP BY session_id',
                channels,
            )
        }
        known = {
            row["session_id"]: row["created_at"]
            for row in self.rows(f'SELECT session_id, created_at FROM "{self.sessions_table}"{wanted}', channels)
        }
        found = []
        for session_id in sorted(set(known) | set(counted), key=str):
            row = counted.get(session_id)
            started = parse_time(known.get(session_id))
            if started is None and row is not None:
                first = self.rows(f'SELECT created_at FROM "{self.messages_table}" WHERE id = ?', (row["first"],))
                started = parse_time(first[0][0]) if first else None
            n = row["n"] if row is not None else 0
            found.append(Session(session_id, session_id, f"session {session_id}", started or utcnow(), n))
        return found

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        rows = self.rows(
            f'SELECT message_data, created_at FROM "{self.messages_table}" WHERE session_id = ? '
            "ORDER BY id LIMIT ? OFFSET ?",
            (session_id, limit, offset),
        )
        items = [_item(row["message_data"]) for row in rows]
        names = self._tool_names(session_id, items)
        turns = []
        for index, (row, item) in enumerate(zip(rows, items, strict=True), start=offset):
            created = parse_time(row["created_at"]) or utcnow()
            if is_tool_item(item):
                turns.append(Turn(session_id, index, item_role(item), tool_text(item, names), created, TOOL_KIND))
            else:
                turns.append(Turn(session_id, index, item_role(item), item_text(item), created))
        return turns

    def _tool_names(self, session_id: str, items: list[dict[str, Any]]) -> dict[str, str]:
        """call_id -> the tool's name, for the outputs among items (their calls looked up in the
        session when they are not among items: on an earlier page)."""
        names = {str(i["call_id"]): tool_name(i) for i in items if is_tool_call(i) and "call_id" in i}
        missing = sorted({str(i["call_id"]) for i in items if is_tool_output(i) and "call_id" in i} - set(names))
        if missing:
            rows = self.rows(
                f'SELECT message_data FROM "{self.messages_table}" WHERE session_id = ? AND json_valid(message_data) '
                f"AND json_extract(message_data, '$.call_id') IN ({', '.join('?' * len(missing))})",
                (session_id, *missing),
            )
            for row in rows:
                item = _item(row["message_data"])
                if is_tool_call(item):
                    names[str(item["call_id"])] = tool_name(item)
        return names

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return []

    def problems(self) -> list[str]:
        orphans = self.rows(
            f'SELECT DISTINCT session_id FROM "{self.messages_table}" AS m WHERE NOT EXISTS '
            f'(SELECT 1 FROM "{self.sessions_table}" AS s WHERE s.session_id = m.session_id) ORDER BY 1'
        )
        return [f"messages of session {row[0]} have no row in {self.sessions_table}" for row in orphans]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "tables": [self.sessions_table, self.messages_table]}

    # -- the write primitive ---------------------------------------------------------------

    def read_record(self, record_id: str) -> Snapshot | None:
        rows = self.rows(f'SELECT * FROM "{self.messages_table}" WHERE id = ?', (self.record_key(record_id),))
        return plain_row(rows[0]) if rows else None

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
            self.path, self.messages_table, {"id": self.record_key(record_id)}, record_id, expected, new,
            updates=("message_data",), before=self._session_row,
        )

    def _session_row(self, con: Any, current: Any, new: Snapshot | None) -> None:
        """An item put back by undo needs its session's row, as add_items makes it."""
        if current is None and new is not None:
            con.execute(f'INSERT OR IGNORE INTO "{self.sessions_table}" (session_id) VALUES (?)', (new["session_id"],))


def _item(data: Any) -> dict[str, Any]:
    try:
        item = bounded_json.loads(data)
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
        return _output_text(item.get("output", ""))
    if kind == "reasoning":
        summary = item.get("summary") or []
        return "\n".join(str(s.get("text", "")) for s in summary if isinstance(s, dict)) or "(reasoning)"
    return json.dumps(item, ensure_ascii=False, sort_keys=True)


TOOL_KIND = "tool"


def is_tool_call(item: dict[str, Any]) -> bool:
    return str(item.get("type", "")).endswith("_call")


def is_tool_output(item: dict[str, Any]) -> bool:
    return str(item.get("type", "")).endswith("_call_output")


def is_tool_item(item: dict[str, Any]) -> bool:
    return "role" not in item and (is_tool_call(item) or is_tool_output(item))


def tool_name(item: dict[str, Any]) -> str:
    """A call's tool: its name (function, custom and MCP tools), else the hosted tool its type
    names (``web_search_call`` -> web_search)."""
    name = item.get("name")
    if isinstance(name, str) and name:
        return name
    return str(item.get("type", "tool")).removesuffix("_output").removesuffix("_call") or "tool"


def tool_text(item: dict[str, Any], names: dict[str, str]) -> str:
    """A tool item as a person reads it: a call as name(arguments), an output as name → output."""
    if is_tool_output(item):
        name = names.get(str(item.get("call_id")), tool_name(item))
        return f"{name} → {_output_text(item.get('output'))}"
    arguments = next(
        (item[k] for k in ("arguments", "input", "action", "queries", "code", "operation") if item.get(k) is not None), ""
    )
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False, sort_keys=True)
    text = f"{tool_name(item)}({shown})"
    if item.get("output") is not None:  # an MCP or hosted call carries its own result
        text += f" → {_output_text(item['output'])}"
    return text


def _output_text(output: Any) -> str:
    """A tool output: a string as is; the SDK's structured outputs (input_text, input_image,
    input_file parts) by their text, or what each part is."""
    if isinstance(output, str):
        return output
    parts = output if isinstance(output, list) else [output]
    shown = []
    for part in parts:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            shown.append(part["text"])
        elif isinstance(part, dict) and part.get("type") in ("input_image", "input_file"):
            shown.append(f"[{str(part['type']).removeprefix('input_')}: "
                         f"{part.get('filename') or part.get('file_id') or str(part.get('image_url') or '')[:60]}]")
        else:
            shown.append(json.dumps(part, ensure_ascii=False, sort_keys=True))
    return "\n".join(shown)


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
