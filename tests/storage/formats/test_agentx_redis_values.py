"""A Redis key's value as a person reads and types it, and back as AgentX stores it: JSON where
AgentX writes JSON, the bytes of every element left alone where they decode to what was typed."""

from __future__ import annotations

import json

import pytest
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.formats.agentx_redis_values import (
    encoded,
    same_key,
    shown_value,
    snapshot_of,
    unwritable_reason,
    writable,
)

CONTEXT = "working:alice:_global:global:context:current_file"
TURNS = "working:alice:_global:global:turns"
# As AgentX's add_turn writes them; the second with spacing json.dumps would not produce.
TURN_ONE = json.dumps({"index": 0, "role": "user", "content": "hi"})
TURN_TWO = '{"index":1,"role":"assistant","content":"hello"}'


def test_a_working_context_value_stays_json_as_agentx_reads_it() -> None:
    current = snapshot_of(CONTEXT, "string", b'"src/parser.rs"', -1)
    assert shown_value(current) == '"src/parser.rs"' and current["expires_at"] is None
    assert encoded(current, "src/lexer.rs") == '"src/lexer.rs"'  # typed as text, stored as JSON
    assert encoded(current, "src/parser.rs") == '"src/parser.rs"'
    lock = snapshot_of("consolidation:lock:c1", "string", b"worker-3", 1_800_000_000_000)
    assert encoded(lock, "worker-4") == "worker-4"  # not JSON before, not JSON now
    assert lock["expires_at"] == "2027-01-15T08:00:00.000+00:00"


def test_a_list_edit_keeps_the_bytes_of_the_elements_left_alone() -> None:
    current = snapshot_of(TURNS, "list", [TURN_TWO.encode(), TURN_ONE.encode()], 1_800_000_000_000)
    shown = json.loads(shown_value(current))
    assert shown[0] == {"index": 1, "role": "assistant", "content": "hello"}  # decoded for reading
    shown.append({"index": 2, "role": "user", "content": "bye"})
    stored = encoded(current, shown)
    assert stored[:2] == [TURN_TWO, TURN_ONE]  # byte for byte
    assert json.loads(stored[2]) == {"index": 2, "role": "user", "content": "bye"}
    assert same_key(current, {**current, "expires_ms": 1})  # a moved TTL is the same key
    assert not same_key(current, {**current, "value": stored}) and not same_key(current, None)


def test_hashes_sets_and_sorted_sets_take_the_shape_of_their_type() -> None:
    job = snapshot_of("consolidation:job:j1", "hash", {b"status": b"running", b"n": b"3"}, -1)
    assert json.loads(shown_value(job)) == {"n": "3", "status": "running"}
    assert encoded(job, {"status": "done", "n": "3"}) == {"n": "3", "status": "done"}
    with pytest.raises(UnsupportedError, match="give its fields as a JSON object"):
        encoded(job, ["done"])
    tools = snapshot_of("session:s1:tools", "set", {b"web_search", b"calculator"}, -1)
    assert encoded(tools, ["calculator", "maps", "calculator"]) == ["calculator", "maps"]
    ranks = snapshot_of("session:s1:ranks", "zset", [(b"a", 1.0), (b"b", 2.0)], -1)
    assert json.loads(shown_value(ranks)) == {"a": 1.0, "b": 2.0}
    assert encoded(ranks, {"b": 0.5, "a": 1}) == [["b", 0.5], ["a", 1.0]]


def test_streams_and_bytes_that_are_no_text_are_shown_never_written() -> None:
    events = snapshot_of("session:s1:events", "stream", [(b"1-0", {b"kind": b"start"})], -1)
    assert not writable(events) and "shown, not written" in unwritable_reason(events)
    with pytest.raises(UnsupportedError):
        encoded(events, [])
    blob = snapshot_of("session:s1:blob", "string", b"\xff\xfe", -1)
    assert blob["binary"] and not writable(blob) and "no text" in unwritable_reason(blob)
