"""The five-layer system's structured memory DB (seed 003, Layer 2) beside its workspace markdown.

The DB is laid out in the agent's own schema (facts, the vec0 table facts_vec, the FTS5 table
facts_fts) and written the way its memory store writes a fact: the row, then its FTS row, then
its vector, through a SQLite that loads sqlite-vec (pysqlite3; this machine's own sqlite3
cannot load extensions). The workspace gets what memory_save writes: a daily-log line per fact,
and MEMORY.md for the curated ones.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.owners import require
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ConflictError, StoreError, UnsupportedError
from mnemoscope.storage.formats.facts_db import VEC_SWITCH
from mnemoscope.storage.model import Layer
from mnemoscope.storage.query import MemoryQuery, Order
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.views.search import search, similar

require("pysqlite3")
require("sqlite_vec")

import pysqlite3.dbapi2 as vec_sqlite  # noqa: E402
import sqlite_vec  # noqa: E402

SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    id TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    category TEXT DEFAULT 'general',
    source TEXT DEFAULT 'agent',
    confidence REAL DEFAULT 1.0,
    access_count INTEGER DEFAULT 0,
    last_accessed TEXT,
    created_at TEXT DEFAULT (datetime('now')),
    decay_score REAL DEFAULT 1.0
);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_vec USING vec0(id TEXT PRIMARY KEY, embedding float[4]);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(fact_id, key, value, category);
CREATE TABLE IF NOT EXISTS categories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT UNIQUE NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    embedding BLOB,
    item_count INTEGER DEFAULT 0,
    updated_at TEXT DEFAULT (datetime('now'))
);
CREATE VIRTUAL TABLE IF NOT EXISTS categories_vec USING vec0(id INTEGER PRIMARY KEY, embedding float[4]);
CREATE TABLE IF NOT EXISTS logs (
    id TEXT PRIMARY KEY, action TEXT NOT NULL, input_summary TEXT, output_summary TEXT,
    task_id TEXT, tokens_used INTEGER DEFAULT 0, duration_ms INTEGER DEFAULT 0,
    timestamp TEXT DEFAULT (datetime('now'))
);
"""

# (id, key, value, category, access_count, last_accessed, created_at, decay_score, embedding)
FACTS = [
    ("fact_cat", "cat name", "My cat's name is Whiskerino", "preference", 7, "2026-03-04 10:00:00",
     "2026-03-01 09:00:00", 2.9, [1.0, 0.0, 0.0, 0.0]),
    ("fact_pet", "pet food", "Whiskerino eats salmon on Fridays", "preference", 2, "2026-03-02 08:00:00",
     "2026-03-01 09:05:00", 1.4, [0.9, 0.1, 0.0, 0.0]),
    ("fact_deploy", "deploy", "Deploys go out on Tuesdays after the standup", "project", 0, None,
     "2026-03-02 14:00:00", 0.6, [0.0, 0.0, 1.0, 0.0]),
    ("fact_tz", "timezone", "The user works in Europe/Lisbon time", "identity", 4, "2026-03-03 12:00:00",
     "2026-03-02 15:00:00", 1.0, [0.5, 0.5, 0.0, 0.0]),
]


def agent_connection(db: Path):
    con = vec_sqlite.connect(str(db), isolation_level=None)
    con.enable_load_extension(True)
    sqlite_vec.load(con)
    return con


def store_fact(con, fact_id, key, value, category, count, accessed, created, decay, embedding) -> None:
    """What the agent's store_fact writes for a new fact: the row, its FTS row, its vector."""
    con.execute(
        "INSERT INTO facts (id, key, value, category, source, confidence, access_count, last_accessed, "
        "created_at, decay_score) VALUES (?, ?, ?, ?, 'memory_save', 0.9, ?, ?, ?, ?)",
        (fact_id, key, value, category, count, accessed, created, decay),
    )
    con.execute("INSERT INTO facts_fts (fact_id, key, value, category) VALUES (?, ?, ?, ?)",
                (fact_id, key, value, category))
    con.execute("INSERT INTO facts_vec (id, embedding) VALUES (?, ?)", (fact_id, sqlite_vec.serialize_float32(embedding)))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return build_facts_workspace(tmp_path / "workspace")


