"""Letta's SQLite database (``~/.letta/sqlite.db``; letta/orm).

Core memory is the ``block`` table (label, value, limit, description), tied to
agents by ``blocks_agents``; archival memory is passages (``archival_passages``,
``agent_passages`` in older releases; tied to an agent directly or through
``archives_agents``); each agent's conversation is ``messages`` (``text`` in
older releases, a ``content`` list of parts in newer). Rows Letta soft-deleted
(``is_deleted``) are left out, as Letta leaves them out.

Read-only: Letta compiles an agent's core memory into its system message and
keeps archival passages' embeddings beside them, so a change made behind its
back is not one the agent sees; make it through Letta (its API or letta-client).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from .. import bounded_json
from ..detect.looks import is_dir, names
from ..model import GLOBAL_CHANNEL, Layer, Session, Turn
from ..timeutil import parse_time, utcnow
from .base import Contents, FormatSource, KeptReading, json_object, make_memory, plain_row, sqlite_files, sqlite_tables
from .match import FormatMatch

PASSAGE_TABLES = ("archival_passages", "agent_passages", "passages")


class LettaSource(FormatSource):
    format = "letta"
    label = "Letta agents"
    read_only_reason = (
        "Letta compiles core memory into each agent's system message and embeds archival passages; "
        "change them through Letta so the agent sees the change"
    )

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.tables = tables
        self.id_prefix = f"letta:{path.name}:"
        self._reading = KeptReading(path)

    def close(self) -> None:
        super().close()
        self._reading.close()

    def _live(self, table: str) -> str:
        return " WHERE is_deleted = 0" if "is_deleted" in self.tables.get(table, set()) else ""

    def load(self) -> Contents:
        contents = Contents()
        with self._reading() as con:
            names = {r["id"]: r["name"] for r in con.execute("SELECT id, name FROM agents")} if "agents" in self.tables else {}
            block_agents: dict[str, list[str]] = {}
            if "blocks_agents" in self.tables:
                for r in con.execute("SELECT agent_id, block_id FROM blocks_agents"):
                    block_agents.setdefault(r["block_id"], []).append(names.get(r["agent_id"], r["agent_id"]))
            archive_agents: dict[str, str] = {}
            if "archives_agents" in self.tables:
                for r in con.execute("SELECT agent_id, archive_id FROM archives_agents"):
                    archive_agents[r["archive_id"]] = names.get(r["agent_id"], r["agent_id"])
            blocks = con.execute(f"SELECT * FROM block{self._live('block')}").fetchall() if "block" in self.tables else []
            passages = {  # every column but the embedding (most of a row's bytes, never shown)
                t: con.execute(f'SELECT {self._shown_columns(t)} FROM "{t}"{self._live(t)}').fetchall()
                for t in PASSAGE_TABLES if "text" in self.tables.get(t, set())
            }
        for row in blocks:
            agents = block_agents.get(row["id"], [])
            keys = row.keys()
            contents.memories.append(
                make_memory(
                    self, f"block/{row['id']}", row["value"] or "", location=f"{self.path.name}:block/{row['label']}",
                    path=self.path.name, created=row["created_at"] if "created_at" in keys else None,
                    updated=row["updated_at"] if "updated_at" in keys else None, layer=Layer.CORE,
                    channel=agents[0] if len(agents) == 1 else GLOBAL_CHANNEL,
                    metadata={"label": row["label"], "agents": agents,
                              **{k: row[k] for k in ("limit", "description") if k in keys}},
                    snapshot=plain_row(row),
                )
            )
        for table, rows in passages.items():
            for row in rows:
                keys = row.keys()
                agent = names.get(row["agent_id"], row["agent_id"]) if "agent_id" in keys and row["agent_id"] else None
                agent = agent or (archive_agents.get(row["archive_id"]) if "archive_id" in keys else None)
                contents.memories.append(
                    make_memory(
                        self, f"{table}/{row['id']}", row["text"] or "", location=f"{self.path.name}:{table}/{row['id']}",
                        path=self.path.name, created=row["created_at"] if "created_at" in keys else None,
                        layer=Layer.SEMANTIC, channel=agent or GLOBAL_CHANNEL,
                        tags=_tags(row["tags"]) if "tags" in keys else (),
                        metadata=json_object(row["metadata_"]) if "metadata_" in keys else {},
                        snapshot={k: v for k, v in plain_row(row).items() if k != "embedding"},
                    )
                )
        return contents

    def _shown_columns(self, table: str) -> str:
        columns = [c for c in sorted(self.tables.get(table, set())) if c != "embedding"]
        return ", ".join(f'"{c}"' for c in columns) if "embedding" in self.tables.get(table, set()) else "*"

    # -- each agent's conversation: SQL per agent on messages, never every message at once --------

    def _has_messages(self) -> bool:
        return {"agent_id", "role", "created_at"} <= self.tables.get("messages", set())

    def _order(self) -> str:
        return "sequence_id" if "sequence_id" in self.tables.get("messages", set()) else "created_at"

    def _and_live(self) -> str:
        return " AND is_deleted = 0" if "is_deleted" in self.tables.get("messages", set()) else ""

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        if not self._has_messages():
            return []
        with self._reading() as con:
            names = {r["id"]: r["name"] for r in con.execute("SELECT id, name FROM agents")} if "agents" in self.tables else {}
            agents = con.execute(
                f"SELECT agent_id, count(*) AS n FROM messages WHERE agent_id IS NOT NULL{self._and_live()} "
                "GROUP BY agent_id ORDER BY agent_id"
            ).fetchall()
            found = []
            for row in agents:
                name = names.get(row["agent_id"], row["agent_id"])
                if channels and name not in channels:
                    continue
                first = con.execute(
                    f"SELECT created_at FROM messages WHERE agent_id = ?{self._and_live()} ORDER BY {self._order()} LIMIT 1",
                    (row["agent_id"],),
                ).fetchone()
                started = parse_time(first["created_at"]) or utcnow()
                found.append(Session(row["agent_id"], name, f"{name} conversation", started, row["n"]))
        return found

    def holds_session(self, session_id: str) -> bool:
        """Whether an agent has a conversation here: one lookup on Letta's (agent_id, ...) index."""
        if not self._has_messages():
            return False
        with self._reading() as con:
            return con.execute(
                f"SELECT 1 FROM messages WHERE agent_id = ?{self._and_live()} LIMIT 1", (session_id,)
            ).fetchone() is not None

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        if not self._has_messages():
            return []
        present = self.tables.get("messages", set())
        keys = frozenset(c for c in ("agent_id", "role", "created_at", *_TEXT_COLUMNS) if c in present)
        with self._reading() as con:  # (the columns a turn shows: Letta's messages have two dozen)
            rows = con.execute(
                f"SELECT {', '.join(keys)} FROM messages WHERE agent_id = ?{self._and_live()} ORDER BY {self._order()} "
                "LIMIT ? OFFSET ?",
                (session_id, limit, offset),
            ).fetchall()
        return [
            Turn(row["agent_id"], index, row["role"], message_text(row, keys), parse_time(row["created_at"]) or utcnow())
            for index, row in enumerate(rows, start=offset)
        ]

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        counts: dict[str, int] = {}
        if not self._has_messages():
            return counts
        with self._reading() as con:
            for (created,) in con.execute(f"SELECT created_at FROM messages WHERE agent_id IS NOT NULL{self._and_live()}"):
                at = parse_time(created) or utcnow()
                if (since and at < since) or (until and at >= until):
                    continue
                label = at.strftime(bin_format)
                counts[label] = counts.get(label, 0) + 1
        return counts


