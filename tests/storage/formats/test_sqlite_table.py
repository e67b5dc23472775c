"""Tables of SQLite files no format recognises, read through a mapping of their columns.

The files are laid out as other memory tools lay theirs out (a Discord bot's memories with
embeddings beside them, a note-taking agent's memory table, a journal keyed by epoch seconds),
filled with sqlite3.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ConflictError, ReadOnlyError, UnmappedTableError, UnreadableStoreError
from mnemoscope.storage.opening import remember_mapping
from mnemoscope.storage.detect.table_mapping import (
    TableMapping,
    checked,
    mappings_file,
    propose_mapping,
    remembered_mapping,
    table_columns,
)
from mnemoscope.storage.query import MemoryQuery, Order
from mnemoscope.storage.source import keyword_rank
from mnemoscope.storage.opening import open_store


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def bot_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE memories (
            id TEXT PRIMARY KEY, content TEXT NOT NULL, importance REAL DEFAULT 0.5,
            server_id TEXT NOT NULL, user_id TEXT, channel_id TEXT,
            created_at DATETIME NOT NULL, updated_at DATETIME NOT NULL, forgotten INTEGER DEFAULT 0
        );
        CREATE TABLE embeddings (memory_id TEXT PRIMARY KEY REFERENCES memories(id), vector BLOB NOT NULL);
        CREATE INDEX idx_memories_user ON memories(server_id, user_id);
    """)
    con.executemany(
        "INSERT INTO memories VALUES (?, ?, ?, 'srv1', ?, 'general', ?, ?, 0)",
        [
            ("m1", "Ana prefers tea over coffee", 0.9, "ana", "2026-02-01 10:00:00", "2026-02-03 09:00:00"),
            ("m2", "Ben is learning Rust", 0.4, "ben", "2026-02-02 11:00:00", "2026-02-02 11:00:00"),
            ("m3", "Ana's birthday is on May 4", 0.7, "ana", "2026-02-04 12:00:00", "2026-02-04 12:00:00"),
        ],
    )
    con.execute("INSERT INTO embeddings VALUES ('m1', x'00000000')")
    con.commit()
    con.close()
    return path