def build_facts_workspace(root: Path) -> Path:
    """A five-layer agent's workspace: MEMORY.md, daily logs and the facts DB (facts.db) beside them."""
    (root / "memory").mkdir(parents=True)
    con = agent_connection(root / "facts.db")
    con.executescript(SCHEMA)
    for fact in FACTS:
        store_fact(con, *fact)
    con.close()
    (root / "MEMORY.md").write_text(
        "# Long-term facts\n\n- My cat's name is Whiskerino\n- The user works in Europe/Lisbon time\n", encoding="utf-8"
    )
    (root / "memory" / "2026-03-01.md").write_text(
        "# 2026-03-01\n\n- 09:00 cat name: My cat's name is Whiskerino\n"
        "- 09:05 pet food: Whiskerino eats salmon on Fridays\n", encoding="utf-8"
    )
    (root / "memory" / "2026-03-02.md").write_text(
        "# 2026-03-02\n\n- 14:00 deploy: Deploys go out on Tuesdays after the standup\n", encoding="utf-8"
    )
    return root


# The workspace files the seed loads into the system prompt and the learnings it injects: the
# agent's identity and bootstrap, no facts (its Layer 3 and Layer 4).
IDENTITY_FILES = {
    "SOUL.md": "# Soul\n\n- Be kind, brief and precise\n",
    "AGENTS.md": "# Agents\n\n- scout: finds sources and summarises them\n",
    "USER.md": "# User\n\n- Prefers answers in Portuguese\n",
    "HEARTBEAT.md": "# Heartbeat\n\n- Check the deploy queue every hour\n",
    "learnings/errors.md": "# Errors\n\n- web_fetch timed out on example.org; retry with a longer timeout\n",
    "learnings/corrections.md": "# Corrections\n\n- The user's cat is a girl\n",
}


def add_identity_files(root: Path) -> Path:
    (root / "learnings").mkdir(exist_ok=True)
    for rel, text in IDENTITY_FILES.items():
        (root / rel).write_text(text, encoding="utf-8")
    return root


def facts_of(store) -> dict[str, object]:
    return {m.metadata["id"]: m for m in store.page(MemoryQuery(), limit=100) if m.source.format == "facts-db"}


def fts_ids(db: Path, words: str) -> list[str]:
    con = sqlite3.connect(db)
    try:
        return sorted(r[0] for r in con.execute("SELECT fact_id FROM facts_fts WHERE facts_fts MATCH ?", (words,)))
    finally:
        con.close()


def vector_ids(db: Path) -> list[str]:
    con = agent_connection(db)
    try:
        return sorted(r[0] for r in con.execute("SELECT id FROM facts_vec"))
    finally:
        con.close()


def test_the_workspace_and_its_facts_db_open_as_one_store(workspace: Path) -> None:
    with open_store(workspace) as store:
        formats = sorted(getattr(s, "format", "") for s in store._sources)
        assert formats == ["facts-db", "mnemoscope"]
        facts = facts_of(store)
        assert set(facts) == {"fact_cat", "fact_pet", "fact_deploy", "fact_tz"}
        cat = facts["fact_cat"]
        assert cat.content == "My cat's name is Whiskerino"
        assert cat.tags == ("preference",)
        assert cat.layer is Layer.SEMANTIC
        assert cat.access_count == 7
        assert cat.last_accessed.isoformat().startswith("2026-03-04T10:00:00")
        assert cat.created_at.isoformat().startswith("2026-03-01T09:00:00")
        assert cat.metadata["decay_score"] == 2.9 and cat.metadata["key"] == "cat name"
        assert cat.salience == 1.0  # min(1, decay_score)
        assert facts["fact_deploy"].salience == pytest.approx(0.6)
        # A fact never accessed was last "accessed" when it was created.
        assert facts["fact_deploy"].last_accessed == facts["fact_deploy"].created_at
        # The markdown of the workspace is there too: 2 + 2 + 1 bullets, plus the 4 facts.
        assert store.count(MemoryQuery()) == 9
        # The most salient fact first, the least last.
        by_salience = [m.metadata["id"] for m in store.page(MemoryQuery(order=Order.SALIENCE, kinds=()), 100)
                       if m.source.format == "facts-db"]
        assert by_salience[-1] == "fact_deploy"


def test_categories_named_in_the_categories_table_are_shown(workspace: Path) -> None:
    con = agent_connection(workspace / "facts.db")
    con.execute("ALTER TABLE facts ADD COLUMN category_id INTEGER REFERENCES categories(id)")
    con.execute("INSERT INTO categories (name, item_count) VALUES ('pets', 2)")
    con.execute("UPDATE facts SET category_id = 1 WHERE id IN ('fact_cat', 'fact_pet')")
    con.close()
    with open_store(workspace) as store:
        facts = facts_of(store)
        assert facts["fact_pet"].tags == ("pets",)
        assert facts["fact_tz"].tags == ("identity",)


