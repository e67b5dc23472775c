"""OpenClaw state directories (~/.openclaw) in both layouts it has shipped, built by hand.

These stores are built from OpenClaw's published schema: the older per-agent index from
src/memory/memory-schema.ts (``files``, ``chunks``, ``chunks_fts``, a sqlite-vec ``chunks_vec``)
with JSONL transcripts in the pi session format (the layout before 2026.9.2), and the
newer ``agents/<id>/agent/openclaw-agent.sqlite`` (``memory_index_sources``, ``memory_index_chunks``,
``session_windows``, ``transcript_events`` as OpenClaw 2026.9's readers query them), with drift,
broken lines and a deleted file planted. Stores OpenClaw 2026.9 writes itself (helpers/openclaw_cli.py)
are tested in test_openclaw_workspace.py, test_cli_openclaw.py and test_openclaw_window.py.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ReadOnlyError
from mnemoscope.storage.model import Kind, Status
from mnemoscope.storage.query import MemoryQuery
from mnemoscope.storage.views.search import search
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store

LEGACY_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (path TEXT PRIMARY KEY, source TEXT NOT NULL DEFAULT 'memory', hash TEXT NOT NULL,
    mtime INTEGER NOT NULL, size INTEGER NOT NULL);
CREATE TABLE chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'memory',
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, model TEXT NOT NULL, dims INTEGER,
    text TEXT NOT NULL, embedding TEXT NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE embedding_cache (provider TEXT NOT NULL, model TEXT NOT NULL, provider_key TEXT NOT NULL,
    hash TEXT NOT NULL, embedding TEXT NOT NULL, dims INTEGER, updated_at INTEGER NOT NULL,
    PRIMARY KEY (provider, model, provider_key, hash));
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, id UNINDEXED, path UNINDEXED, source UNINDEXED,
    model UNINDEXED, start_line UNINDEXED, end_line UNINDEXED);
"""

AGENT_DDL = """
CREATE TABLE memory_index_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE memory_index_sources (path TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'memory', hash TEXT NOT NULL,
    mtime INTEGER NOT NULL, size INTEGER NOT NULL, PRIMARY KEY (path, source));
CREATE TABLE memory_index_chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, source TEXT NOT NULL DEFAULT 'memory',
    start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, hash TEXT NOT NULL, model TEXT NOT NULL,
    text TEXT NOT NULL, embedding TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE session_windows (session_id TEXT NOT NULL PRIMARY KEY, session_key TEXT NOT NULL,
    previous_session_id TEXT, reason TEXT, session_scope TEXT NOT NULL DEFAULT 'conversation',
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL,
    created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq),
    FOREIGN KEY (session_id) REFERENCES session_windows(session_id) ON DELETE CASCADE) STRICT;
"""

WORKSPACE = {
    "AGENTS.md": "# Agents\n\nAlways answer in English.\n",
    "SOUL.md": "# Soul\n\nCalm and precise.\n",
    "USER.md": "# User\n\nName: Ana. Lives in Porto.\n",
    "MEMORY.md": "# Memory\n\nAna prefers trains to planes.\n",
    "HEARTBEAT.md": "# Heartbeat\n\n- check the inbox every morning\n",
    "memory/2026-11-19.md": "Booked the Porto-Lisbon train.\n",
    "memory/2026-11-18.md": "Looked at flights to Madrid.\n",
}

TRANSCRIPT = [
    {"type": "session", "version": 3, "id": "sess-1", "timestamp": "2026-11-19T08:00:00Z", "cwd": "/home/ana"},
    {"type": "model_change", "id": "mc1", "timestamp": "2026-11-19T08:00:00Z", "provider": "anthropic", "modelId": "x"},
    {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-11-19T08:00:01Z",
     "message": {"role": "user", "content": [{"type": "text", "text": "Book me a train to Lisbon"}], "timestamp": 1763539201000}},
    {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2026-11-19T08:00:05Z",
     "message": {"role": "assistant", "content": [{"type": "toolCall", "id": "t1", "name": "book_train", "arguments": {"to": "Lisbon"}}]}},
    {"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2026-11-19T08:00:09Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Booked the 9:00 train."}]}},
]