_TEXT_COLUMNS = ("content", "text", "tool_calls", "tool_returns")  # what message_text reads


def message_text(row: Any, keys: Collection[str] | None = None) -> str:
    """What a message row says, as Letta's own views show it: its text parts (or the older
    ``text`` column), then the tools it called (``tool_calls``, OpenAI's shape; a MemGPT-style
    agent's reply to the user is its send_message call) and what tools returned (``tool_call``
    and ``tool_return`` parts, the ``tool_returns`` column). Reasoning parts are the agent's own
    thoughts, shown marked as such. keys: the row's columns, where the caller knows them."""
    keys = row.keys() if keys is None else keys
    out: list[str] = []
    parts = _json(row["content"]) if "content" in keys else None
    for part in parts if isinstance(parts, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and part.get("text"):
            out.append(str(part["text"]))
        elif kind == "reasoning" and part.get("reasoning"):
            out.append(f"(reasoning) {part['reasoning']}")
        elif kind == "tool_call":
            out.append(_call_text(part.get("name"), part.get("input")))
        elif kind == "tool_return" and part.get("content") is not None:
            out.append(f"(returned) {_plain(part['content'])}")
    if not out and "text" in keys and row["text"]:
        out.append(str(row["text"]))
    raw_calls = row["tool_calls"] if "tool_calls" in keys else None
    calls = _json(raw_calls) if raw_calls else None
    for call in calls if isinstance(calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            text = _call_text(function.get("name"), function.get("arguments"))
            if text not in out:
                out.append(text)
    raw_returns = row["tool_returns"] if "tool_returns" in keys else None
    returns = _json(raw_returns) if raw_returns else None
    for returned in returns if isinstance(returns, list) else []:
        if isinstance(returned, dict):
            value = next((returned[k] for k in ("func_response", "stdout") if returned.get(k)), None)
            text = f"(returned) {_plain(value)}" if value is not None else ""
            if text and text not in out:
                out.append(text)
    if not out and raw_calls and calls is None:  # not JSON: as it is
        out.append(str(raw_calls))
    return "\n".join(out)


def _json(value: Any) -> Any:
    if not value:
        return None
    if isinstance(value, str):
        long_number = _LONG_NUMBER.search(value) is not None
    elif isinstance(value, bytes):
        long_number = _LONG_NUMBER_BYTES.search(value) is not None
    else:
        return value
    # orjson (a page of turns parses a column or two of each row) reads an integer past 64 bits
    # as a float: Python's json keeps it exact, as it reads what orjson refuses (NaN)
    if not long_number:
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            pass
    try:
        return bounded_json.loads(value)
    except (TypeError, ValueError):
        return None


# (a first digit, then nineteen: a third quicker to rule out than [0-9]{20} in Python's re)
_LONG_NUMBER, _LONG_NUMBER_BYTES = re.compile(r"[0-9][0-9]{19}"), re.compile(rb"[0-9][0-9]{19}")


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _call_text(name: Any, arguments: Any) -> str:
    """A tool call as name(arguments); arguments arrive as a JSON string or an object."""
    if isinstance(arguments, str):
        parsed = _json(arguments)
        arguments = parsed if parsed is not None else arguments
    shown = arguments if isinstance(arguments, str) else json.dumps(arguments or {}, ensure_ascii=False)
    return f"{name or '?'}({shown})"


def _tags(value: Any) -> tuple[str, ...]:
    try:
        tags = bounded_json.loads(value) if value else []
    except (TypeError, json.JSONDecodeError):
        return ()
    return tuple(str(t) for t in tags) if isinstance(tags, list) else ()


def is_letta(tables: dict[str, set[str]]) -> bool:
    has_blocks = {"id", "label", "value"} <= tables.get("block", set())
    has_passages = any("text" in tables.get(t, set()) for t in PASSAGE_TABLES)
    return has_blocks and (has_passages or "agents" in tables)


def detect(path: Path) -> list[FormatMatch]:
    candidates = sqlite_files(path) + (sqlite_files(path / ".letta") if ".letta" in names(path) and is_dir(path) else [])
    matches = []
    for candidate in candidates:
        tables = sqlite_tables(candidate)
        if is_letta(tables):
            matches.append(FormatMatch("letta", LettaSource.label, candidate,
                                       open=partial(LettaSource, candidate, tables)))
    return matches