def test_keyword_search_runs_on_the_agents_fts5_index(workspace: Path) -> None:
    con = agent_connection(workspace / "facts.db")
    # The index says what the row no longer does: only a search of the index finds it by "kibble".
    con.execute("UPDATE facts_fts SET value = 'Whiskerino eats kibble' WHERE fact_id = 'fact_pet'")
    con.close()
    with open_store(workspace) as store:
        found = store.keyword_lists("kibble", MemoryQuery(), 10)["structured memory DB"]
        assert [m.metadata.get("id") for m in found] == ["fact_pet"]
        # The fact's own text does not say "kibble": search finds no match in it, and says so.
        result = search(store, "kibble", mode="keyword")
        assert result.matched == 0 and result.notices == ["No memories match 'kibble'."]
        # Both say Whiskerino once (a plain count ties them, and the lower id, fact_cat, would
        # come first); bm25 ranks the shorter indexed text higher.
        facts_db = next(s for s in store._sources if s.format == "facts-db")
        ranked = facts_db.keyword_search("whiskerino", MemoryQuery(), 10)
        assert [m.metadata["id"] for m in ranked] == ["fact_pet", "fact_cat"]
        assert any("indexed in facts_fts with other text than their value: fact_pet" in p for p in store.problems())


def test_similar_facts_are_found_by_knn_through_sqlite_vec(workspace: Path) -> None:
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        assert store.capabilities(cat.id).vector_search
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
        result = similar(store, cat.id, k=3)  # nearest first; what the floor calls noise is left out
        shown = [h.memory.metadata["id"] for h in result.hits]
        assert shown and shown == ["fact_pet", "fact_tz", "fact_deploy"][: len(shown)]
        # A text cannot be embedded here (the agent's embedder is remote): keyword results, and why.
        found = search(store, "Whiskerino", mode="vector")
        assert found.mode == "keyword" and found.notices


def test_without_sqlite_vec_the_vectors_are_reported_and_the_rest_works(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VEC_SWITCH, "off")
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        assert not store.capabilities(cat.id).vector_search
        notes = [p for p in store.problems() if "sqlite-vec" in p]
        assert any("facts_vec is a sqlite-vec (vec0) table; its 4 vector(s) were not read" in p for p in notes)
        with pytest.raises(UnsupportedError):
            similar(store, cat.id)
        assert [h.memory.metadata.get("id") for h in search(store, "Lisbon", mode="keyword").hits
                if h.memory.source.format == "facts-db"] == ["fact_tz"]
        # A delete works without the extension; the vector stays, and the step says so.
        outcome = Curator(store).delete(cat.id)
        assert any("vector stays in facts_vec" in n for n in outcome.notes)
    assert vector_ids(workspace / "facts.db") == ["fact_cat", "fact_deploy", "fact_pet", "fact_tz"]
    assert fts_ids(workspace / "facts.db", "cat") == []


def test_markdown_and_db_disagreements_are_problems(workspace: Path) -> None:
    with open_store(workspace) as store:
        # deploy and tz are in the markdown (daily log, MEMORY.md); everything agrees.
        assert not [p for p in store.problems() if "markdown" in p]
    con = agent_connection(workspace / "facts.db")
    store_fact(con, "fact_db_only", "wifi", "The office wifi password rotates monthly", "work", 0, None,
               "2026-03-05 09:00:00", 1.0, [0.0, 0.0, 0.0, 1.0])
    con.close()
    with (workspace / "memory" / "2026-03-02.md").open("a", encoding="utf-8") as f:
        f.write("- 16:00 The standup moved to 10:30\n")
    with open_store(workspace) as store:
        problems = store.problems()
        assert any("1 fact(s) in facts.db are in no markdown file" in p and "fact_db_only" in p for p in problems)
        assert any("1 markdown entry hold no fact of facts.db" in p and "memory/2026-03-02.md:4" in p
                   and "standup moved" in p for p in problems)


def test_edit_delete_and_undo_keep_the_fts_index_and_vectors_in_step(workspace: Path) -> None:
    db = workspace / "facts.db"
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        outcome = Curator(store).edit(cat.id, content="My cat's name is Whiskerina", expected_revision=cat.revision)
        assert any("old text" in n for n in outcome.notes)
        assert fts_ids(db, "Whiskerina") == ["fact_cat"]
        assert fts_ids(db, "cat") == ["fact_cat"]  # one row per fact, not an added one
        con = sqlite3.connect(db)
        assert con.execute("SELECT count(*) FROM facts_fts WHERE fact_id = 'fact_cat'").fetchone()[0] == 1
        con.close()
        assert store.get(cat.id).content == "My cat's name is Whiskerina"
        Curator(store).undo()
        assert fts_ids(db, "Whiskerina") == []
        assert store.get(cat.id).content == "My cat's name is Whiskerino"

        Curator(store).delete(cat.id)
        assert store.find(cat.id) is None
        assert fts_ids(db, "cat") == []
        assert vector_ids(db) == ["fact_deploy", "fact_pet", "fact_tz"]
        Curator(store).undo()
        back = store.get(cat.id)
        assert (back.content, back.access_count, back.tags) == (cat.content, 7, ("preference",))
        assert fts_ids(db, "cat") == ["fact_cat"]
        assert vector_ids(db) == ["fact_cat", "fact_deploy", "fact_pet", "fact_tz"]
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]


