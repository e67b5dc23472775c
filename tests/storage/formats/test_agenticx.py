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

from helpers.store_state import state_of
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ConflictError, NotFoundError, NothingToDoError, ReadOnlyError, UnsupportedError
from mnemoscope.storage.model import ScratchEntry, Status
from mnemoscope.storage.query import MemoryQuery
from mnemoscope.storage.views.search import search
from mnemoscope.storage.opening import open_store
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
        assert formats == {"agenticx", "agenticx-index", "agenticx-workspace"}
        # Workspace markdown (2 blocks), 3 summaries, 1 archived turn, 1 chunk of a deleted file.
        assert store.counts()["kinds"] == {"markdown": 2, "sqlite": 5}
        contents = {m.content for m in store.page(limit=50)}
        assert {"The user prefers window seats.", "Booked Hotel Infante in Porto.", "Booked the Porto hotel"} <= contents
        # The index still holds a chunk of a file the agent deleted: listed as deleted, not active.
        [gone] = store.page(MemoryQuery(statuses=(Status.DELETED,)), limit=50)
        assert gone.content == "Old note about Lisbon." and "Old note about Lisbon." not in contents
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


def test_check_reports_the_index_drift_by_kind(home: Path):
    from mnemoscope.storage.consistency import check

    with open_store(home, read_only=True) as store:
        report = check(store)
    found = {kind: sorted(f.record.rsplit("/", 1)[-1] for f in report.items(kind)) for kind in report.counts()}
    assert found == {"index-file-gone": ["2026-11-18.md"], "index-file-changed": ["2026-11-19.md"],
                     "index-fts-dangling": ["chunks_fts"]}
    assert {f.source for f in report} == {"agenticx-index"} and not report.clean


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
        assert store.count(MemoryQuery(statuses=())) == 7
        lisbon = next(m for m in store.page(MemoryQuery(statuses=()), limit=50) if m.content == "Old note about Lisbon.")
        assert lisbon.status is Status.DELETED
        assert lisbon.metadata["import"]["format"] == "agenticx-index"
        assert {e.key for e in store.scratch_entries("s1")} >= {"session_facts", "todos"}


# -- messages.json, compaction, MemoryHook's workspace files, the configured root, scratchpad writes --------

COMPACTED = ("[session_memory]{\"facts\":[]}\n\n[compacted] 已压缩 2 条历史消息，以下为摘要：\n"
             "The user wanted a hotel in Porto by the river; Hotel Infante was booked.")
# sessions/s1/messages.json as SessionManager._save_messages_snapshot writes it (ms timestamps).
S1_HISTORY = [
    {"id": "m1", "role": "user", "content": "Find me a hotel in Porto", "timestamp": 1763630000000},
    {"id": "m2", "role": "assistant", "content": "Booked Hotel Infante", "timestamp": 1763630060000},
    {"id": "m3", "role": "user", "content": [{"type": "text", "text": "Is breakfast included?"}],
     "timestamp": 1763630120000},
    {"id": "m4", "role": "tool", "content": "{\"breakfast\": true}", "timestamp": 1763630130000},
    {"id": "m5", "role": "assistant", "content": "Yes, breakfast is included.", "timestamp": 1763630140000},
]
# agent_messages.json after ContextCompactor: its [compacted] system message, then the messages kept verbatim.
S1_CONTEXT = [
    {"role": "system", "content": COMPACTED},
    {"role": "user", "content": "Is breakfast included?"},
    {"role": "tool", "content": "{\"breakfast\": true}"},
    {"role": "assistant", "content": "Yes, breakfast is included."},
]
# A session whose chat history holds the compaction itself, and nothing in sessions.sqlite.
S4_HISTORY = [
    {"role": "system", "content": "[compacted] 已压缩 30 条历史消息，以下为摘要：\nPlanned a Lisbon weekend.",
     "timestamp": 1763700000000},
    {"role": "user", "content": "And the train back?", "timestamp": 1763700060000},
]
DAY = "2026-11-20"
REQUEST = "- 用户请求: 请帮我找一家波尔图的酒店，要靠近河边，并且需要含早餐"
DONE = "- 完成事项: Booked Hotel Infante in Porto, breakfast included, done"