def notes_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE settings (k TEXT PRIMARY KEY, v TEXT);
        CREATE TABLE agent_notes (
            note_id INTEGER PRIMARY KEY, scope TEXT, body TEXT NOT NULL, kind TEXT,
            salience REAL, created TEXT, last_used_at TEXT, uses INTEGER DEFAULT 0
        );
    """)
    con.execute("INSERT INTO settings VALUES ('theme', 'dark')")
    con.execute("INSERT INTO agent_notes VALUES (1, 'proj-a', 'Build with make -j8', 'procedure', 0.8, "
                "'2026-01-05T08:00:00Z', '2026-01-09T08:00:00Z', 3)")
    con.commit()
    con.close()
    return path


def journal_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE log (ts INTEGER, entry TEXT, mood TEXT)")
    con.executemany("INSERT INTO log VALUES (?, ?, ?)", [
        (1767225600, "Started the migration plan", "calm"),  # 2026-01-01
        (1767312000, "Migration failed on the index step", "tense"),  # 2026-01-02
    ])
    con.commit()
    con.close()
    return path


def test_proposals_map_realistic_tables_by_name_and_type(tmp_path: Path) -> None:
    bot = propose_mapping(bot_db(tmp_path / "bot.db"))
    assert bot.table == "memories"  # not the embeddings beside it
    assert bot.columns == {
        "content": "content", "id": "id", "created": "created_at", "updated": "updated_at",
        "salience": "importance", "channel": "user_id",
    }
    notes = propose_mapping(notes_db(tmp_path / "notes.db"))
    assert notes.table == "agent_notes"
    assert notes.columns == {
        "content": "body", "id": "note_id", "category": "kind", "created": "created", "accessed": "last_used_at",
        "access_count": "uses", "salience": "salience", "channel": "scope",
    }
    journal = propose_mapping(journal_db(tmp_path / "journal.db"))
    assert journal.columns["content"] == "entry" and journal.columns["created"] == "ts"
    assert "id" not in journal.columns


def test_an_unmapped_file_is_refused_with_the_way_to_map_it(tmp_path: Path) -> None:
    db = bot_db(tmp_path / "bot.db")
    with pytest.raises(UnmappedTableError, match="does not recognise") as raised:
        open_store(db)
    assert raised.value.path == str(db)
    assert "mnemoscope map" in str(raised.value)


def test_a_remembered_mapping_opens_the_table(tmp_path: Path, home: Path) -> None:
    db = bot_db(tmp_path / "bot.db")
    kept = remember_mapping(db, propose_mapping(db))
    assert kept == mappings_file() and kept.parent == home
    assert remembered_mapping(db) == propose_mapping(db)
    with open_store(db) as store:
        assert store.count(MemoryQuery()) == 3
        first = store.page(MemoryQuery(order=Order.SALIENCE), 10)
        assert [m.content for m in first] == [
            "Ana prefers tea over coffee", "Ana's birthday is on May 4", "Ben is learning Rust"
        ]
        ana = first[0]
        assert ana.channel == "ana" and ana.salience == pytest.approx(0.9)
        assert ana.updated_at.isoformat().startswith("2026-02-03T09:00")
        assert ana.metadata["server_id"] == "srv1"
        assert store.counts()["channels"] == {"ana": 2, "ben": 1}
        assert [m.content for m in store.page(MemoryQuery(channels=("ben",)), 10)] == ["Ben is learning Rust"]
        assert [m.content for m in store.page(MemoryQuery(contains="birthday"), 10)] == ["Ana's birthday is on May 4"]
    # Nothing of the mapping went into the owner's file.
    con = sqlite3.connect(db)
    assert sorted(r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")) == [
        "embeddings", "memories"
    ]
    con.close()


def test_with_an_id_column_edit_delete_and_undo_work_with_conflict_checks(tmp_path: Path) -> None:
    db = bot_db(tmp_path / "bot.db")
    remember_mapping(db, propose_mapping(db))
    with open_store(db) as store:
        memory = next(m for m in store.page(MemoryQuery(), 10) if m.content.startswith("Ben"))
        Curator(store).edit(memory.id, content="Ben is learning Go", expected_revision=memory.revision)
        assert store.get(memory.id).content == "Ben is learning Go"
        Curator(store).undo()
        assert store.get(memory.id).content == "Ben is learning Rust"
        Curator(store).delete(memory.id)
        assert store.find(memory.id) is None
        Curator(store).undo()
        assert store.get(memory.id).content == "Ben is learning Rust"

        shown = store.get(memory.id)
        con = sqlite3.connect(db)
        con.execute("UPDATE memories SET importance = 0.6 WHERE id = 'm2'")  # the bot writes meanwhile
        con.commit()
        con.close()
        with pytest.raises(ConflictError):
            Curator(store).edit(shown.id, content="mine", expected_revision=shown.revision)
    con = sqlite3.connect(db)
    assert con.execute("SELECT content FROM memories WHERE id = 'm2'").fetchone()[0] == "Ben is learning Rust"
    con.close()


def test_without_an_id_column_the_table_is_read_only(tmp_path: Path) -> None:
    db = journal_db(tmp_path / "journal.db")
    remember_mapping(db, propose_mapping(db))
    with open_store(db) as store:
        memories = store.page(MemoryQuery(order=Order.CREATED), 10)
        assert [m.content for m in memories] == ["Migration failed on the index step", "Started the migration plan"]
        assert memories[1].created_at.isoformat().startswith("2026-01-01T00:00")
        assert memories[1].tags == ()  # mood is no category name: left unmapped, kept as metadata
        assert memories[1].metadata["mood"] == "calm"
        caps = store.capabilities(memories[0].id)
        assert caps.read_only and "id=COLUMN" in caps.read_only_reason
        with pytest.raises(ReadOnlyError):
            Curator(store).edit(memories[0].id, content="x")


def test_a_mapping_is_refused_for_files_a_format_reads_and_for_missing_columns(tmp_path: Path) -> None:
    facts = tmp_path / "facts.db"
    con = sqlite3.connect(facts)
    con.executescript("""
        CREATE TABLE facts (id TEXT PRIMARY KEY, key TEXT, value TEXT, category TEXT, access_count INTEGER,
                            last_accessed TEXT, created_at TEXT, decay_score REAL);
        CREATE VIRTUAL TABLE facts_fts USING fts5(fact_id, key, value, category);
    """)
    con.close()
    with pytest.raises(UnreadableStoreError, match="already read as structured memory DB"):
        remember_mapping(facts, TableMapping("facts", {"content": "value", "id": "id"}))
    db = journal_db(tmp_path / "journal.db")
    with pytest.raises(UnreadableStoreError, match="created=when"):
        remember_mapping(db, TableMapping("log", {"content": "entry", "created": "when"}))
    assert remembered_mapping(db) is None and remembered_mapping(facts) is None


def rows_of(db: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def per_user_db(path: Path) -> Path:
    """A table whose user_id repeats: one user has several notes."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (user_id TEXT, body TEXT, created_at TEXT)")
    con.executemany("INSERT INTO notes VALUES (?, ?, ?)", [
        ("u1", "Likes green tea", "2026-01-01 10:00:00"),
        ("u1", "Works nights", "2026-01-02 10:00:00"),
        ("u2", "Has a cat", "2026-01-03 10:00:00"),
    ])
    con.commit()
    con.close()
    return path