def _index(con, files_table: str, chunks_table: str, workspace: Path, names: list[str]) -> None:
    for name in names:
        text = (workspace / name).read_text(encoding="utf-8")
        con.execute(f"INSERT INTO {files_table} (path, source, hash, mtime, size) VALUES (?, 'memory', ?, 1, ?)",
                    (name, hashlib.sha256(text.encode()).hexdigest(), len(text)))
        body = text.split("\n\n", 1)[-1].strip()
        chunk_id = hashlib.sha256(f"memory:{name}:{body}".encode()).hexdigest()
        con.execute(f"INSERT INTO {chunks_table} (id, path, source, start_line, end_line, hash, model, text, embedding, "
                    "updated_at) VALUES (?, ?, 'memory', 1, 3, ?, 'fts-only', ?, '[]', 1763539200000)",
                    (chunk_id, name, hashlib.sha256(body.encode()).hexdigest(), body))
    con.execute(f"INSERT INTO {chunks_table} (id, path, source, start_line, end_line, hash, model, text, embedding, "
                "updated_at) VALUES ('s-1', 'sessions/sess-1.jsonl', 'sessions', 1, 5, 'h', 'fts-only', "
                "'Book me a train', '[]', 1763539200000)")


def _legacy_index(db: Path, workspace: Path) -> None:
    con = sqlite3.connect(db)
    con.executescript(LEGACY_DDL)
    _index(con, "files", "chunks", workspace, ["MEMORY.md", "memory/2026-11-19.md", "memory/2026-11-18.md"])
    con.commit()
    con.close()


def _agent_db(db: Path, workspace: Path) -> None:
    con = sqlite3.connect(db)
    con.executescript(AGENT_DDL)
    _index(con, "memory_index_sources", "memory_index_chunks", workspace, ["USER.md"])
    con.execute("INSERT INTO session_windows (session_id, session_key, reason, created_at, updated_at) "
                "VALUES ('w-1', 'agent:ops:main', 'initial', 1763625600000, 1763625660000)")
    records = [
        {"type": "session", "version": 3, "id": "w-1", "timestamp": "2026-11-20T08:00:00Z"},
        {"type": "message", "id": "u1", "timestamp": "2026-11-20T08:00:01Z",
         "message": {"role": "user", "content": "Is the server up?"}},
        {"type": "compaction", "id": "c1", "timestamp": "2026-11-20T08:00:30Z", "summary": "Checked the server."},
        {"type": "message", "id": "a1", "timestamp": "2026-11-20T08:01:00Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "It is up."}]}},
    ]
    # Out of seq order on purpose: readers order by seq, as OpenClaw's do.
    for seq in (2, 0, 3, 1):
        con.execute("INSERT INTO transcript_events VALUES ('w-1', ?, ?, ?)", (seq, json.dumps(records[seq]), 1763625600000 + seq))
    con.commit()
    con.close()


def build_openclaw_state(tmp_path: Path) -> Path:
    state = tmp_path / ".openclaw"
    workspace = state / "workspace"
    (workspace / "memory").mkdir(parents=True)
    for name, text in WORKSPACE.items():
        (workspace / name).write_text(text, encoding="utf-8")
    (state / "memory").mkdir()
    _legacy_index(state / "memory" / "main.sqlite", workspace)
    sessions = state / "agents" / "main" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "sess-1.jsonl").write_text("\n".join(json.dumps(r) for r in TRANSCRIPT) + "\n{broken\n", encoding="utf-8")
    (sessions / "sessions.json").write_text(json.dumps({"agent:main:main": {"sessionId": "sess-1", "displayName": "Trains"}}))
    (state / "agents" / "ops" / "agent").mkdir(parents=True)
    _agent_db(state / "agents" / "ops" / "agent" / "openclaw-agent.sqlite", workspace)
    # After indexing: one daily note deleted, MEMORY.md changed.
    (workspace / "memory" / "2026-11-18.md").unlink()
    (workspace / "MEMORY.md").write_text("# Memory\n\nAna prefers night trains.\n", encoding="utf-8")
    return state


