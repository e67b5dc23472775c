"""The scratchpad as data (storage/views/scratchpad.py): each session's keys, reserved patterns
labelled, JSON values decoded, and keys of sessions with no session row shown."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemoscope.storage import open_store
from mnemoscope.storage.views.scratchpad import scratchpad


def test_the_scratchpad_is_each_sessions_keys_labelled_with_json_values_decoded(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        sessions = scratchpad(store)
        assert [s["id"] for s in sessions] == [s.id for s in store.sessions()]
        latest = sessions[0]
        assert (latest["id"], latest["channel"], latest["title"]) == ("s-20261023-08", "webshop", "webshop session 9")
        entries = {e["key"]: e for e in latest["entries"]}
        assert entries["delegation_result::dl-008"]["json"] == {"agent": "writer", "status": "ok", "words": 428}
        assert (entries["delegation_result::dl-008"]["pattern"], entries["delegation_result::dl-008"]["pattern_id"]) == (
            "delegation_result", "dl-008")
        assert entries["__pending_subagent_summaries__"]["json"] == ["sa-009"]
        assert entries["__taskspace_hint__"]["json"] is None  # plain text stays text
        assert entries["__taskspace_hint__"]["label"] == "Taskspace path hint"
        only = scratchpad(store, "s-20260911-01")
        assert [s["id"] for s in only] == ["s-20260911-01"]
        assert {e["key"] for e in only[0]["entries"]} == {"__taskspace_hint__", "session_facts",
                                                          "subagent_result::sa-001", "todo"}


def test_scratch_keys_of_a_session_with_no_row_are_shown_not_hidden(demo_path: Path) -> None:
    with sqlite3.connect(demo_path / "memory.db") as con:  # an agent writing without foreign keys
        con.execute("INSERT INTO scratchpad (session_id, key, value, updated_at) VALUES "
                    "('s-gone', 'todo', '{broken json', '2026-10-30T00:00:00+00:00')")
    con.close()
    with open_store(demo_path) as store:
        orphan = scratchpad(store)[-1]
        assert (orphan["id"], orphan["channel"], orphan["title"]) == ("s-gone", None, "(no session row)")
        assert [(e["key"], e["value"], e["json"]) for e in orphan["entries"]] == [("todo", "{broken json", None)]