def test_an_id_column_that_is_not_unique_leaves_the_table_read_only_and_every_row_intact(tmp_path: Path) -> None:
    db = per_user_db(tmp_path / "notes.db")
    mapping = checked(db, TableMapping("notes", {"content": "body", "id": "user_id", "created": "created_at"}))
    assert not mapping.writable and "user_id" in mapping.read_only_reason
    remember_mapping(db, mapping)
    with open_store(db) as store:
        memories = store.page(MemoryQuery(order=Order.CREATED), 10)
        assert len({m.id for m in memories}) == 3  # named by rowid, not by the repeated user_id
        liked = next(m for m in memories if m.content == "Likes green tea")
        assert store.get(liked.id).content == "Likes green tea"
        caps = store.capabilities(liked.id)
        assert caps.read_only and "neither the primary key of notes nor UNIQUE" in caps.read_only_reason
        assert any("user_id" in p for p in store.problems())
        described = store.foreign[0].describe()
        assert described["read_only"] and "user_id" in described["read_only_reason"]
        with pytest.raises(ReadOnlyError):
            Curator(store).delete(liked.id)
        with pytest.raises(ReadOnlyError):
            Curator(store).edit(liked.id, content="Likes coffee")
    assert sorted(rows_of(db, "SELECT body FROM notes")) == [("Has a cat",), ("Likes green tea",), ("Works nights",)]


def test_an_id_column_with_a_unique_index_or_the_sole_primary_key_makes_the_table_writable(tmp_path: Path) -> None:
    db = tmp_path / "keys.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE by_index (memory_id TEXT, body TEXT);
        CREATE UNIQUE INDEX by_index_id ON by_index(memory_id);
        CREATE TABLE by_pair (memory_id TEXT, part INTEGER, body TEXT, PRIMARY KEY (memory_id, part));
        CREATE TABLE by_partial (memory_id TEXT, body TEXT, gone INTEGER);
        CREATE UNIQUE INDEX live_ids ON by_partial(memory_id) WHERE gone = 0;
        CREATE TABLE by_text_key (memory_id TEXT PRIMARY KEY, body TEXT);
    """)
    con.close()
    assert propose_mapping(db, "by_index").writable
    assert propose_mapping(db, "by_text_key").writable
    pair = propose_mapping(db, "by_pair")
    assert pair.columns["id"] == "memory_id" and not pair.writable  # half of the key names no one row
    assert not propose_mapping(db, "by_partial").writable  # unique among some rows only
    # The proposal prefers a unique column for the id.
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE mixed (key TEXT, id INTEGER PRIMARY KEY, body TEXT)")
    con.close()
    assert propose_mapping(db, "mixed").columns["id"] == "id"


def test_a_table_named_like_a_shadow_table_is_offered_unless_its_virtual_table_exists(tmp_path: Path) -> None:
    db = tmp_path / "agent.db"
    con = sqlite3.connect(db)
    con.executescript("""
        CREATE TABLE agent_data (id INTEGER PRIMARY KEY, content TEXT);
        CREATE TABLE memory_content (id INTEGER PRIMARY KEY, text TEXT);
        CREATE VIRTUAL TABLE docs USING fts5(body);
    """)
    con.execute("INSERT INTO agent_data (content) VALUES ('The build server is ci-3')")
    con.commit()
    con.close()
    tables = table_columns(db)
    assert "agent_data" in tables and "memory_content" in tables
    assert not {"docs", "docs_data", "docs_idx", "docs_content", "docs_docsize", "docs_config"} & set(tables)
    assert propose_mapping(db, "agent_data").columns == {"content": "content", "id": "id"}
    remember_mapping(db, propose_mapping(db, "agent_data"))
    with open_store(db) as store:
        assert [m.content for m in store.page(MemoryQuery(), 10)] == ["The build server is ci-3"]


def kv_db(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, created_at TEXT) WITHOUT ROWID;
        CREATE TABLE pairs (a TEXT, b TEXT, note TEXT, PRIMARY KEY (a, b)) WITHOUT ROWID;
    """)
    con.executemany("INSERT INTO kv VALUES (?, ?, ?)", [
        ("deploy", "Deploys go out on Tuesdays", "2026-03-01 09:00:00"),
        ("owner", "Dana owns the search service", "2026-03-02 09:00:00"),
    ])
    con.commit()
    con.close()
    return path