GONE = MemoryQuery(statuses=(Status.DELETED,))


def is_index(memory) -> bool:
    """A memory read from an agent's index (not from the workspace markdown)."""
    return memory.id.startswith("openclaw:")


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return build_openclaw_state(tmp_path)


def test_opens_workspace_both_index_layouts_and_both_transcript_layouts(state: Path):
    with open_store(state) as store:
        described = {f["agent"]: f for f in store.info()["formats"] if "agent" in f}
        assert described["main"]["layout"] == "legacy" and described["ops"]["layout"] == "agent-db"
        markdown = [m for m in store.page(limit=100) if m.source.kind is Kind.MARKDOWN]
        assert {m.source.path for m in markdown} == set(WORKSPACE) - {"memory/2026-11-18.md"}
        # Chunks of a file the agent deleted are still in its index: listed as deleted, not active;
        # the active ones of the index are its chunks of session transcripts.
        assert sorted((m.content, m.channel, m.metadata["session"]) for m in store.page(limit=100) if is_index(m)) == [
            ("Book me a train", "main", "sess-1"), ("Book me a train", "ops", "sess-1")]
        orphan = [m for m in store.page(GONE, limit=100) if is_index(m)]
        assert [(m.content, m.channel, m.status) for m in orphan] == [("Looked at flights to Madrid.", "main", Status.DELETED)]
        sessions = {s.id: s for s in store.sessions()}
        assert sessions["sess-1"].title == "Trains" and sessions["sess-1"].channel == "main"
        assert [(t.role, t.content) for t in store.turns("sess-1")] == [
            ("user", "Book me a train to Lisbon"),
            ("assistant", 'book_train({"to": "Lisbon"})'),
            ("assistant", "Booked the 9:00 train."),
        ]
        assert sessions["w-1"].title == "agent:ops:main"
        assert [(t.role, t.content) for t in store.turns("w-1")] == [
            ("user", "Is the server up?"), ("summary", "Checked the server."), ("assistant", "It is up.")]


def test_index_drift_and_unreadable_lines_are_reported(state: Path):
    with open_store(state) as store:
        problems = store.problems()
    assert any("memory/2026-11-18.md no longer exists" in p for p in problems)
    assert any("MEMORY.md changed since it was indexed in main.sqlite; 1 chunk(s) hold text no longer in the file" in p
               for p in problems)
    assert any("sess-1.jsonl: 1 line(s) are not JSON" in p for p in problems)
    assert not any("USER.md" in p for p in problems)


def test_check_reports_the_index_drift_by_kind(state: Path):
    from mnemoscope.storage.consistency import check

    with open_store(state, read_only=True) as store:
        report = check(store)
    assert {kind: [f.record for f in report.items(kind)] for kind in report.counts()} == {
        "index-file-gone": ["memory/2026-11-18.md"], "index-file-changed": ["MEMORY.md"]}


def test_a_vec0_table_is_counted_and_said_unread(state: Path):
    vec_sqlite = pytest.importorskip("pysqlite3.dbapi2")
    sqlite_vec = pytest.importorskip("sqlite_vec")
    con = vec_sqlite.connect(str(state / "memory" / "main.sqlite"))
    con.enable_load_extension(True)
    sqlite_vec.load(con)
    con.execute("CREATE VIRTUAL TABLE chunks_vec USING vec0(id TEXT PRIMARY KEY, embedding FLOAT[4])")
    con.execute("INSERT INTO chunks_vec (id, embedding) VALUES ('x', ?)", (sqlite_vec.serialize_float32([0.1, 0.2, 0.3, 0.4]),))
    con.commit()
    con.close()
    with open_store(state) as store:
        problems = store.problems()
        assert store.turns("sess-1")  # everything else still read
    assert any("chunks_vec is a sqlite-vec (vec0) table; its 1 vector(s) were not read" in p for p in problems)


