"""Letta SQLite databases (~/.letta/sqlite.db), older and newer shapes.

Letta is a server (letta 0.x pulls a web stack and runs its own migrations) and
cannot run offline here, so the databases are built from its published ORM
(letta/orm: ``block``, ``blocks_agents``, ``agents``, passages, ``messages``,
with SqlalchemyBase's ``is_deleted``): newer releases keep archival passages in
``archival_passages`` through ``archives_agents`` and message ``content`` as a
list of parts; older ones ``agent_passages`` with an ``agent_id`` and ``text``.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ReadOnlyError
from mnemoscope.storage.model import Layer
from mnemoscope.storage.views.search import search
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store

COMMON = """
CREATE TABLE agents (id VARCHAR PRIMARY KEY, name VARCHAR, system VARCHAR, created_at DATETIME, is_deleted BOOLEAN DEFAULT 0);
CREATE TABLE block (id VARCHAR PRIMARY KEY, label VARCHAR NOT NULL, value VARCHAR NOT NULL, "limit" INTEGER,
    description VARCHAR, is_template BOOLEAN DEFAULT 0, metadata_ JSON, organization_id VARCHAR,
    created_at DATETIME, updated_at DATETIME, is_deleted BOOLEAN DEFAULT 0);
CREATE TABLE blocks_agents (agent_id VARCHAR, block_id VARCHAR, block_label VARCHAR, PRIMARY KEY (agent_id, block_id));
"""
NEWER = COMMON + """
CREATE TABLE archival_passages (id VARCHAR PRIMARY KEY, text VARCHAR NOT NULL, embedding BLOB, embedding_config JSON,
    metadata_ JSON, tags JSON, archive_id VARCHAR, organization_id VARCHAR, created_at DATETIME, updated_at DATETIME,
    is_deleted BOOLEAN DEFAULT 0);
CREATE TABLE archives_agents (agent_id VARCHAR, archive_id VARCHAR, PRIMARY KEY (agent_id, archive_id));
CREATE TABLE messages (id VARCHAR PRIMARY KEY, agent_id VARCHAR, role VARCHAR, text VARCHAR, content JSON,
    tool_calls JSON, sequence_id INTEGER, created_at DATETIME, is_deleted BOOLEAN DEFAULT 0);
"""
OLDER = COMMON + """
CREATE TABLE agent_passages (id VARCHAR PRIMARY KEY, text VARCHAR NOT NULL, embedding BLOB, metadata_ JSON,
    agent_id VARCHAR, organization_id VARCHAR, created_at DATETIME, is_deleted BOOLEAN DEFAULT 0);
CREATE TABLE messages (id VARCHAR PRIMARY KEY, agent_id VARCHAR, role VARCHAR, text VARCHAR,
    created_at DATETIME, is_deleted BOOLEAN DEFAULT 0);
