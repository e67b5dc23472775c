"""The canonical model: stored values read into layers and statuses, records as JSON, the fast
builder equal to the constructor, and reserved scratchpad keys told apart from an agent's own."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import open_store
from mnemoscope.storage.model import (
    AuditEntry,
    Entity,
    Kind,
    Layer,
    Memory,
    ScratchEntry,
    SourceRef,
    Status,
    classify_scratch_key,
    field_names,
    parse_layer,
    parse_status,
)

AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def test_stored_values_read_as_layers_and_statuses_whatever_their_case() -> None:
    assert parse_layer("EPISODIC") is Layer.EPISODIC and parse_layer(None) is Layer.SEMANTIC
    assert parse_layer("dream", Layer.WORKING) is Layer.WORKING
    assert parse_status("Archived") is Status.ARCHIVED and parse_status("gone?") is Status.ACTIVE


def test_the_builder_makes_what_the_constructor_makes() -> None:
    source = SourceRef.built(kind=Kind.MARKDOWN, location="MEMORY.md:3-3", path="MEMORY.md", line_start=3, line_end=3)
    assert source == SourceRef(Kind.MARKDOWN, "MEMORY.md:3-3", "MEMORY.md", 3, 3)
    values = dict(id="m-1", source=source, layer=Layer.CORE, channel="_global", content="Dana prefers tea",
                  created_at=AT, updated_at=AT, last_accessed=AT)
    built = Memory.built(**values)
    assert built == Memory(**values) and built.metadata == {} and built.status is Status.ACTIVE
    assert built.metadata is not Memory.built(**values).metadata  # each gets its own
    edited = built.with_changes(content="Dana prefers coffee")
    assert edited.content == "Dana prefers coffee" and built.content == "Dana prefers tea"
    assert field_names(SourceRef)[:2] == ("kind", "location")


def test_records_say_themselves_as_json(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        memory = store.page(limit=1)[0]
        entity = store.entities()[0]
    data = json.loads(json.dumps(memory.to_dict()))
    assert data["id"] == memory.id and data["layer"] == memory.layer.value and data["status"] == "active"
    assert datetime.fromisoformat(data["created_at"]) == memory.created_at
    assert data["source"]["kind"] == memory.source.kind.value
    assert json.loads(json.dumps(entity.to_dict()))["name"] == entity.name
    assert SourceRef(Kind.SQLITE, "memory.db:memories/m-1").to_dict() == {"kind": "sqlite",
                                                                           "location": "memory.db:memories/m-1"}
    assert Entity("e", "Dana", "person").to_dict()["last_accessed"] is None
    entry = AuditEntry(1, AT, "edit", ("m-1",), "_global", {"content": "a"}, {"content": "b"}, "dana", "done")
    assert entry.to_dict()["targets"] == ["m-1"] and entry.to_dict()["at"] == AT.isoformat()


def test_reserved_scratchpad_keys_are_told_from_an_agents_own() -> None:
    assert classify_scratch_key("subagent_result::task-7") == ("subagent_result", "task-7", "Subagent result")
    assert classify_scratch_key("session_facts") == ("session_facts", None, "Session facts (MemoryHook)")
    assert classify_scratch_key("__something_new__") == ("internal", None, "Internal runtime key")
    assert classify_scratch_key("todo") == (None, None, "User key")
    entry = ScratchEntry("s-1", "delegation_result::d-2", "done", AT)
    assert (entry.pattern, entry.pattern_id, entry.label) == ("delegation_result", "d-2", "Delegation result")
    assert entry.to_dict()["updated_at"] == AT.isoformat()




@pytest.mark.parametrize(
    "key, pattern, captured",
    [
        ("subagent_result::sa-1", "subagent_result", "sa-1"),
        ("delegation_result::x", "delegation_result", "x"),
        ("session_facts", "session_facts", None),
        ("__pending_subagent_summaries__", "pending_subagent_summaries", None),
        ("__taskspace_hint__", "taskspace_hint", None),
        ("__taskspace_label_hint__", "taskspace_label_hint", None),
        ("todo", None, None),
    ],
)
def test_reserved_scratchpad_keys(key: str, pattern: str | None, captured: str | None) -> None:
    assert classify_scratch_key(key)[:2] == (pattern, captured)
