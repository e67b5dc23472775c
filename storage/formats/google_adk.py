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
import sqlite3
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import UnsupportedError
from ..model import GLOBAL_CHANNEL, Layer, Memory, ScratchEntry, Session, SourceRef, Turn
from ..query import MemoryQuery, Order
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from .base import Contents, json_object, plain_row, reading, sqlite_files, sqlite_tables
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision

SESSION_COLUMNS = {"app_name", "user_id", "id", "state", "create_time", "update_time"}
EVENT_KEYS = {"id", "app_name", "user_id", "session_id"}
ROLES = {"model": "assistant", "user": "user"}
# An event's id within its file: its session and its own id (what every order's ties rank by).
EVENT_ID = "(events.session_id || '/' || events.id)"


class AdkSource(SqlFormatSource):
    """One ADK session database: its events read with SQL where they live (sql_backed.py), in
    the order of their timestamps (ties by id), a Memory built only for the events returned;
    sessions, turns and state by SQL per session."""

    format = "google-adk"
    label = "Google ADK sessions"
    turns_are_memories = True
    layer = Layer.EPISODIC
    orders_by_effective_salience = True  # ADK keeps no salience: that order is the ids'

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path], path)
        self.v1 = "event_data" in tables.get("events", set())
        self._columns = tables.get("events", set())
        self.id_prefix = f"adk:{path.name}:"
        self.editable_fields = ("content",) if self.v1 else ()
        self.read_only_reason = "" if self.v1 else (
            "an ADK V0 schema (1.19-1.21) keeps event actions pickled; Mnemoscope reads it but does not write it"
        )
        text = "event_data" if self.v1 else "content" if "content" in self._columns else ""
        self.spec = TableSpec(
            "events", key="rowid", channel="app_name", created="timestamp", text=text,
            select='events.rowid AS "rowid", events.*', record_sql=EVENT_ID,
        )
        self._location = f"{path.name}:events/"

    def load(self) -> Contents:
        contents = Contents()
        if not self.v1:
            contents.problems.append("V0 schema: event actions are pickled and not read")
        return contents

    # -- events as memories --------------------------------------------------------------------

    def memory_of(self, row: sqlite3.Row) -> Memory:
        event = self._event(row)
        at = self.time_of(row["timestamp"])
        key = f"{row['session_id']}/{row['id']}"
        return Memory(
            id=self.id_prefix + key,
            source=SourceRef(self.kind, self._location + str(row["id"]), path=self.path.name, format=self.format),
            layer=Layer.EPISODIC,
            channel=row["app_name"] or GLOBAL_CHANNEL,
            content=event_text(event),
            created_at=at,
            updated_at=at,
            last_accessed=at,
            metadata={"session_id": row["session_id"], "user_id": row["user_id"], "author": str(event.get("author") or ""),
                      "invocation_id": event.get("invocation_id") or row["invocation_id"]},
            revision=row_revision(row),
        )

    def text_of(self, raw: Any) -> str:
        return event_text(json_object(raw) if self.v1 else {"content": json_object(raw)})

    def text_sql(self) -> str:
        return f'events."{self.spec.text}"' if self.spec.text else "NULL"

    def odd_rows_for(self, needles: Sequence[str]) -> str:
        """Events whose text is not their text parts as stored: a function call or response, a
        state change, no text at all (event_text writes those out), or JSON that does not read."""
        text = self.text_sql()
        parts = "'$.content.parts'" if self.v1 else "'$.parts'"
        # (CASE, not AND: SQLite may read JSON functions' arguments past a false json_valid, and raise)
        return (
            f"NOT CASE WHEN json_valid({text}) THEN CASE WHEN json_type({text}, {parts}) IS 'array' THEN NOT EXISTS "
            f"(SELECT 1 FROM json_each({text}, {parts}) AS p WHERE CASE WHEN p.type = 'object' THEN "
            "json_type(p.value, '$.text') IS NOT 'text' OR json_extract(p.value, '$.text') = '' ELSE 1 END) "
            "ELSE 0 END ELSE 0 END"
        )

    def _event(self, row: Any) -> dict[str, Any]:
        if self.v1:
            return json_object(row["event_data"])
        event = {"author": row["author"] if "author" in row.keys() else ""}
        if "content" in row.keys():
            event["content"] = json_object(row["content"])
        return event

    def _order(self, query: MemoryQuery) -> str:
        direction = "DESC" if query.descending else "ASC"
        timed = query.order not in (Order.SALIENCE, Order.EFFECTIVE_SALIENCE)  # (kept by no event: the ids' order)
        return f"{f'events.timestamp {direction}, ' if timed else ''}{EVENT_ID} {direction}"

    def page(self, query: MemoryQuery, limit: int, offset: int = 0, after: Memory | None = None) -> list[Memory]:
        if after is None or not self.owns(after.id):
            return super().page(query, limit, offset, after)
        where = self.where(query)
        if where is None or limit <= 0:
            return []
        found = self._event_key(after.id)
        if found is None:  # gone since it was shown: its place is found by its time and id
            return self._page_after_other(query, limit, offset, after)
        timed = query.order not in (Order.SALIENCE, Order.EFFECTIVE_SALIENCE)
        return self._page_seeking(query, limit, offset, where, "events", "events.timestamp" if timed else None, EVENT_ID,
                                  found[0])

    def record_key(self, record_id: str) -> int:
        """The rowid of the event a record id names; -1 when the file holds none."""
        found = self._event_key(record_id)
        return found[0] if found is not None else -1

    def _event_key(self, record_id: str) -> tuple[int, tuple[str, str, str, str]] | None:
        """(rowid, (id, app_name, user_id, session_id)) of the event a record id names. The id
        joins session and event id with "/", which either may hold: each split is looked up."""
        if not record_id.startswith(self.id_prefix):
            return None
        key = record_id[len(self.id_prefix):]
        for at in (i for i, c in enumerate(key) if c == "/"):
            rows = self.rows(
                "SELECT rowid, id, app_name, user_id, session_id FROM events WHERE session_id = ? AND id = ? "
                "ORDER BY rowid LIMIT 1", (key[:at], key[at + 1:]))
            if rows:
                row = rows[0]
                return int(row[0]), (row[1], row[2], row[3], row[4])
        return None

    # -- sessions, turns and state: SQL per session --------------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        wanted = f" WHERE app_name IN ({', '.join('?' * len(channels))})" if channels else ""
        counts: dict[str, int] = {r[0]: r[1] for r in self.rows("SELECT session_id, count(*) FROM events GROUP BY session_id")}
        found = []
        for row in self.rows(f"SELECT * FROM sessions{wanted} ORDER BY create_time", channels):
            started = parse_time(row["create_time"]) or utcnow()
            found.append(Session(row["id"], row["app_name"], f"{row['app_name']} / {row['user_id']}", started,
                                 counts.get(row["id"], 0), row["user_id"]))
        return found

    def holds_session(self, session_id: str) -> bool:
        return bool(self.rows("SELECT 1 FROM sessions WHERE id = ? LIMIT 1", (session_id,)))

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        rows = self.rows(
            "SELECT * FROM events WHERE session_id = ? ORDER BY timestamp, id LIMIT ? OFFSET ?", (session_id, limit, offset)
        )
        turns = []
        for index, row in enumerate(rows, start=offset):
            event = self._event(row)
            author = str(event.get("author") or "")
            role = ROLES.get(str((event.get("content") or {}).get("role")), author or "event")
            turns.append(Turn(row["session_id"], index, role, event_text(event), parse_time(row["timestamp"]) or utcnow()))
        return turns

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        wanted = " WHERE id = ?" if session_id is not None else ""
        sessions = self.rows(f"SELECT * FROM sessions{wanted} ORDER BY create_time", () if session_id is None else (session_id,))
        if not sessions:
            return []
        app_states = {r["app_name"]: r for r in self.rows("SELECT * FROM app_states")}
        user_states = {(r["app_name"], r["user_id"]): r for r in self.rows("SELECT * FROM user_states")}
        entries = []
        for row in sessions:
            started = parse_time(row["create_time"]) or utcnow()
            updated = parse_time(row["update_time"]) or started
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
                    entries.append(ScratchEntry(row["id"], prefix + key, text, at))
        return entries

    # -- the write primitive (V1 only) -------------------------------------------------------

    def _key_of(self, record_id: str, *snapshots: Snapshot | None) -> tuple[str, str, str, str]:
        found = self._event_key(record_id)
        if found is not None:
            return found[1]
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