"""


def _common_rows(con) -> None:
    con.execute("INSERT INTO agents (id, name, created_at) VALUES ('agent-1', 'travel-agent', '2026-11-18 09:00:00')")
    con.executemany(
        'INSERT INTO block (id, label, value, "limit", description, created_at, updated_at, is_deleted) '
        "VALUES (?, ?, ?, 5000, ?, '2026-11-18 09:00:00', '2026-11-20 09:00:00', ?)",
        [("block-h", "human", "Name: Ana. Prefers trains.", "about the user", 0),
         ("block-p", "persona", "I am a careful travel agent.", "who I am", 0),
         ("block-x", "scratch", "deleted block", "", 1)],
    )
    con.executemany("INSERT INTO blocks_agents VALUES ('agent-1', ?, ?)", [("block-h", "human"), ("block-p", "persona")])


def build_letta_home(tmp_path: Path) -> Path:
    db = tmp_path / ".letta" / "sqlite.db"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.executescript(NEWER)
    _common_rows(con)
    con.execute("INSERT INTO archives_agents VALUES ('agent-1', 'archive-1')")
    con.executemany(
        "INSERT INTO archival_passages (id, text, embedding, metadata_, tags, archive_id, created_at, is_deleted) "
        "VALUES (?, ?, ?, '{}', ?, 'archive-1', ?, ?)",
        [("passage-1", "Ana took the 9:00 train to Lisbon in May", b"\x00\x01", '["trips"]', "2026-11-19 10:00:00", 0),
         ("passage-2", "forgotten passage", None, "[]", "2026-11-19 11:00:00", 1)],
    )
    con.executemany(
        "INSERT INTO messages (id, agent_id, role, content, sequence_id, created_at) VALUES (?, 'agent-1', ?, ?, ?, ?)",
        [("msg-2", "assistant", json.dumps([{"type": "text", "text": "Booked."}]), 2, "2026-11-19 10:00:05"),
         ("msg-1", "user", json.dumps([{"type": "text", "text": "Book the 9:00 train"}]), 1, "2026-11-19 10:00:00")],
    )
    con.commit()
    con.close()
    return tmp_path


@pytest.fixture
def newer(tmp_path: Path) -> Path:
    return build_letta_home(tmp_path)


@pytest.fixture
def older(tmp_path: Path) -> Path:
    db = tmp_path / "sqlite.db"
    con = sqlite3.connect(db)
    con.executescript(OLDER)
    _common_rows(con)
    con.execute("INSERT INTO agent_passages (id, text, metadata_, agent_id, created_at) "
                "VALUES ('passage-9', 'Ana lives in Porto', '{\"source\": \"chat\"}', 'agent-1', '2026-11-17 08:00:00')")
    con.execute("INSERT INTO messages (id, agent_id, role, text, created_at) "
                "VALUES ('m-1', 'agent-1', 'user', 'hello', '2026-11-17 08:00:00')")
    con.commit()
    con.close()
    return db


def test_newer_database_blocks_passages_and_messages(newer: Path):
    with open_store(newer) as store:  # the home folder: ~/.letta/sqlite.db is found
        memories = {m.content: m for m in store.page(limit=20)}
        assert set(memories) == {"Name: Ana. Prefers trains.", "I am a careful travel agent.",
                                 "Ana took the 9:00 train to Lisbon in May"}
        human = memories["Name: Ana. Prefers trains."]
        assert human.layer is Layer.CORE and human.channel == "travel-agent"
        assert human.metadata["label"] == "human" and human.metadata["limit"] == 5000
        passage = memories["Ana took the 9:00 train to Lisbon in May"]
        assert passage.layer is Layer.SEMANTIC and passage.channel == "travel-agent" and passage.tags == ("trips",)
        [session] = store.sessions()
        assert session.title == "travel-agent conversation"
        assert [(t.role, t.content) for t in store.turns("agent-1")] == [
            ("user", "Book the 9:00 train"), ("assistant", "Booked.")]
        assert [h.memory.content for h in search(store, "Lisbon", mode="keyword").hits] == [
            "Ana took the 9:00 train to Lisbon in May"]


def test_older_database_passages_by_agent_and_message_text(older: Path):
    with open_store(older) as store:
        passage = next(m for m in store.page(limit=20) if m.content == "Ana lives in Porto")
        assert passage.channel == "travel-agent" and passage.metadata["source"] == "chat"
        assert [t.content for t in store.turns("agent-1")] == ["hello"]


def test_letta_is_read_only_and_says_why(older: Path):
    before = older.read_bytes()
    with open_store(older) as store:
        human = next(m for m in store.page(limit=20) if m.metadata.get("label") == "human")
        with pytest.raises(ReadOnlyError, match="system message"):
            Curator(store).edit(human.id, content="Name: Ana.")
        with pytest.raises(ReadOnlyError, match="through Letta"):
            Curator(store).delete(human.id)
        assert "through Letta" in store.info()["formats"][0]["read_only_reason"]
    assert older.read_bytes() == before


def test_import_round_trip(newer: Path, tmp_path: Path):
    dest = tmp_path / "ws"
    summary = import_store(newer, dest)
    assert summary.imported == 3 and summary.sessions == 1
    assert import_store(newer, dest).imported == 0
    with open_store(dest) as store:
        persona = next(m for m in store.page(limit=20) if m.content == "I am a careful travel agent.")
        assert persona.layer is Layer.CORE and persona.metadata["import"]["format"] == "letta"
        assert [t.content for t in store.turns("agent-1")] == ["Book the 9:00 train", "Booked."]


def test_conversations_are_paged_per_agent_without_reading_every_message(newer: Path):
    db = newer / ".letta" / "sqlite.db"
    con = sqlite3.connect(db)
    con.execute("INSERT INTO agents (id, name, created_at) VALUES ('agent-2', 'budget-agent', '2026-11-18 09:00:00')")
    con.executemany(
        "INSERT INTO messages (id, agent_id, role, content, sequence_id, created_at, is_deleted) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(f"b-{i}", "agent-2", "user" if i % 2 == 0 else "assistant", json.dumps([{"type": "text", "text": f"line {i}"}]),
          100 + i, f"2026-11-21 10:{i:02d}:00", int(i == 3)) for i in range(30)],
    )
    con.commit()
    con.close()
    with open_store(db) as store:
        assert [(s.id, s.channel, s.turn_count) for s in store.sessions()] == [
            ("agent-1", "travel-agent", 2), ("agent-2", "budget-agent", 29)]
        assert [s.id for s in store.sessions(("budget-agent",))] == ["agent-2"]
        assert store.sessions()[1].started_at == datetime(2026, 11, 21, 10, 0, tzinfo=timezone.utc)
        deep = store.turns("agent-2", limit=3, offset=25)
        assert [(t.index, t.content) for t in deep] == [(25, "line 26"), (26, "line 27"), (27, "line 28")]
        assert "line 3" not in [t.content for t in store.turns("agent-2")]  # Letta deleted it
        assert sum(store.turn_bin_counts("%Y-%m-%d", None, None).values()) == 31
