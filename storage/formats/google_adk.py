"""Google ADK session databases (``DatabaseSessionService`` / ``SqliteSessionService``).

Tables (google/adk/sessions/database_session_service.py): ``sessions`` (app_name,
user_id, id, state JSON, create_time, update_time), ``events`` keyed by
(id, app_name, user_id, session_id), ``app_states`` and ``user_states``. The V1
schema (``adk_internal_metadata.schema_version`` = 1) keeps each event whole as
JSON in ``event_data``; the V0 schema (ADK 1.19-1.21) spread it over columns and
pickled ``actions``, which is never unpickled here (that could run code).

Events are episodic memories in the channel of their app and the turns of their
session; session state, ``app:`` state and ``user:`` state are the session's
scratchpad, keys prefixed the way ADK merges them. In V1 an event's text parts
are editable (the event JSON is rewritten, its id and timestamp kept) and an
event can be deleted; state already applied from an event's state_delta stays, as
it does when ADK itself rewinds nothing. V0 databases are read-only.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import UnsupportedError
from ..model import Layer, ScratchEntry, Session, Turn
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from .base import Contents, FormatSource, json_object, make_memory, plain_row, reading, sqlite_files, sqlite_tables
from .match import FormatMatch

SESSION_COLUMNS = {"app_name", "user_id", "id", "state", "create_time", "update_time"}
EVENT_KEYS = {"id", "app_name", "user_id", "session_id"}
ROLES = {"model": "assistant", "user": "user"}


class AdkSource(FormatSource):
    format = "google-adk"
    label = "Google ADK sessions"
    turns_are_memories = True

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.v1 = "event_data" in tables.get("events", set())
        self.id_prefix = f"adk:{path.name}:"
        self.editable_fields = ("content",) if self.v1 else ()
        self.read_only_reason = "" if self.v1 else (
            "an ADK V0 schema (1.19-1.21) keeps event actions pickled; Mnemoscope reads it but does not write it"
        )
        self._keys: dict[str, tuple[str, str, str, str]] = {}

    def load(self) -> Contents:
        contents = Contents()
        with reading(self.path) as con:
            sessions = con.execute("SELECT * FROM sessions ORDER BY create_time").fetchall()
            events = con.execute("SELECT * FROM events ORDER BY session_id, timestamp, id").fetchall()
            app_states = {r["app_name"]: r for r in con.execute("SELECT * FROM app_states")}
            user_states = {(r["app_name"], r["user_id"]): r for r in con.execute("SELECT * FROM user_states")}
        self._keys = {}
        for row in events:
            event = self._event(row)
            key = f"{row['session_id']}/{row['id']}"
            self._keys[self.id_prefix + key] = (row["id"], row["app_name"], row["user_id"], row["session_id"])
            text = event_text(event)
            author = str(event.get("author") or "")
            role = ROLES.get(str((event.get("content") or {}).get("role")), author or "event")
            at = parse_time(row["timestamp"]) or utcnow()
            contents.memories.append(
                make_memory(
                    self, key, text, location=f"{self.path.name}:events/{row['id']}", path=self.path.name,
                    created=at, layer=Layer.EPISODIC, channel=row["app_name"],
                    metadata={"session_id": row["session_id"], "user_id": row["user_id"], "author": author,
                              "invocation_id": event.get("invocation_id") or row["invocation_id"]},
                    snapshot=plain_row(row),
                )
            )
            turns = contents.turns.setdefault(row["session_id"], [])
            turns.append(Turn(row["session_id"], len(turns), role, text, at))
        for row in sessions:
            started = parse_time(row["create_time"]) or utcnow()
            updated = parse_time(row["update_time"]) or started
            turns = contents.turns.get(row["id"], [])
            contents.sessions.append(
                Session(row["id"], row["app_name"], f"{row['app_name']} / {row['user_id']}", started, len(turns), row["user_id"])
            )
            scopes = [("", row["state"], updated)]
            if row["app_name"] in app_states:
                app = app_states[row["app_name"]]
                scopes.append(("app:", app["state"], parse_time(app["update_time"]) or updated))
            if (row["app_name"], row["user_id"]) in user_states:
                user = user_states[(row["app_name"], row["user_id"])]
                scopes.append(("user:", user["state"], parse_time(user["update_time"]) or updated))
            for prefix, state, at in scopes:
                for key, value in json_object(state).items():
                    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                    contents.scratch.append(ScratchEntry(row["id"], prefix + key, text, at))
        if not self.v1:
            contents.problems.append("V0 schema: event actions are pickled and not read")
        return contents

    def _event(self, row: Any) -> dict[str, Any]:
        if self.v1:
            return json_object(row["event_data"])
        event = {"author": row["author"] if "author" in row.keys() else ""}
        if "content" in row.keys():
            event["content"] = json_object(row["content"])
        return event

    # -- the write primitive (V1 only) -------------------------------------------------------

    def _key_of(self, record_id: str, *snapshots: Snapshot | None) -> tuple[str, str, str, str]:
        self.contents()
        if record_id in self._keys:
            return self._keys[record_id]
        # An event a delete removed: its snapshot still names it (undo, restore).
        for snap in snapshots:
            if snap is not None:
                return (snap["id"], snap["app_name"], snap["user_id"], snap["session_id"])
        raise UnsupportedError(f"No ADK event {record_id} in {self.path.name}.")

    def _row(self, con: Any, key: tuple[str, str, str, str]) -> Snapshot | None:
        row = con.execute(
            "SELECT * FROM events WHERE id = ? AND app_name = ? AND user_id = ? AND session_id = ?", key
        ).fetchone()
        return plain_row(row) if row is not None else None

    def read_record(self, record_id: str) -> Snapshot | None:
        with reading(self.path) as con:
            return self._row(con, self._key_of(record_id))

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        event = json_object(snap["event_data"])
        parts = (event.get("content") or {}).get("parts") or []
        texts = [p for p in parts if isinstance(p, dict) and "text" in p]
        if not texts:
            raise UnsupportedError("This ADK event has no text part to edit (function calls and responses are kept as they are).")
        texts[0]["text"] = requested["content"]
        for extra in texts[1:]:
            parts.remove(extra)
        return {**snap, "event_data": json.dumps(event, ensure_ascii=False)}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        if not self.v1:
            return super().write_record(record_id, expected, new)
        event_id, app, user, session = self._key_of(record_id, expected, new)
        key = {"id": event_id, "app_name": app, "user_id": user, "session_id": session}
        return self.write_row(self.path, "events", key, record_id, expected, new, updates=("event_data",))


def event_text(event: dict[str, Any]) -> str:
    parts = (event.get("content") or {}).get("parts") or []
    out = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("text"):
            out.append(str(part["text"]))
        elif part.get("function_call"):
            call = part["function_call"]
            out.append(f"{call.get('name', '?')}({json.dumps(call.get('args') or {}, ensure_ascii=False)})")
        elif part.get("function_response"):
            response = part["function_response"]
            out.append(f"{response.get('name', '?')} -> {json.dumps(response.get('response'), ensure_ascii=False)}")
    if out:
        return "\n".join(out)
    delta = (event.get("actions") or {}).get("state_delta")
    return f"(state change: {json.dumps(delta, ensure_ascii=False)})" if delta else "(event without text)"


def detect(path: Path) -> list[FormatMatch]:
    matches = []
    for candidate in sqlite_files(path):
        tables = sqlite_tables(candidate)
        if (
            SESSION_COLUMNS <= tables.get("sessions", set())
            and EVENT_KEYS <= tables.get("events", set())
            and "app_states" in tables
            and "user_states" in tables
        ):
            matches.append(
                FormatMatch("google-adk", "Google ADK sessions", candidate, open=partial(AdkSource, candidate, tables))
            )
    return matches