def memory_hook_append(workspace: Path, day: str, facts: list[str]) -> None:
    """MemoryHook._append_to_memory, for a given day."""
    daily = workspace / "memory" / f"{day}.md"
    block = f"## Session Facts ({day})\n" + "\n".join(facts) + "\n\n"
    existing = daily.read_text(encoding="utf-8") if daily.exists() else ""
    if len(existing) + len(block) > 8000:
        return
    with open(daily, "a", encoding="utf-8") as fh:
        fh.write(block)
    long_term = workspace / "MEMORY.md"
    if long_term.exists() and len(long_term.read_text(encoding="utf-8")) < 4000:
        with open(long_term, "a", encoding="utf-8") as fh:
            fh.write(f"\n## Auto-extracted ({day})\n")
            for fact in facts[:4]:
                fh.write(f"{fact}\n")


def memory_hook_dedup(text: str) -> list[int]:
    """The line numbers MemoryHook._maybe_compact_daily drops from a daily log."""
    seen: set[str] = set()
    dropped = []
    for number, line in enumerate(text.strip().split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("- ") and not stripped.startswith("##"):
            key = stripped[:80].lower()
            if key in seen:
                dropped.append(number)
            seen.add(key)
    return dropped


def build_agenticx_history(tmp_path: Path) -> Path:
    """build_agenticx_home, with the sessions' folders and MemoryHook's writes to the workspace."""
    home = build_agenticx_home(tmp_path)
    for session_id, name, rows in (("s1", "messages.json", S1_HISTORY), ("s1", "agent_messages.json", S1_CONTEXT),
                                   ("s4", "messages.json", S4_HISTORY)):
        folder = home / "sessions" / session_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(json.dumps(rows, ensure_ascii=False, indent=2), encoding="utf-8")
    workspace = home / "workspace"
    memory_hook_append(workspace, DAY, [REQUEST, DONE])
    memory_hook_append(workspace, DAY, [REQUEST, DONE.lower()])  # a second session the same day
    with open(workspace / "memory" / f"{DAY}.md", "a", encoding="utf-8") as fh:
        fh.write("## Notes\n- Ask about the airport transfer\n")
    return home


@pytest.fixture
def history(tmp_path: Path) -> Path:
    return build_agenticx_history(tmp_path)


def test_turns_are_read_from_messages_json_with_the_compaction_as_its_own_kind(history: Path):
    with open_store(history) as store:
        turns = store.turns("s1")
        sessions = {s.id: s for s in store.sessions()}
        problems = store.problems()
        on_disk_only = store.turns("s4")
    assert [(t.role, t.kind) for t in turns] == [
        ("user", "message"), ("assistant", "message"), ("system", "compaction"),
        ("user", "message"), ("tool", "message"), ("assistant", "message")]
    assert turns[2].content == COMPACTED and turns[3].content == "Is breakfast included?"
    assert [t.index for t in turns] == list(range(6))
    assert turns[0].timestamp.timestamp() == 1763630000 and turns[2].timestamp == turns[3].timestamp
    assert turns[2].to_dict()["kind"] == "compaction"
    assert sessions["s1"].turn_count == 6
    assert sessions["s4"].turn_count == 2 and [t.kind for t in on_disk_only] == ["compaction", "message"]
    assert any("session s1: messages.json holds 5 message(s), its search copy in sessions.sqlite 2" in p
               for p in problems)


def test_a_session_without_messages_json_keeps_its_search_copy_and_a_bad_file_is_reported(history: Path):
    (history / "sessions" / "s1" / "messages.json").write_text("{not json", encoding="utf-8")
    with open_store(history) as store:
        turns = store.turns("s1")
        problems = store.problems()
    assert [t.content for t in turns] == ["Find me a hotel in Porto", "Booked Hotel Infante"]
    assert any("sessions/s1/messages.json is not a list of messages; its search copy" in p for p in problems)


def test_auto_extracted_bullets_are_told_apart_from_hand_written_ones(history: Path):
    with open_store(history) as store:
        shown = store.page(limit=100)
    by_origin: dict[str, set[str]] = {}
    for m in shown:
        if m.source.kind.value == "markdown":
            by_origin.setdefault(m.metadata["origin"], set()).add(m.content)
    facts = {REQUEST[2:], DONE[2:], DONE[2:].lower()}
    assert by_origin["auto-extracted"] == facts
    assert {"The user prefers window seats.", "Ask about the airport transfer"} <= by_origin["manual"]
    fact = next(m for m in shown if m.content == DONE[2:] and m.source.path == "MEMORY.md")
    assert "auto-extracted" in fact.tags and fact.metadata["extracted_on"] == DAY
    assert fact.metadata["heading"] == f"Auto-extracted ({DAY})"
    seat = next(m for m in shown if m.content == "The user prefers window seats.")
    assert "auto-extracted" not in seat.tags


def test_daily_log_duplicates_are_the_lines_memory_hook_would_drop(history: Path):
    daily = history / "workspace" / "memory" / f"{DAY}.md"
    dropped = memory_hook_dedup(daily.read_text(encoding="utf-8"))
    assert dropped == [6, 7]
    with open_store(history) as store:
        shown = [m for m in store.page(limit=100) if m.source.path == f"memory/{DAY}.md"]
        problems = store.problems()
    flagged = {m.source.line_start: m.metadata["duplicate_of_line"] for m in shown if "duplicate_of_line" in m.metadata}
    assert flagged == {6: 2, 7: 3}
    notes = [p for p in problems if f"memory/{DAY}.md: lines" in p]
    assert len(notes) == 2
    assert "lines 2, 6 repeat one fact" in notes[0] and "keeps only line 2" in notes[0]
    assert "lines 3, 7 repeat one fact" in notes[1]


def test_memory_hook_caps_are_problems_when_exceeded(history: Path):
    workspace = history / "workspace"
    nine = [f"- 完成事项: step {i} done" for i in range(9)]
    (workspace / "memory" / "2026-11-21.md").write_text(
        "## Session Facts (2026-11-21)\n" + "\n".join(nine) + "\n\n## Pasted\n" + "x" * 8100 + "\n", encoding="utf-8")
    with open(workspace / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("\n## Auto-extracted (2026-11-21)\n" + "\n".join(nine[:5]) + "\n\n" + "Long note. " * 400 + "\n")
    before = (workspace / "memory" / "2026-11-21.md").read_text(encoding="utf-8")
    memory_hook_append(workspace, "2026-11-21", ["- 完成事项: one more, done"])  # refused by its own cap
    assert (workspace / "memory" / "2026-11-21.md").read_text(encoding="utf-8") == before
    with open_store(history) as store:
        problems = store.problems()
        info = store.info()
    assert any("memory/2026-11-21.md holds 8,3" in p and "over the 8,000" in p for p in problems)
    assert any("memory/2026-11-21.md: the section \"Session Facts (2026-11-21)\" (line 2) holds 9 facts, more than the 8"
               in p for p in problems)
    assert any("MEMORY.md holds" in p and "under 4,000" in p for p in problems)
    assert any("MEMORY.md: the section \"Auto-extracted (2026-11-21)\"" in p and "holds 5 facts, more than the 4" in p
               for p in problems)
    workspace_info = next(f for f in info["formats"] if f["format"] == "agenticx-workspace")
    assert any("over the 8,000" in p for p in workspace_info["problems"])


def test_the_configured_workspace_root_is_opened(history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("AGX_WORKSPACE_ROOT", raising=False)
    monkeypatch.setenv("HOME", str(history.parent))  # the live ~/.agenticx: its config may point anywhere
    configured = tmp_path / "notes" / "agx"
    (configured / "memory").mkdir(parents=True)
    (configured / "USER.md").write_text("- Lives in Porto\n", encoding="utf-8")
    elsewhere = tmp_path / "env-ws"
    elsewhere.mkdir()
    (elsewhere / "USER.md").write_text("- Set by the environment\n", encoding="utf-8")

    def shown() -> set[str]:
        with open_store(history) as store:
            return {m.content for m in store.page(limit=100) if m.source.kind.value == "markdown"}

    (history / "config.yaml").write_text(
        "llm:\n  provider: openai\n  path: /not/this\n# memory:\n#   path: /nor/this\n"
        f"memory:\n  backend: sqlite\n  path: \"{configured}\"  # the workspace\n", encoding="utf-8")
    assert shown() == {"Lives in Porto"}
    monkeypatch.setenv("AGX_WORKSPACE_ROOT", str(elsewhere))
    assert shown() == {"Lives in Porto"}  # the home's own config first; the variable is AgenticX's fallback
    (history / "config.yaml").write_text("memory:\n  backend: sqlite\n", encoding="utf-8")
    assert shown() == {"Set by the environment"}
    monkeypatch.delenv("AGX_WORKSPACE_ROOT")
    monkeypatch.setenv("HOME", str(tmp_path))
    (history / "config.yaml").write_text("workspace_dir: ~/notes/agx\n", encoding="utf-8")  # agenticx 0.6.5's key
    assert shown() == {"Lives in Porto"}
    (history / "config.yaml").write_text(f"memory:\n  path: {tmp_path / 'gone'}\n", encoding="utf-8")
    with open_store(history) as store:
        assert "The user prefers window seats." in {m.content for m in store.page(limit=100)}
        assert any(f"config.yaml names {tmp_path / 'gone'} as the workspace root, which holds no workspace markdown"
                   in p for p in store.problems())


def test_a_home_whose_workspace_is_elsewhere_is_detected_with_it(history: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("AGX_WORKSPACE_ROOT", raising=False)
    monkeypatch.setenv("HOME", str(history.parent))
    moved = tmp_path / "moved-workspace"
    (history / "workspace").rename(moved)
    (history / "config.yaml").write_text(f"memory:\n  path: {moved}\n", encoding="utf-8")
    with open_store(history) as store:
        assert {f["format"] for f in store.info()["formats"]} == {"agenticx", "agenticx-index", "agenticx-workspace"}
        assert "The user prefers window seats." in {m.content for m in store.page(limit=100)}


def test_scratchpad_edit_and_delete_are_read_back_as_agenticx_reads_them_and_undone(home: Path):
    db = home / "memory" / "sessions.sqlite"
    original = sqlite3.connect(db).execute("SELECT key, value FROM scratchpad ORDER BY key").fetchall()
    events = []
    with open_store(home) as store:
        store.subscribe(events.append)
        curator = Curator(store)
        entries = {e.key: e for e in store.scratch_entries("s1")}
        outcome = curator.set_scratch("s1", "session_facts", "prefers metric units\nlives in Lisbon now",
                                      expected=entries["session_facts"].value)
        assert any("whole scratchpad" in n for n in outcome.notes)
        curator.set_scratch("s1", "subagent_result::a1", {"status": "done", "n": 4})
        curator.set_scratch("s1", "legacy_note", "plain old string, edited")
        curator.set_scratch("s1", "__taskspace_hint__", "/home/user/trip")
        curator.delete_scratch("s1", "legacy_note")
        assert {e.key: e.value for e in store.scratch_entries("s1")}["session_facts"].endswith("Lisbon now")
    assert events and all(e.ids == () and e.journal for e in events)
    assert load_scratchpad(db, "s1") == {
        "session_facts": "prefers metric units\nlives in Lisbon now",
        "subagent_result::a1": {"status": "done", "n": 4},
        "__taskspace_hint__": "/home/user/trip",
    }
    with sqlite3.connect(db) as con:
        (raw,) = con.execute("SELECT value FROM scratchpad WHERE key = '__taskspace_hint__'").fetchone()
    assert raw == PREFIX + json.dumps("/home/user/trip")
    with open_store(home) as store:
        for _ in range(5):
            Curator(store).undo()
    assert sqlite3.connect(db).execute("SELECT key, value FROM scratchpad ORDER BY key").fetchall() == original


def test_a_scratchpad_key_changed_by_agenticx_is_not_overwritten(home: Path):
    db = home / "memory" / "sessions.sqlite"
    with open_store(home) as store:
        seen = {e.key: e.value for e in store.scratch_entries("s1")}["session_facts"]
        # AgenticX saves the session's scratchpad meanwhile (_save_scratchpad_sync: delete all, insert all).
        with sqlite3.connect(db) as con:
            con.execute("UPDATE scratchpad SET value = ? WHERE key = 'session_facts'",
                        (PREFIX + json.dumps("written by the agent"),))
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).set_scratch("s1", "session_facts", "mine", expected=seen)
        Curator(store).set_scratch("s1", "session_facts", "mine")
        with sqlite3.connect(db) as con:
            con.execute("UPDATE scratchpad SET value = ? WHERE key = 'session_facts'",
                        (PREFIX + json.dumps("the agent again"),))
        with pytest.raises(ConflictError):
            Curator(store).undo()
    assert load_scratchpad(db, "s1")["session_facts"] == "the agent again"


def test_scratchpad_writes_that_are_refused(home: Path):
    db = home / "memory" / "sessions.sqlite"
    before = db.read_bytes()
    with open_store(home) as store:
        curator = Curator(store)
        assert curator.scratch_writable("s1") and not curator.scratch_writable("nope")
        with pytest.raises(UnsupportedError, match="todo list"):
            curator.set_scratch("s1", "todos", [])
        with pytest.raises(NothingToDoError):
            curator.set_scratch("s1", "subagent_result::a1", {"n": 3, "status": "done"})
        with pytest.raises(NotFoundError):
            curator.delete_scratch("s1", "no_such_key")
        with pytest.raises(NotFoundError, match="No session nope"):
            curator.set_scratch("nope", "k", "v")
    with open_store(home, read_only=True) as store:
        assert not Curator(store).scratch_writable("s1")
        with pytest.raises(ReadOnlyError):
            Curator(store).set_scratch("s1", "session_facts", "x")
    assert db.read_bytes() == before


def test_a_scratchpad_mnemoscope_only_reads_is_refused_by_name(tmp_path: Path):
    from formats.test_letta import build_letta_home  # Letta's agents: sessions whose scratchpad is only read

    home = build_letta_home(tmp_path)
    with open_store(home) as store:
        curator = Curator(store)
        assert not curator.scratch_writable("agent-1")
        assert "whose scratchpad Mnemoscope only reads" in curator.scratch_refusals(["agent-1"])["agent-1"]
        with pytest.raises(UnsupportedError, match="whose scratchpad Mnemoscope only reads"):
            curator.set_scratch("agent-1", "session_facts", "a person's edit")
        assert store._journal.count() == 0


def test_a_copied_home_never_opens_the_live_workspace_its_config_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    live = build_agenticx_home(tmp_path / "me")  # ~/.agenticx
    monkeypatch.setenv("HOME", str(live.parent))
    backup = build_agenticx_history(tmp_path / "backup")  # a copy kept elsewhere
    (backup / "config.yaml").write_text("memory:\n  path: ~/.agenticx/workspace\n", encoding="utf-8")
    monkeypatch.setenv("AGX_WORKSPACE_ROOT", str(live / "workspace"))
    live_before = state_of(live)
    with open_store(backup) as store:
        [workspace] = [f for f in store.info()["formats"] if f["format"] == "agenticx-workspace"]
        assert Path(workspace["path"]) == backup / "workspace"
        assert any("outside" in p and "not opened from here" in p for p in store.problems())
        mine = next(m for m in store.page(limit=100) if m.source.kind.value == "markdown")
        Curator(store).delete(mine.id)
    assert state_of(live) == live_before


def test_a_messages_json_nested_too_deep_to_parse_is_reported_not_raised(history: Path):
    [session] = [d for d in (history / "sessions").iterdir() if (d / "messages.json").is_file()][:1]
    (session / "messages.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with open_store(history) as store:
        assert store.turns(session.name) is not None
        assert any("messages.json" in p for p in store.problems())


def test_a_home_that_also_holds_a_memory_db_routes_agenticx_records_to_agenticx(home: Path, tmp_path: Path):
    from mnemoscope.storage.opening import create_workspace

    create_workspace(tmp_path / "native").close()
    (tmp_path / "native" / "memory.db").rename(home / "memory.db")  # a Mnemoscope memory.db beside AgenticX's files
    db = home / "memory" / "sessions.sqlite"
    with open_store(home) as store:
        assert store._workspace is not None and store._workspace.db is not None
        Curator(store).set_scratch("s1", "session_facts", "kept by AgenticX")
    assert load_scratchpad(db, "s1")["session_facts"] == "kept by AgenticX"