def test_a_without_rowid_table_is_read_and_written_by_its_primary_key(tmp_path: Path) -> None:
    db = kv_db(tmp_path / "kv.db")
    mapping = propose_mapping(db, "kv")
    assert mapping.columns == {"content": "value", "id": "key", "created": "created_at"} and mapping.writable
    remember_mapping(db, mapping)
    with open_store(db) as store:
        memories = store.page(MemoryQuery(order=Order.CREATED), 10)
        assert [m.content for m in memories] == ["Dana owns the search service", "Deploys go out on Tuesdays"]
        assert store.count(MemoryQuery(contains="Dana")) == 1
        [(_name, found)] = store.keyword_lists("tuesdays", MemoryQuery(), 5).items()
        assert [m.content for m in found] == ["Deploys go out on Tuesdays"]
        owner = memories[0]
        Curator(store).edit(owner.id, content="Eli owns the search service", expected_revision=owner.revision)
        assert store.get(owner.id).content == "Eli owns the search service"
        Curator(store).undo()
    assert rows_of(db, "SELECT value FROM kv WHERE key = 'owner'") == [("Dana owns the search service",)]

    # Without an id column it is read-only, its rows named by their primary key.
    remember_mapping(db, TableMapping("kv", {"content": "value"}))
    with open_store(db) as store:
        memories = store.page(MemoryQuery(), 10)
        assert {m.content for m in memories} == {"Deploys go out on Tuesdays", "Dana owns the search service"}
        assert all(store.get(m.id).content == m.content for m in memories)
        assert store.capabilities(memories[0].id).read_only


def test_a_without_rowid_table_keyed_by_several_columns_is_refused_with_a_reason(tmp_path: Path) -> None:
    db = kv_db(tmp_path / "kv.db")
    with pytest.raises(UnreadableStoreError, match="WITHOUT ROWID table whose primary key has several columns"):
        remember_mapping(db, TableMapping("pairs", {"content": "note"}))
    assert remembered_mapping(db) is None


def test_keyword_search_reads_a_mapped_table(tmp_path: Path) -> None:
    for db in (bot_db(tmp_path / "bot.db"), notes_db(tmp_path / "notes.db")):
        remember_mapping(db, propose_mapping(db))
        with open_store(db) as store:
            [(_name, found)] = store.keyword_lists("ana tea make", MemoryQuery(), 5).items()
            assert found and all(m.id.startswith("tbl:") for m in found)
            assert "$rowid" not in found[0].metadata and "rowid" not in found[0].metadata


def test_keyword_search_ranks_ties_by_memory_id_as_keyword_rank_does(tmp_path: Path) -> None:
    """Rows whose id column runs against their insertion order: at equal hits the lowest memory
    id comes first, whatever the rowid says."""
    db = tmp_path / "bot.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE memories (id TEXT PRIMARY KEY, content TEXT NOT NULL, created_at TEXT)")
    con.executemany("INSERT INTO memories VALUES (?, ?, '2026-02-01 10:00:00')",
                    [(f"m{n:02d}", f"note {n} about tea") for n in range(30, 0, -1)])
    con.commit()
    con.close()
    remember_mapping(db, propose_mapping(db))
    with open_store(db) as store:
        (source,) = store._sources
        everything = source.page(MemoryQuery(), 100)
        for k in (1, 5, 29):
            expected = keyword_rank(everything, "tea", k)
            assert [m.id for m in source.keyword_search("tea", MemoryQuery(), k)] == [m.id for m in expected]
        assert source.keyword_search("tea", MemoryQuery(), 1)[0].id.endswith(":m01")
