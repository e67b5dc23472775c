"""A person's scratchpad edits on memory.db: set, add and delete a key as curation steps,
journaled, undoable, conflict-checked against the value read, read back as the agent reads it."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers.store_state import sql_rows, state_of
from mnemoscope.storage import open_store
from mnemoscope.storage.curation import Curator, scratch_value
from mnemoscope.storage.errors import (
    ConflictError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    UnsupportedError,
)
from mnemoscope.storage.native.db.sqlite_source import SqliteSource

AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """memory.db as an agent writes it through the embedded API: one session, keys of each type."""
    root = tmp_path / "ws"
    db = SqliteSource.open(root / "memory.db", create=True)
    db.add_session("s1", channel="webshop", title="checkout", started_at=AT)
    db.add_session("s2", title="idle", started_at=AT)
    db.set_scratch("s1", "todo", {"open": ["write docs"], "done": 3}, AT)
    db.set_scratch("s1", "__taskspace_hint__", "~/work/webshop", AT)
    db.set_scratch("s1", "session_facts", "- prefers tea\n- lives in Porto", AT)
    db.close()
    return root


def pad(root: Path, session_id: str = "s1") -> dict[str, str]:
    """The scratchpad as the agent reads it back: memory.db's rows, straight from the file."""
    return dict(sql_rows(root, "SELECT key, value FROM scratchpad WHERE session_id = ? ORDER BY key", session_id))


def test_edit_add_and_delete_keys_keep_their_types_and_undo_puts_every_byte_back(workspace: Path) -> None:
    before = state_of(workspace)["sql"]["scratchpad"]
    events = []
    with open_store(workspace) as store:
        store.subscribe(events.append)
        curator = Curator(store)
        seen = {e.key: e.value for e in store.scratch_entries("s1")}
        edited = curator.set_scratch("s1", "todo", {"open": [], "done": 4}, expected=seen["todo"])
        curator.set_scratch("s1", "session_facts", "- prefers green tea", expected=seen["session_facts"])
        curator.set_scratch("s1", "retries", 3)
        curator.delete_scratch("s1", "__taskspace_hint__", expected=seen["__taskspace_hint__"])
        assert edited.details == {"session_id": "s1", "key": "todo", "from": seen["todo"], "to": '{"open": [], "done": 4}'}
        assert [e.operation for e in store._journal.history(limit=4)] == ["delete", "edit", "edit", "edit"]
        assert store._journal.history(limit=1)[0].targets == ('scratch:["s1", "__taskspace_hint__"]',)
    # A scratchpad key is no memory: its events name none, and say the journal moved.
    assert len(events) == 4 and all(e.ids == () and e.journal for e in events)
    assert pad(workspace) == {"todo": '{"open": [], "done": 4}', "session_facts": "- prefers green tea", "retries": "3"}
    assert json.loads(pad(workspace)["todo"]) == {"open": [], "done": 4}
    assert pad(workspace, "s2") == {}

    with open_store(workspace) as store:  # the journal outlives the process that wrote it
        for _ in range(4):
            Curator(store).undo()
        assert {e.key for e in store.scratch_entries("s1")} == {"todo", "__taskspace_hint__", "session_facts"}
        Curator(store).redo()
        assert json.loads(pad(workspace)["todo"]) == {"open": [], "done": 4}
        Curator(store).undo()
    assert state_of(workspace)["sql"]["scratchpad"] == before


def test_the_demo_workspace_scratchpad_is_curated_like_any_other(demo_path: Path) -> None:
    before = state_of(demo_path)
    with open_store(demo_path) as store:
        session = store.sessions()[0].id
        curator = Curator(store)
        assert curator.scratch_refusals([session]) == {session: ""}
        curator.set_scratch(session, "delegation_result::dl-manual", {"agent": "me", "status": "ok"})
        curator.delete_scratch(session, "session_facts")
        keys = {e.key: e for e in store.scratch_entries(session)}
        assert "session_facts" not in keys and keys["delegation_result::dl-manual"].pattern == "delegation_result"
        curator.undo()
        curator.undo()
    assert state_of(demo_path) == before