def test_a_fact_the_agent_changed_since_it_was_read_is_not_overwritten(workspace: Path) -> None:
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        con = agent_connection(workspace / "facts.db")
        # The agent recalls it: one more access, a new decay score.
        con.execute("UPDATE facts SET access_count = 8, decay_score = 3.1 WHERE id = 'fact_cat'")
        con.close()
        with pytest.raises(ConflictError):
            Curator(store).edit(cat.id, content="mine", expected_revision=cat.revision)
        assert store.get(cat.id).content == "My cat's name is Whiskerino"
        assert fts_ids(workspace / "facts.db", "mine") == []


def test_reading_writes_no_byte(workspace: Path) -> None:
    db = workspace / "facts.db"
    before = (db.read_bytes(), sorted(os.listdir(workspace)))
    with open_store(workspace, read_only=True) as store:
        cat = facts_of(store)["fact_cat"]
        similar(store, cat.id)
        search(store, "Whiskerino", mode="keyword")
        store.problems()
    assert (db.read_bytes(), sorted(os.listdir(workspace))) == before


def test_the_facts_db_opened_alone_and_named_memory_db(workspace: Path, tmp_path: Path) -> None:
    alone = tmp_path / "data"
    alone.mkdir()
    (workspace / "facts.db").rename(alone / "memory.db")
    with open_store(alone / "memory.db") as store:
        assert [s.format for s in store._sources] == ["facts-db"]
        assert store.count(MemoryQuery()) == 4
        assert not [p for p in store.problems() if "markdown" in p]


# -- awkward paths, WAL-mode reads, undo across machines ---------------------------------------


def files_of(root: Path) -> dict[str, bytes | None]:
    """Every file under root and its bytes; a -shm only by name (SQLite's shared memory of the
    readers of a WAL database: every reader marks its place in it, a mode=ro one included)."""
    return {p.relative_to(root).as_posix(): None if p.name.endswith("-shm") else p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["a#b", "c?d"])
def test_a_facts_db_in_a_folder_whose_name_holds_a_uri_character(tmp_path: Path, name: str) -> None:
    root = build_facts_workspace(tmp_path / name / "workspace")
    before = sorted(os.listdir(tmp_path)), sorted(os.listdir(root.parent)), files_of(root)
    for read_only in (True, False):
        with open_store(root, read_only=read_only) as store:
            assert sorted(s.format for s in store._sources) == ["facts-db", "mnemoscope"]
            cat = facts_of(store)["fact_cat"]
            assert cat.content == "My cat's name is Whiskerino"
            assert store.capabilities(cat.id).vector_search
            assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
            assert [h.memory.metadata["id"] for h in similar(store, cat.id, k=1).hits] == ["fact_pet"]
    assert (sorted(os.listdir(tmp_path)), sorted(os.listdir(root.parent)), files_of(root)) == before


def _in_wal_mode(db: Path) -> None:
    con = agent_connection(db)
    assert con.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal"
    con.close()


def test_reading_vectors_of_a_wal_mode_facts_db_writes_no_byte(workspace: Path) -> None:
    db = workspace / "facts.db"
    _in_wal_mode(db)
    before = files_of(workspace)
    with open_store(workspace, read_only=True) as store:
        facts_db = next(s for s in store._sources if s.format == "facts-db")
        cat = facts_of(store)["fact_cat"]
        # The vector first, before any other connection to the file is open.
        facts_db.close()
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
        assert facts_db.read_record(cat.id)["$vector"]
        similar(store, cat.id)
        store.problems()
        # The facts' reader closed while the vectors are being read (another thread closes or
        # reopens it): the last reader to close, whichever it is, removes the -wal they made.
        assert facts_db.rows("SELECT count(*) FROM facts")[0][0] == 4
        with facts_db._vec_reading() as con:
            cursor = con.execute("SELECT id FROM facts_vec")
            assert cursor.fetchone()
            facts_db.close()
            assert len(cursor.fetchall()) == 3
    assert files_of(workspace) == before


