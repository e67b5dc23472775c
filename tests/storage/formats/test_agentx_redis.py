"""AgentX's working memory in a real Redis (seed 002), written as AgentX's WorkingMemory writes it:
keys decoded into user, channel and conversation, every type shown readably with its TTL, edits
that keep the TTL, deletes and undo, conflicts with AgentX writing, and its TTLs as retention."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from helpers.redis_server import (
    ALICE,
    GLOBAL_SESSION,
    RUST,
    RUST_CHAT,
    RUST_SESSION,
    TRAVEL_SESSION,
    agentx_redis,  # noqa: F401 (fixture)
    redis_server,  # noqa: F401 (fixture)
)
from mnemoscope.storage import open_store
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ConflictError, ReadOnlyError, SecretRefusedError, UnreadableStoreError
from mnemoscope.storage.formats.agentx_redis import RECORD_PREFIX, decode_key
from mnemoscope.storage.retention import EXPIRE, RetentionSource
from mnemoscope.storage.timeutil import utcnow
from mnemoscope.storage.views.scratchpad import scratchpad

CURRENT_FILE = f"{RUST_SESSION}:context:current_file"


@pytest.fixture
def store(agentx_redis: Any) -> Any:  # noqa: F811
    opened = open_store(agentx_redis.url)
    yield opened
    opened.close()


def entries_of(store: Any) -> dict[tuple[str, str], Any]:
    return {(e.session_id, e.key): e for e in store.scratch_entries()}


def test_a_key_is_decoded_into_its_user_channel_conversation_and_entry() -> None:
    name = decode_key(f"{RUST_SESSION}:context:active_goal")
    assert name is not None
    assert (name.user_id, name.channel, name.conversation_id) == (ALICE, RUST, RUST_CHAT)
    assert (name.session_id, name.entry) == (RUST_SESSION, "context:active_goal")
    assert decode_key(f"consolidation:lock:{RUST_CHAT}").session_id == "consolidation"  # type: ignore[union-attr]
    assert decode_key("session:s1:tools").session_id == "session:s1"  # type: ignore[union-attr]
    assert decode_key("cache:embedding:abc") is None and decode_key("working:alice:_global") is None


def test_the_url_opens_without_its_password_in_what_is_shown(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    info = store.info()
    assert info["path"] == f"redis://127.0.0.1:{agentx_redis.server.port}/0"
    assert agentx_redis.server.password not in json.dumps(info, default=str)
    [source] = info["formats"]
    assert source["format"] == "agentx-redis" and source["server"].startswith("Redis 7")
    assert "working:* (7 keys)" in source["files"] and "consolidation:* (2 keys)" in source["files"]
    assert source["problems"] == ["1 key outside AgentX's patterns (working:*, consolidation:*, session:*) is not shown"]
    assert store.count() == 0  # working memory holds scratchpad keys, no memories


def test_sessions_are_conversations_with_their_channel_user_and_turns(store: Any) -> None:
    sessions = {s.id: s for s in store.sessions()}
    assert set(sessions) == {RUST_SESSION, GLOBAL_SESSION, TRAVEL_SESSION, "consolidation", "session:sess-9"}
    rust = sessions[RUST_SESSION]
    assert (rust.channel, rust.user_id, rust.turn_count) == (RUST, ALICE, 2)
    assert rust.started_at is not None and sessions["consolidation"].started_at is None
    assert [s.id for s in store.sessions(("_global",))] == [GLOBAL_SESSION]
    turns = store.turns(RUST_SESSION)
    assert [(t.index, t.role) for t in turns] == [(0, "user"), (1, "assistant")]  # oldest first, as said
    assert turns[0].content == "Why does the parser fail the borrow checker?"
    day = turns[0].timestamp.strftime("%Y-%m-%d")
    assert store._sources[0].turn_bin_counts("%Y-%m-%d", None, None) == {day: 4}  # every conversation's turns


def test_every_type_agentx_writes_is_shown_readably_with_its_ttl(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    entries = entries_of(store)
    written = agentx_redis.written_at
    goal = entries[(RUST_SESSION, "context:active_goal")]
    assert json.loads(goal.value)["description"] == "Fix the parser's lifetimes"  # a string of JSON, as stored
    turns = json.loads(entries[(RUST_SESSION, "turns")].value)  # a list: newest first, as LPUSH keeps it
    assert [t["role"] for t in turns] == ["assistant", "user"]
    job = json.loads(entries[("consolidation", "job:job-42")].value)  # a hash as an object
    assert job["status"] == "running" and job["conversation_id"] == RUST_CHAT
    assert json.loads(entries[("session:sess-9", "tools")].value) == ["calculator", "web_search"]  # a set
    assert entries[("consolidation", f"lock:{RUST_CHAT}")].value == "worker-3"
    for key, seconds in (("turns", 3600), ("context:current_file", 600), ("thoughts", 3600)):
        expires = entries[(RUST_SESSION, key)].expires_at
        assert expires is not None and abs((expires - written).total_seconds() - seconds) < 5, key
    scratch = entries[("session:sess-9", "scratch")]
    assert scratch.expires_at is None and scratch.updated_at is None  # no TTL; Redis keeps no write time
    shown = {s["id"]: s for s in scratchpad(store, now=written)}
    [current] = [e for e in shown[RUST_SESSION]["entries"] if e["key"] == "context:current_file"]
    assert 595 <= current["ttl_seconds"] <= 600
    assert abs((datetime.fromisoformat(current["expires_at"]) - written).total_seconds() - 600) < 5


def test_an_edit_keeps_the_ttl_and_undo_puts_the_value_back(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    r = agentx_redis.client
    expiry = r.pexpiretime(CURRENT_FILE)
    curator = Curator(store)
    outcome = curator.set_scratch(RUST_SESSION, "context:current_file", "src/lexer.rs", expected='"src/parser.rs"')
    assert r.get(CURRENT_FILE) == '"src/lexer.rs"'  # JSON, as AgentX's WorkingMemory.get reads it
    assert r.pexpiretime(CURRENT_FILE) == expiry  # the TTL runs on, untouched
    assert outcome.details["from"] == '"src/parser.rs"' and outcome.details["to"] == '"src/lexer.rs"'
    thoughts_key = f"{RUST_SESSION}:thoughts"
    thoughts_expiry = r.pexpiretime(thoughts_key)
    thoughts = json.loads(entries_of(store)[(RUST_SESSION, "thoughts")].value)
    thoughts.append({"thought": "Added by hand", "timestamp": "2026-11-27T10:00:00+00:00"})
    curator.set_scratch(RUST_SESSION, "thoughts", thoughts)
    raw = r.lrange(thoughts_key, 0, -1)
    assert len(raw) == 2 and json.loads(raw[1])["thought"] == "Added by hand"
    assert r.pexpiretime(thoughts_key) == thoughts_expiry  # a list rewritten keeps its expiry to the millisecond
    curator.undo()
    assert len(r.lrange(thoughts_key, 0, -1)) == 1 and r.pexpiretime(thoughts_key) == thoughts_expiry
    curator.undo()
    assert r.get(CURRENT_FILE) == '"src/parser.rs"' and r.pexpiretime(CURRENT_FILE) == expiry
    curator.redo()
    assert r.get(CURRENT_FILE) == '"src/lexer.rs"' and r.pexpiretime(CURRENT_FILE) == expiry


def test_a_delete_is_undone_with_the_key_s_type_value_and_expiry(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    r = agentx_redis.client
    job = "consolidation:job:job-42"
    fields, expiry = r.hgetall(job), r.pexpiretime(job)
    curator = Curator(store)
    curator.delete_scratch("consolidation", "job:job-42")
    assert not r.exists(job) and ("consolidation", "job:job-42") not in entries_of(store)
    [entry] = store.history()  # journaled in Mnemoscope's folder for the server
    assert (entry.operation, entry.targets) == ("delete", (RECORD_PREFIX + job,))
    curator.undo()
    assert r.type(job) == "hash" and r.hgetall(job) == fields and r.pexpiretime(job) == expiry


def test_a_new_working_key_gets_agentx_s_hour(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    Curator(store).set_scratch(TRAVEL_SESSION, "context:hotel", {"name": "Alfama Inn"})
    key = f"{TRAVEL_SESSION}:context:hotel"
    assert json.loads(agentx_redis.client.get(key)) == {"name": "Alfama Inn"}
    assert 3590 <= agentx_redis.client.ttl(key) <= 3600


def test_a_key_agentx_changed_since_it_was_read_is_not_overwritten(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    r = agentx_redis.client
    read = entries_of(store)[(RUST_SESSION, "context:current_file")].value
    r.set(CURRENT_FILE, json.dumps("src/main.rs"), ex=600)  # AgentX writes meanwhile
    curator = Curator(store)
    with pytest.raises(ConflictError, match="changed since it was read"):
        curator.set_scratch(RUST_SESSION, "context:current_file", "src/lexer.rs", expected=read)
    with pytest.raises(ConflictError):
        curator.delete_scratch(RUST_SESSION, "context:current_file", expected=read)
    assert r.get(CURRENT_FILE) == '"src/main.rs"'
    source = store._sources[0]
    record = RECORD_PREFIX + CURRENT_FILE
    stale = source.read_record(record)
    r.set(CURRENT_FILE, json.dumps("src/ast.rs"), keepttl=True)
    with pytest.raises(ConflictError):  # the write primitive compares what it was handed with the key
        source.write_record(record, stale, {**stale, "value": json.dumps("src/lexer.rs")})
    assert r.get(CURRENT_FILE) == '"src/ast.rs"'
    r.expire(CURRENT_FILE, 900)  # a TTL moved (AgentX's sliding expiry) is no conflict, and is kept
    current = source.read_record(record)
    source.write_record(record, {**current, "expires_ms": 1}, {**current, "value": json.dumps("src/lexer.rs")})
    assert 895 <= r.ttl(CURRENT_FILE) <= 900


def test_a_deleted_key_whose_ttl_ran_out_stays_gone_on_undo(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    r = agentx_redis.client
    lock = f"consolidation:lock:{RUST_CHAT}"
    r.pexpire(lock, 400)
    curator = Curator(store)
    curator.delete_scratch("consolidation", f"lock:{RUST_CHAT}")
    time.sleep(0.5)
    curator.undo()
    assert not r.exists(lock)  # as AgentX's TTL would have it


def test_opened_read_only_nothing_is_written(agentx_redis: Any) -> None:  # noqa: F811
    with open_store(agentx_redis.url, read_only=True) as store:
        with pytest.raises(ReadOnlyError):
            Curator(store).delete_scratch(RUST_SESSION, "context:current_file")
    assert agentx_redis.client.exists(CURRENT_FILE)


def test_a_unix_socket_url_opens_the_same_keys(agentx_redis: Any) -> None:  # noqa: F811
    from urllib.parse import quote

    password = quote(agentx_redis.server.password, safe="")
    with open_store(f"unix://{agentx_redis.server.socket}?db=0&password={password}") as store:
        assert store.location == f"unix://{agentx_redis.server.socket}?db=0"
        assert (RUST_SESSION, "context:current_file") in entries_of(store)


def test_a_wrong_password_is_refused_and_an_unreachable_server_is_unreadable(agentx_redis: Any) -> None:  # noqa: F811
    port = agentx_redis.server.port
    with pytest.raises(SecretRefusedError, match="refused"):
        open_store(f"redis://:wrong@127.0.0.1:{port}/0")
    with pytest.raises(UnreadableStoreError, match="Cannot reach Redis"):
        open_store("redis://127.0.0.1:9/0")


def test_upcoming_lists_each_key_whose_ttl_ends_before_until(store: Any, agentx_redis: Any) -> None:  # noqa: F811
    [source] = store._sources
    assert isinstance(source, RetentionSource)
    now = utcnow()
    soon = source.upcoming(now, now + timedelta(minutes=15))
    assert [u.record_id for u in soon] == [f"consolidation:lock:{RUST_CHAT}", CURRENT_FILE]  # 5 min, 10 min
    assert {u.action for u in soon} == {EXPIRE}
    assert soon[1].rule.startswith("Redis TTL (set by AgentX: working memory")
    assert soon[0].rule == "Redis TTL (set by AgentX: consolidation job tracking and locks)"
    assert soon[1].preview == '"src/parser.rs"' and soon[1].owner == "AgentX working memory (Redis)"
    assert abs((soon[1].when - agentx_redis.written_at).total_seconds() - 600) < 5
    today = {u.record_id for u in source.upcoming(now, now + timedelta(hours=2))}
    assert f"{RUST_SESSION}:turns" in today and f"{GLOBAL_SESSION}:turns" in today
    assert f"{TRAVEL_SESSION}:context:budget" not in today and "consolidation:job:job-42" not in today
    week = {u.record_id for u in source.upcoming(now, now + timedelta(days=7))}
    assert f"{TRAVEL_SESSION}:context:budget" in week and "session:sess-9:scratch" not in week  # no TTL, never


def test_neo4j_urls_are_refused_with_one_clear_message() -> None:
    for url in ("bolt://neo4j:secret@127.0.0.1:7687", "neo4j://127.0.0.1"):
        with pytest.raises(UnreadableStoreError, match="Neo4j cannot be read here") as refused:
            open_store(url)
        assert "secret" not in str(refused.value)
