"""AgenticX stores (~/.agenticx: memory/sessions.sqlite, memory/main.sqlite, workspace/).

AgenticX cannot be installed beside the rest of the test extra: agenticx 0.6.5
pins openai<3 and openai-agents needs openai>=3. So these stores are built here
from its published schema: the DDL below is copied from agenticx 0.6.5
(agenticx/memory/session_store.py ``_ensure_schema``, workspace_memory.py
``_ensure_schema``), rows are written the way its ``_save_*_sync`` methods write
them, and reads back use the SQL of its own readers (``_load_scratchpad_sync``,
``_search_session_summaries_sync``, ``_list_latest_sessions_sync``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ReadOnlyError, UnsupportedError
from mnemoscope.storage.model import ScratchEntry
from mnemoscope.storage.views.search import search
from mnemoscope.storage.store import open_store
from mnemoscope.storage.transfer import import_store

SESSION_DDL = """
CREATE TABLE IF NOT EXISTS todos (session_id TEXT NOT NULL, data TEXT NOT NULL, updated_at TEXT NOT NULL,
    PRIMARY KEY (session_id));
CREATE TABLE IF NOT EXISTS scratchpad (session_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    updated_at TEXT NOT NULL, PRIMARY KEY (session_id, key));
CREATE TABLE IF NOT EXISTS session_summaries (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, summary TEXT NOT NULL,
    metadata TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_ss_session_created ON session_summaries(session_id, created_at);
CREATE TABLE IF NOT EXISTS session_messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
    role TEXT NOT NULL, content TEXT NOT NULL, timestamp REAL, indexed_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_sm_session ON session_messages(session_id);
CREATE TABLE IF NOT EXISTS session_fts_backfill (session_id TEXT PRIMARY KEY, backfilled_at TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS session_messages_fts USING fts5(content, content='session_messages',
    content_rowid='id');
CREATE TRIGGER session_messages_ai AFTER INSERT ON session_messages BEGIN
    INSERT INTO session_messages_fts(rowid, content) VALUES (new.id, new.content); END;
CREATE TRIGGER session_messages_ad AFTER DELETE ON session_messages BEGIN
    INSERT INTO session_messages_fts(session_messages_fts, rowid) VALUES('delete', old.id); END;
"""

INDEX_DDL = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT NOT NULL, mtime REAL NOT NULL, size INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, source TEXT, start_line INTEGER,
    end_line INTEGER, model TEXT, text TEXT NOT NULL, embedding BLOB, created_at TEXT NOT NULL,
    access_count INTEGER DEFAULT 0, last_accessed TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, path UNINDEXED, source UNINDEXED, content='');
CREATE TABLE IF NOT EXISTS embedding_cache (provider TEXT NOT NULL, model TEXT NOT NULL, hash TEXT NOT NULL,
    embedding BLOB NOT NULL, PRIMARY KEY (provider, model, hash));
CREATE TABLE IF NOT EXISTS turns (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, avatar_id TEXT, turn_index INTEGER,
    role TEXT, text TEXT NOT NULL, embedding BLOB, content_hash TEXT NOT NULL, access_count INTEGER DEFAULT 0,
    last_accessed TEXT, created_at TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS idx_turns_session ON turns(session_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_turns_hash ON turns(content_hash);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(text, session_id UNINDEXED, content='');
"""

PREFIX = "\x1eagx-json-v1:"
NOW = "2026-11-20T09:00:00+00:00"


def _sessions_db(db: Path) -> None:
    con = sqlite3.connect(db)
    con.executescript(SESSION_DDL)
    # _save_scratchpad_sync: one row per key, JSON behind the prefix; a legacy row is a plain string.
    pad = {"session_facts": "prefers metric units\nlives in Porto", "subagent_result::a1": {"status": "done", "n": 3}}
    con.executemany(
        "INSERT INTO scratchpad VALUES (?, ?, ?, ?)",
        [("s1", k, PREFIX + json.dumps(v, ensure_ascii=False, separators=(",", ":")), NOW) for k, v in pad.items()]
        + [("s1", "legacy_note", "plain old string", NOW)],
    )
    con.execute("INSERT INTO todos VALUES ('s1', ?, ?)", (json.dumps([{"content": "file taxes", "status": "pending"}]), NOW))
    con.executemany(
        "INSERT INTO session_summaries VALUES (?, ?, ?, ?, ?)",
        [
            ("sum-1", "s1", "Planned the Porto trip", json.dumps({"name": "Trip", "avatar_id": "travel"}), "2026-11-19T10:00:00+00:00"),
            ("sum-2", "s1", "Booked the Porto hotel", json.dumps({"name": "Trip", "avatar_id": "travel"}), "2026-11-20T10:00:00+00:00"),
            ("sum-3", "s2", "Reviewed the tax forms", json.dumps({"name": "Taxes"}), "2026-11-20T11:00:00+00:00"),
        ],
    )
    con.executemany(
        "INSERT INTO session_messages (session_id, role, content, timestamp, indexed_at) VALUES (?, ?, ?, ?, ?)",
        [("s1", "user", "Find me a hotel in Porto", 1763630000.0, NOW),
         ("s1", "assistant", "Booked Hotel Infante", 1763630060.0, NOW)],
    )
    con.commit()
    con.close()


def _index_db(db: Path, workspace: Path) -> None:
    con = sqlite3.connect(db)
    con.executescript(INDEX_DDL)
    for name in ("MEMORY.md", "memory/2026-11-19.md", "memory/2026-11-18.md"):
        file = (workspace / name).resolve()
        text = file.read_text(encoding="utf-8")
        con.execute("INSERT INTO files VALUES (?, ?, ?, ?)",
                    (str(file), hashlib.sha256(text.encode()).hexdigest(), file.stat().st_mtime, file.stat().st_size))
        for i, chunk in enumerate(t.strip() for t in text.split("\n\n") if t.strip()):
            chunk_id = "ch-" + hashlib.sha256(f"{file}:{i}:{chunk}".encode()).hexdigest()[:16]
            con.execute("INSERT INTO chunks (id, path, source, start_line, end_line, model, text, created_at) "
                        "VALUES (?, ?, ?, ?, ?, 'hashing-64d', ?, ?)", (chunk_id, str(file), file.name, i + 1, i + 1, chunk, NOW))
            con.execute("INSERT INTO chunks_fts(rowid, text, path, source) VALUES "
                        "((SELECT rowid FROM chunks WHERE id = ?), ?, ?, ?)", (chunk_id, chunk, str(file), file.name))
    # archive_turn_sync
    body = "user: what hotel? assistant: Hotel Infante"
    content_hash = hashlib.sha256(f"s1:{body}".encode()).hexdigest()[:16]
    con.execute("INSERT INTO turns VALUES (?, 's1', 'travel', 0, 'pair', ?, NULL, ?, 2, ?, ?)",
                (f"turn-{content_hash}", body, content_hash, NOW, "2026-11-19T10:00:00+00:00"))
    con.execute("INSERT INTO turns_fts(rowid, text, session_id) VALUES (1, ?, 's1')", (body,))
    # An FTS entry whose chunk row was removed without it (contentless tables can't be pruned).
    con.execute("INSERT INTO chunks_fts(rowid, text, path, source) VALUES (999, 'ghost', 'x', 'x')")
    con.commit()
    con.close()


def build_agenticx_home(tmp_path: Path) -> Path:
    home = tmp_path / ".agenticx"
    workspace = home / "workspace"
    (workspace / "memory").mkdir(parents=True)
    (home / "memory").mkdir()
    (workspace / "MEMORY.md").write_text("# Memory\n\nThe user prefers window seats.\n", encoding="utf-8")
    (workspace / "memory" / "2026-11-19.md").write_text("Asked about Porto hotels.\n", encoding="utf-8")
    (workspace / "memory" / "2026-11-18.md").write_text("Old note about Lisbon.\n", encoding="utf-8")
    _sessions_db(home / "memory" / "sessions.sqlite")
    _index_db(home / "memory" / "main.sqlite", workspace)
    # After indexing: one daily file removed, one changed.
    (workspace / "memory" / "2026-11-18.md").unlink()
    (workspace / "memory" / "2026-11-19.md").write_text("Booked Hotel Infante in Porto.\n", encoding="utf-8")
    return home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return build_agenticx_home(tmp_path)


def load_scratchpad(db: Path, session_id: str) -> dict:
    """AgenticX's _load_scratchpad_sync + _decode_scratchpad_value."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT key, value FROM scratchpad WHERE session_id = ? ORDER BY key", (session_id,)).fetchall()
    con.close()
    return {k: json.loads(v[len(PREFIX):]) if v.startswith(PREFIX) else v for k, v in rows}


def summaries(db: Path, like: str = "") -> list[tuple[str, str]]:
    """AgenticX's _search_session_summaries_sync."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, summary FROM session_summaries WHERE summary LIKE ? ORDER BY created_at DESC",
                       (f"%{like}%",)).fetchall()
    con.close()
    return rows


def listed_sessions(db: Path) -> list[str]:
    """AgenticX's _list_latest_sessions_sync: sessions as their latest summary lists them."""
    con = sqlite3.connect(db)
    rows = con.execute("""SELECT s.session_id FROM session_summaries AS s INNER JOIN (
        SELECT session_id, MAX(created_at) AS max_created_at FROM session_summaries GROUP BY session_id) AS latest
        ON s.session_id = latest.session_id AND s.created_at = latest.max_created_at ORDER BY s.created_at DESC""").fetchall()
    con.close()
    return [r[0] for r in rows]


def test_opens_the_whole_agenticx_home(home: Path):
    with open_store(home) as store:
        formats = {f["format"] for f in store.info()["formats"]}
        assert formats == {"agenticx", "agenticx-index"}
        # Workspace markdown (2 blocks), 3 summaries, 1 archived turn, 1 chunk of a deleted file.
        assert store.counts()["kinds"] == {"markdown": 2, "sqlite": 5}
        contents = {m.content for m in store.page(limit=50)}
        assert {"The user prefers window seats.", "Booked Hotel Infante in Porto.", "Booked the Porto hotel",
                "Old note about Lisbon."} <= contents
        assert {s.id for s in store.sessions()} == {"s1", "s2"}
        assert [(t.role, t.content) for t in store.turns("s1")] == [
            ("user", "Find me a hotel in Porto"), ("assistant", "Booked Hotel Infante")]


def test_scratchpad_values_are_decoded_as_agenticx_decodes_them(home: Path):
    with open_store(home) as store:
        entries = {e.key: e for e in store.scratch_entries("s1")}
    assert entries["session_facts"].value == "prefers metric units\nlives in Porto"
    assert json.loads(entries["subagent_result::a1"].value) == {"status": "done", "n": 3}
    assert entries["legacy_note"].value == "plain old string"
    assert json.loads(entries["todos"].value)[0]["content"] == "file taxes"
    assert isinstance(entries["subagent_result::a1"], ScratchEntry) and entries["subagent_result::a1"].pattern_id == "a1"


def test_index_rows_that_point_at_missing_text_are_reported(home: Path):
    with open_store(home) as store:
        problems = store.problems()
    gone = [p for p in problems if "2026-11-18.md no longer exists" in p]
    changed = [p for p in problems if "2026-11-19.md changed since it was indexed in main.sqlite" in p]
    assert len(gone) == 1 and "1 chunk(s)" in gone[0]
    assert len(changed) == 1 and "1 chunk(s) hold text no longer in the file" in changed[0]
    assert any("chunks_fts has 1 entry whose row no longer exists" in p for p in problems)


def test_summary_edit_and_delete_are_read_back_as_agenticx_reads_them(home: Path):
    db = home / "memory" / "sessions.sqlite"
    with open_store(home) as store:
        planned = next(m for m in store.page(limit=50) if m.content == "Planned the Porto trip")
        Curator(store).edit(planned.id, content="Planned the Porto trip in May")
    assert summaries(db, "May") == [("sum-1", "Planned the Porto trip in May")]
    with open_store(home) as store:
        Curator(store).delete(planned.id)
    assert [r[0] for r in summaries(db)] == ["sum-3", "sum-2"]
    assert listed_sessions(db) == ["s2", "s1"]
    with open_store(home) as store:
        Curator(store).undo()
        Curator(store).undo()
    assert summaries(db, "Planned") == [("sum-1", "Planned the Porto trip")]
    assert load_scratchpad(db, "s1")["subagent_result::a1"] == {"status": "done", "n": 3}


def test_the_last_summary_of_a_session_is_not_deleted(home: Path):
    db = home / "memory" / "sessions.sqlite"
    with open_store(home) as store:
        taxes = next(m for m in store.page(limit=50) if m.content == "Reviewed the tax forms")
        with pytest.raises(UnsupportedError, match="hide session s2"):
            Curator(store).delete(taxes.id)
    assert listed_sessions(db) == ["s2", "s1"]


def test_the_index_is_read_only_and_says_why(home: Path):
    index = home / "memory" / "main.sqlite"
    before = index.read_bytes()
    with open_store(home) as store:
        turn = next(m for m in store.page(limit=50) if m.content.startswith("user: what hotel?"))
        assert turn.access_count == 2 and turn.channel == "travel"
        caps = store.source_for(turn.id).capabilities()
        assert caps.read_only and "contentless" in caps.read_only_reason
        with pytest.raises(ReadOnlyError, match="contentless"):
            Curator(store).delete(turn.id)
    assert index.read_bytes() == before


def test_keyword_search_reaches_summaries_and_markdown(home: Path):
    with open_store(home) as store:
        found = {h.memory.content for h in search(store, "Porto", mode="keyword").hits}
    assert {"Booked the Porto hotel", "Booked Hotel Infante in Porto."} <= found


def test_import_round_trip(home: Path, tmp_path: Path):
    dest = tmp_path / "ws"
    summary = import_store(home, dest)
    assert summary.imported == 7
    assert import_store(home, dest).imported == 0
    with open_store(dest) as store:
        assert store.count() == 7
        lisbon = next(m for m in store.page(limit=50) if m.content == "Old note about Lisbon.")
        assert lisbon.metadata["import"]["format"] == "agenticx-index"
        assert {e.key for e in store.scratch_entries("s1")} >= {"session_facts", "todos"}