def test_a_key_the_agent_changed_since_it_was_read_is_not_overwritten(workspace: Path) -> None:
    with open_store(workspace) as store:
        seen = {e.key: e.value for e in store.scratch_entries("s1")}
        store.set_scratch("s1", "session_facts", "- the agent wrote this meanwhile")
        with pytest.raises(ConflictError, match="session_facts of session s1 changed since it was read"):
            Curator(store).set_scratch("s1", "session_facts", "mine", expected=seen["session_facts"])
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).delete_scratch("s1", "session_facts", expected=seen["session_facts"])
        assert pad(workspace)["session_facts"] == "- the agent wrote this meanwhile"

        with sqlite3.connect(workspace / "memory.db") as con:  # another process removes a key
            con.execute("DELETE FROM scratchpad WHERE key = 'todo'")
        with pytest.raises(ConflictError, match="todo of session s1 was removed since it was read"):
            Curator(store).set_scratch("s1", "todo", [], expected=seen["todo"])
        assert "todo" not in pad(workspace)

        Curator(store).set_scratch("s1", "__taskspace_hint__", "~/elsewhere")
        store.set_scratch("s1", "__taskspace_hint__", "~/the/agent/again")
        with pytest.raises(ConflictError):
            Curator(store).undo()  # undo would overwrite the agent's value: refused
    assert pad(workspace)["__taskspace_hint__"] == "~/the/agent/again"


def test_writes_that_are_refused_change_nothing(workspace: Path) -> None:
    before = state_of(workspace)["sql"]
    with open_store(workspace) as store:
        curator = Curator(store)
        with pytest.raises(NothingToDoError, match="already holds that value"):
            curator.set_scratch("s1", "todo", {"done": 3, "open": ["write docs"]})  # same JSON, other order
        with pytest.raises(NothingToDoError):
            curator.set_scratch("s1", "__taskspace_hint__", "~/work/webshop")
        with pytest.raises(NotFoundError, match="no scratchpad key nope"):
            curator.delete_scratch("s1", "nope")
        with pytest.raises(NotFoundError, match="No session s9"):
            curator.set_scratch("s9", "k", "v")
        with pytest.raises(UnsupportedError, match="cannot be empty"):
            curator.set_scratch("s1", "", "v")
        with pytest.raises(UnsupportedError, match="not JSON"):
            curator.set_scratch("s1", "k", {1, 2})
        assert curator.scratch_refusals(["s1", "s9"]) == {"s1": "", "s9": f"No session s9 in {workspace}."}
        assert store._journal.history() == []
    with open_store(workspace, read_only=True) as store:
        curator = Curator(store)
        assert not curator.scratch_writable("s1")
        assert "opened read-only" in curator.scratch_refusals(["s1"])["s1"]
        with pytest.raises(ReadOnlyError):
            curator.delete_scratch("s1", "todo")
    assert state_of(workspace)["sql"] == before


def test_a_typed_value_is_json_when_it_parses_and_text_otherwise() -> None:
    assert scratch_value('{"a": [1, 2]}') == {"a": [1, 2]}
    assert scratch_value("42") == 42 and scratch_value("true") is True and scratch_value("null") is None
    assert scratch_value('"quoted"') == "quoted"
    assert scratch_value("~/work/webshop") == "~/work/webshop"
    assert scratch_value("- a\n- b") == "- a\n- b"
    assert scratch_value("NaN") == "NaN"  # no JSON: kept as the text typed


def test_a_write_memory_db_refuses_is_refused_before_the_journal_holds_it(workspace: Path) -> None:
    with sqlite3.connect(workspace / "memory.db") as con:  # another program guards its scratchpad
        con.execute("CREATE TRIGGER keep_pad BEFORE UPDATE ON scratchpad "
                    "BEGIN SELECT RAISE(ABORT, 'the agent keeps its scratchpad'); END")
    before = pad(workspace)
    with open_store(workspace) as store:
        with pytest.raises(StoreError, match="the agent keeps its scratchpad"):
            Curator(store).set_scratch("s1", "todo", [])
        assert store._journal.count() == 0
    assert pad(workspace) == before
