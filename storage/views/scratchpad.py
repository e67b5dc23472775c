"""The scratchpad as data, for the CLI and the GUI: each session's keys, JSON values decoded."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ..store import MemoryStore
from ..timeutil import utcnow


def scratchpad(store: MemoryStore, session_id: str | None = None, now: datetime | None = None) -> list[dict[str, Any]]:
    """Sessions -> keys -> values, reserved key patterns labelled, JSON values decoded; a key its
    owner expires (a Redis TTL) with the seconds it has left at now."""
    now = now or utcnow()
    entries: dict[str, list[dict[str, Any]]] = {}
    for entry in store.scratch_entries(session_id):
        item = entry.to_dict()
        item["json"] = _json_or_none(entry.value)
        item["ttl_seconds"] = max(0, int((entry.expires_at - now).total_seconds())) if entry.expires_at else None
        entries.setdefault(entry.session_id, []).append(item)
    sessions = store.sessions()
    out = []
    for session in sessions:
        if session_id and session.id != session_id:
            continue
        out.append({**session.to_dict(), "entries": entries.pop(session.id, [])})
    # Scratch keys of sessions with no session row are shown, not hidden.
    for orphan, items in sorted(entries.items()):
        out.append({"id": orphan, "channel": None, "title": "(no session row)", "entries": items})
    return out


def _json_or_none(value: str) -> Any:
    text = value.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None