def test_reading_vectors_while_the_agent_holds_its_wal_open_writes_no_byte(workspace: Path) -> None:
    db = workspace / "facts.db"
    _in_wal_mode(db)
    agent = agent_connection(db)
    agent.execute("PRAGMA wal_autocheckpoint = 0")
    store_fact(agent, "fact_new", "new", "A fact only the -wal holds", "project", 0, None,
               "2026-03-06 09:00:00", 1.0, [0.0, 1.0, 0.0, 0.0])
    try:
        before = files_of(workspace)
        with open_store(workspace, read_only=True) as store:
            new = facts_of(store)["fact_new"]
            assert store.embedding_of(new.id) == [0.0, 1.0, 0.0, 0.0]
            similar(store, new.id)
        assert files_of(workspace) == before
    finally:
        agent.close()


def test_undo_of_a_delete_that_took_the_vector_is_refused_where_sqlite_vec_does_not_load(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = workspace / "facts.db"
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        Curator(store).delete(cat.id)
    assert vector_ids(db) == ["fact_deploy", "fact_pet", "fact_tz"]
    before = files_of(workspace)
    monkeypatch.setenv(VEC_SWITCH, "off")
    with open_store(workspace) as store:
        with pytest.raises(StoreError, match="sqlite-vec"):
            Curator(store).undo()
        assert store.find(cat.id) is None
    assert files_of(workspace) == before
    monkeypatch.delenv(VEC_SWITCH)
    with open_store(workspace) as store:
        Curator(store).undo()
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
        assert store.get(cat.id).content == "My cat's name is Whiskerino"
    assert vector_ids(db) == ["fact_cat", "fact_deploy", "fact_pet", "fact_tz"]


def test_undo_of_an_edit_made_with_sqlite_vec_is_refused_without_it(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        Curator(store).edit(cat.id, content="My cat's name is Whiskerina", expected_revision=cat.revision)
    before = files_of(workspace)
    monkeypatch.setenv(VEC_SWITCH, "off")
    with open_store(workspace) as store:
        with pytest.raises(StoreError, match="sqlite-vec") as refused:
            Curator(store).undo()
        assert not isinstance(refused.value, ConflictError)
        assert store.get(cat.id).content == "My cat's name is Whiskerina"
    assert files_of(workspace) == before
    monkeypatch.delenv(VEC_SWITCH)
    with open_store(workspace) as store:
        Curator(store).undo()
        assert store.get(cat.id).content == "My cat's name is Whiskerino"


def test_a_step_made_without_sqlite_vec_is_undone_with_it_and_the_vector_is_kept(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = workspace / "facts.db"
    monkeypatch.setenv(VEC_SWITCH, "off")
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        Curator(store).edit(cat.id, content="My cat's name is Whiskerina", expected_revision=cat.revision)
        Curator(store).delete(cat.id)
    monkeypatch.delenv(VEC_SWITCH)
    with open_store(workspace) as store:
        Curator(store).undo()
        Curator(store).undo()
        assert store.get(cat.id).content == "My cat's name is Whiskerino"
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
    assert vector_ids(db) == ["fact_cat", "fact_deploy", "fact_pet", "fact_tz"]


def fts_rows(db: Path, fact_id: str) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT fact_id, key, value, category FROM facts_fts WHERE fact_id = ? ORDER BY rowid",
                           (fact_id,)).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("vec", ["on", "off"])
def test_undo_puts_back_the_facts_fts_rows_as_they_were(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, vec: str
) -> None:
    db = workspace / "facts.db"
    con = agent_connection(db)
    # The agent's index says more than the row: another key, and a second row for the fact.
    con.execute("UPDATE facts_fts SET key = 'kitty' WHERE fact_id = 'fact_cat'")
    con.execute("INSERT INTO facts_fts (fact_id, key, value, category) VALUES ('fact_cat', 'alias', 'Whisky', 'pets')")
    con.close()
    indexed = fts_rows(db, "fact_cat")
    assert len(indexed) == 2
    if vec == "off":
        monkeypatch.setenv(VEC_SWITCH, "off")
    with open_store(workspace) as store:
        cat = facts_of(store)["fact_cat"]
        Curator(store).edit(cat.id, content="My cat's name is Whiskerina", expected_revision=cat.revision)
        assert fts_rows(db, "fact_cat") == [("fact_cat", "cat name", "My cat's name is Whiskerina", "preference")]
        Curator(store).undo()
        assert fts_rows(db, "fact_cat") == indexed
        Curator(store).delete(cat.id)
        assert fts_rows(db, "fact_cat") == []
        Curator(store).undo()
        assert fts_rows(db, "fact_cat") == indexed


def test_reading_vectors_through_a_symlink_leaves_a_crashed_agents_wal_as_it_is(tmp_path: Path) -> None:
    """The agent was killed with writes only in its -wal: a read-only open (through a symlinked
    facts.db, whose -wal is named after the real file) reads them and folds nothing into the file."""
    root = build_facts_workspace(tmp_path / "workspace")
    data = tmp_path / "data"
    data.mkdir()
    (root / "facts.db").rename(data / "facts.db")
    (root / "facts.db").symlink_to(data / "facts.db")
    _in_wal_mode(data / "facts.db")
    code = (
        "import os, sys, pysqlite3.dbapi2 as s, sqlite_vec\n"
        "con = s.connect(sys.argv[1], isolation_level=None)\n"
        "con.enable_load_extension(True); sqlite_vec.load(con)\n"
        "con.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "con.execute(\"UPDATE facts SET value = 'Whiskerino is a Maine Coon' WHERE id = 'fact_cat'\")\n"
        "os._exit(0)\n"  # killed: no checkpoint, the -wal stays
    )
    subprocess.run([sys.executable, "-c", code, str(data / "facts.db")], check=True)
    assert (data / "facts.db-wal").stat().st_size > 0
    before = files_of(data), files_of(root)
    with open_store(root, read_only=True) as store:
        cat = facts_of(store)["fact_cat"]
        assert cat.content == "Whiskerino is a Maine Coon"
        facts_db = next(s for s in store._sources if s.format == "facts-db")
        facts_db.close()
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
    assert (files_of(data), files_of(root)) == before


# -- the same system laid out another way: memories, an external-content index, vec0 with columns ---


MEMORIES_SCHEMA = """
CREATE TABLE memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'general',
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    decay_score REAL NOT NULL DEFAULT 1.0
);
CREATE VIRTUAL TABLE memories_fts USING fts5(content, category, content='memories', content_rowid='id');
CREATE VIRTUAL TABLE memories_vec USING vec0(
    memory_id INTEGER PRIMARY KEY, embedding float[4], category TEXT, +content TEXT
);
"""
MEMORIES_TRIGGERS = """
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts(rowid, content, category) VALUES (new.id, new.content, new.category);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, content, category) VALUES ('delete', old.id, old.content, old.category);
END;
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
  INSERT INTO memories_fts(memories_fts, rowid, content, category) VALUES ('delete', old.id, old.content, old.category);
  INSERT INTO memories_fts(rowid, content, category) VALUES (new.id, new.content, new.category);
END;
"""
# (content, category, access_count, last_accessed_at, created_at, decay_score, embedding)
MEMORIES = [
    ("My cat's name is Whiskerino", "preference", 7, "2026-03-04 10:00:00", "2026-03-01 09:00:00", 0.9,
     [1.0, 0.0, 0.0, 0.0]),
    ("Whiskerino eats salmon on Fridays", "preference", 2, "2026-03-02 08:00:00", "2026-03-01 09:05:00", 0.4,
     [0.9, 0.1, 0.0, 0.0]),
    ("Deploys go out on Tuesdays", "project", 0, None, "2026-03-02 14:00:00", 0.05, [0.0, 0.0, 1.0, 0.0]),
]


def save_memory(con, content, category, count, accessed, created, decay, embedding, *, triggers: bool = True) -> int:
    """What this agent's memory_save writes: the row (its triggers index it; without them it
    indexes the row itself), then the vector with the category and text kept beside it."""
    cursor = con.execute(
        "INSERT INTO memories (content, category, access_count, last_accessed_at, created_at, decay_score) "
        "VALUES (?, ?, ?, ?, ?, ?)", (content, category, count, accessed, created, decay))
    rowid = cursor.lastrowid
    if not triggers:
        con.execute("INSERT INTO memories_fts (rowid, content, category) VALUES (?, ?, ?)", (rowid, content, category))
    con.execute("INSERT INTO memories_vec (memory_id, embedding, category, content) VALUES (?, ?, ?, ?)",
                (rowid, sqlite_vec.serialize_float32(embedding), category, content))
    return rowid


def build_memories_workspace(root: Path, *, triggers: bool = True) -> Path:
    """A five-layer agent laid out otherwise: memory.sqlite (memories, memories_fts over them,
    memories_vec with a metadata and an auxiliary column) beside MEMORY.md and a daily log."""
    (root / "memory").mkdir(parents=True)
    con = agent_connection(root / "memory.sqlite")
    con.executescript(MEMORIES_SCHEMA + (MEMORIES_TRIGGERS if triggers else ""))
    for memory in MEMORIES:
        save_memory(con, *memory, triggers=triggers)
    con.close()
    (root / "MEMORY.md").write_text("# Long-term facts\n\n- My cat's name is Whiskerino\n", encoding="utf-8")
    (root / "memory" / "2026-03-01.md").write_text(
        "# 2026-03-01\n\n- Whiskerino eats salmon on Fridays\n- Deploys go out on Tuesdays\n", encoding="utf-8")
    return root


def memories_of(store) -> dict[str, object]:
    return {m.content: m for m in store.page(MemoryQuery(), limit=100) if m.source.format == "facts-db"}


def vec_rows(db: Path) -> list[tuple]:
    con = agent_connection(db)
    try:
        return con.execute("SELECT memory_id, vec_to_json(embedding), category, content FROM memories_vec "
                           "ORDER BY memory_id").fetchall()
    finally:
        con.close()


def matched(db: Path, words: str) -> list[int]:
    """The ids the agent's own keyword search finds (memories_fts MATCH)."""
    con = sqlite3.connect(db)
    try:
        return sorted(r[0] for r in con.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (words,)))
    finally:
        con.close()


def test_a_facts_db_in_another_layout_opens_with_no_manual_map(tmp_path: Path) -> None:
    root = build_memories_workspace(tmp_path / "agent")
    with open_store(root) as store:
        assert sorted(getattr(s, "format", "") for s in store._sources) == ["facts-db", "mnemoscope"]
        facts = memories_of(store)
        assert set(facts) == {m[0] for m in MEMORIES}
        cat = facts["My cat's name is Whiskerino"]
        assert cat.id == "fact:memory.sqlite:1"
        assert (cat.tags, cat.access_count, cat.salience) == (("preference",), 7, 0.9)
        assert cat.last_accessed.isoformat().startswith("2026-03-04T10:00:00")
        assert cat.created_at.isoformat().startswith("2026-03-01T09:00:00")
        # every column the agent keeps, by its own name; nothing it does not keep
        assert cat.metadata == {"id": 1, "category": "preference", "access_count": 7,
                                "last_accessed_at": "2026-03-04 10:00:00", "created_at": "2026-03-01 09:00:00",
                                "decay_score": 0.9}
        # its keyword search is the agent's external-content FTS5 index; its KNN the vec0 table
        assert [m.content for m in store.keyword_lists("salmon", MemoryQuery(), 5)["structured memory DB"]] == [
            "Whiskerino eats salmon on Fridays"]
        assert store.embedding_of(cat.id) == [1.0, 0.0, 0.0, 0.0]
        shown = [h.memory.content for h in similar(store, cat.id, k=2).hits]
        assert shown and shown == ["Whiskerino eats salmon on Fridays", "Deploys go out on Tuesdays"][: len(shown)]
        assert not store.problems()
    # The file alone, too.
    with open_store(root / "memory.sqlite", read_only=True) as store:
        assert store.count(MemoryQuery()) == 3


@pytest.mark.parametrize("triggers", [True, False], ids=["indexed-by-triggers", "indexed-by-the-agent"])
def test_edit_delete_and_undo_in_the_other_layout_keep_its_index_and_vector_columns(
    tmp_path: Path, triggers: bool
) -> None:
    root = build_memories_workspace(tmp_path / "agent", triggers=triggers)
    db = root / "memory.sqlite"
    vectors = vec_rows(db)
    with open_store(root) as store:
        pet = memories_of(store)["Whiskerino eats salmon on Fridays"]
        outcome = Curator(store).edit(pet.id, content="Whiskerino eats tuna on Fridays", expected_revision=pet.revision)
        assert any("as is the text kept beside it" in n for n in outcome.notes)
        assert (matched(db, "tuna"), matched(db, "salmon")) == ([2], [])
        # the index follows the row (the daily log still says salmon: that, and only that, disagrees)
        assert [f.kind for f in store.consistency_checks()] == ["fact-not-in-markdown", "markdown-not-in-facts"]
        Curator(store).undo()
        assert (matched(db, "tuna"), matched(db, "salmon")) == ([], [2])

        Curator(store).delete(pet.id)
        assert (matched(db, "salmon"), [r[0] for r in vec_rows(db)]) == ([], [1, 3])
        assert store.find(pet.id) is None
        Curator(store).undo()
        assert store.get(pet.id).content == "Whiskerino eats salmon on Fridays"
        assert matched(db, "salmon") == [2]
        assert vec_rows(db) == vectors  # the vector, its category and the text kept beside it
        assert not store.problems()


def test_a_file_with_two_tables_of_facts_is_not_taken_for_one(tmp_path: Path) -> None:
    root = build_memories_workspace(tmp_path / "agent")
    con = agent_connection(root / "memory.sqlite")
    con.executescript(SCHEMA)  # the other layout's tables too: which is the agent's is not clear
    con.close()
    with open_store(root) as store:
        assert [getattr(s, "format", "") for s in store._sources] == ["mnemoscope"]
    with pytest.raises(StoreError, match="mnemoscope map"):
        open_store(root / "memory.sqlite")


def plant_every_disagreement(workspace: Path) -> None:
    """Each way the five-layer workspace can disagree with itself, once."""
    con = agent_connection(workspace / "facts.db")
    store_fact(con, "fact_db_only", "wifi", "The office wifi password rotates monthly", "work", 0, None,
               "2026-03-05 09:00:00", 1.0, [0.0, 0.0, 0.0, 1.0])  # in no markdown file
    con.execute("UPDATE facts_fts SET value = 'Whiskerino eats kibble' WHERE fact_id = 'fact_pet'")  # stale
    con.execute("DELETE FROM facts_fts WHERE fact_id = 'fact_tz'")  # unindexed
    con.execute("INSERT INTO facts_fts (fact_id, key, value, category) VALUES ('fact_gone', 'x', 'gone', 'y')")
    con.execute("DELETE FROM facts_vec WHERE id = 'fact_deploy'")  # no vector
    con.execute("INSERT INTO facts_vec (id, embedding) VALUES ('fact_ghost', ?)", (sqlite_vec.serialize_float32([0.0] * 4),))
    con.close()
    with (workspace / "memory" / "2026-03-02.md").open("a", encoding="utf-8") as f:
        f.write("- 16:00 The standup moved to 10:30\n")  # holds no fact


EVERY_DISAGREEMENT = {
    "fact-unindexed": ["fact:facts.db:fact_tz"],
    "index-fts-dangling": ["fts:facts_fts:fact_gone"],
    "fact-index-stale": ["fact:facts.db:fact_pet"],
    "fact-no-vector": ["fact:facts.db:fact_deploy"],
    "fact-orphan-vector": ["vec:facts_vec:fact_ghost"],
    "fact-not-in-markdown": ["fact:facts.db:fact_db_only"],
    "markdown-not-in-facts": ["md:memory/2026-03-02.md:54c44165d1a0"],
}


@pytest.mark.parametrize("vec", ["on", "off"])
def test_every_disagreement_info_lists_is_a_finding_of_the_check(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, vec: str
) -> None:
    plant_every_disagreement(workspace)
    if vec == "off":  # the vectors' keys are read from vec0's plain rowids table: no extension needed
        monkeypatch.setenv(VEC_SWITCH, "off")
    with open_store(workspace, read_only=True) as store:
        report = store.consistency_checks()
        found = {kind: [f.record for f in report.items(kind)] for kind in report.counts()}
        assert found == EVERY_DISAGREEMENT
        problems = [p for p in store.problems() if "were not read" not in p]  # (vectors not read: no disagreement)
        assert len(problems) == len(EVERY_DISAGREEMENT)
        for kind, records in EVERY_DISAGREEMENT.items():
            name = records[0].rsplit(":", 1)[-1] if kind != "markdown-not-in-facts" else "memory/2026-03-02.md:4"
            assert any(name in p for p in problems), (kind, problems)


def test_the_other_layouts_index_and_vectors_are_checked_from_their_plain_tables(tmp_path: Path) -> None:
    root = build_memories_workspace(tmp_path / "agent")
    con = agent_connection(root / "memory.sqlite")
    # The index loses a memory (FTS5's delete command, as a broken trigger would), and a vector is left of one gone.
    con.execute("INSERT INTO memories_fts (memories_fts, rowid, content, category) "
                "VALUES ('delete', 3, 'Deploys go out on Tuesdays', 'project')")
    con.execute("INSERT INTO memories_vec (memory_id, embedding, category, content) VALUES (9, ?, 'x', 'gone')",
                (sqlite_vec.serialize_float32([0.0, 1.0, 0.0, 0.0]),))
    con.close()
    with open_store(root, read_only=True) as store:
        report = store.consistency_checks()
        assert {kind: [f.record for f in report.items(kind)] for kind in report.counts()} == {
            "fact-unindexed": ["fact:memory.sqlite:3"], "fact-orphan-vector": ["vec:memories_vec:9"]}
        assert len(store.problems()) == 2