def test_workspace_markdown_is_editable_and_the_index_is_read_only(state: Path):
    index = state / "memory" / "main.sqlite"
    before = index.read_bytes()
    with open_store(state) as store:
        orphan = next(m for m in store.page(GONE, limit=100) if is_index(m))
        with pytest.raises(ReadOnlyError, match="rebuilds its memory index"):
            Curator(store).delete(orphan.id)
        user = next(m for m in store.page(limit=100) if m.source.path == "USER.md")
        Curator(store).edit(user.id, content="Name: Ana. Lives in Lisbon now.")
    assert "Lives in Lisbon now." in (state / "workspace" / "USER.md").read_text(encoding="utf-8")
    assert index.read_bytes() == before
    with open_store(state) as store:
        Curator(store).undo()
    assert (state / "workspace" / "USER.md").read_text(encoding="utf-8") == WORKSPACE["USER.md"]


def test_the_agent_database_alone_opens_with_its_chunks_shown(state: Path):
    with open_store(state / "agents" / "ops" / "agent" / "openclaw-agent.sqlite") as store:
        assert [m.content for m in store.page(limit=10)] == ["Book me a train", "Name: Ana. Lives in Porto."]
        assert [t.content for t in store.turns("w-1")][-1] == "It is up."
        assert any("workspace not found" in p for p in store.problems())


def test_keyword_search_and_import(state: Path, tmp_path: Path):
    with open_store(state) as store:
        assert not search(store, "Madrid", mode="keyword").hits
        found = {h.memory.content for h in search(store, "Madrid", mode="keyword", query=GONE).hits}
        assert found == {"Looked at flights to Madrid."}
    dest = tmp_path / "ws"
    summary = import_store(state, dest)
    assert summary.imported == 9 and summary.sessions == 2  # 5 workspace blocks, 2 chunks of a gone file, 2 of transcripts
    assert import_store(state, dest).imported == 0
    with open_store(dest) as store:
        madrid = next(m for m in store.page(GONE, limit=50) if m.content == "Looked at flights to Madrid.")
        assert madrid.metadata["import"]["format"] == "openclaw" and madrid.channel == "main"
        assert [t.content for t in store.turns("sess-1")][0] == "Book me a train to Lisbon"


def test_restoring_a_deleted_file_clears_its_drift(state: Path):
    with open_store(state) as store:
        assert any("2026-11-18.md no longer exists" in p for p in store.problems())
        (state / "workspace" / "memory" / "2026-11-18.md").write_text("Looked at flights to Madrid.\n", encoding="utf-8")
        assert not any("2026-11-18.md" in p for p in store.problems())
        assert not [m for m in store.page(GONE, limit=100) if is_index(m)]


def test_a_transcript_event_stored_compressed_is_read(tmp_path: Path):
    """OpenClaw 2026.9 may keep an event as one zstd frame (event_zstd, event_utf8_bytes) with a
    NULL event_json (transcript-payload.ts); the turn is read all the same."""
    zstandard = pytest.importorskip("zstandard")
    db = tmp_path / "agents" / "ops" / "agent" / "openclaw-agent.sqlite"
    db.parent.mkdir(parents=True)
    con = sqlite3.connect(db)
    con.executescript(AGENT_DDL.replace(
        "event_json TEXT NOT NULL,\n    created_at INTEGER NOT NULL,",
        "event_json TEXT,\n    created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER,"))
    con.execute("INSERT INTO session_windows (session_id, session_key, created_at, updated_at) "
                "VALUES ('w-9', 'agent:ops:main', 1763625600000, 1763625660000)")
    event = json.dumps({"type": "message", "id": "u1", "timestamp": "2026-11-20T08:00:01Z",
                        "message": {"role": "user", "content": "Is the server up?"}}).encode()
    con.execute("INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd, event_utf8_bytes) "
                "VALUES ('w-9', 0, NULL, 1763625601000, ?, ?)", (zstandard.ZstdCompressor().compress(event), len(event)))
    con.commit()
    con.close()
    with open_store(db) as store:
        assert [(t.role, t.content) for t in store.turns("w-9")] == [("user", "Is the server up?")]
        assert not any("compressed" in p for p in store.problems())
