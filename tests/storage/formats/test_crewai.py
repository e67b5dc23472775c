"""CrewAI storage folders: older long-term SQLite + Chroma short-term/entity
directories, and the 1.x LanceDB ``memories`` table.

CrewAI itself cannot be installed beside the rest of the test extra (crewai 1.15
pins openai<3, openai-agents needs openai>=3). So the stores are written the way
CrewAI writes them, with the libraries it writes them through: the long-term
table with the DDL and INSERT of crewai 0.x LTMSQLiteStorage, the RAG memories
with chromadb (``collection.add`` as RAGStorage does, explicit embeddings), the
unified memory with lancedb and the row shape of crewai 1.15
``LanceDBStorage._record_to_row``. Reads back use CrewAI's own queries.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import ReadOnlyError, UnsupportedError
from mnemoscope.storage.extras import MissingExtraError
from mnemoscope.storage.views.search import search
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store

LTM_DDL = """CREATE TABLE IF NOT EXISTS long_term_memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT, task_description TEXT, metadata TEXT, datetime TEXT, score REAL)"""
TASKS = [
    ("Research train routes from Porto to Lisbon",
     {"agent": "Researcher", "expected_output": "a list of routes", "quality": 8, "suggestions": ["cite timetables"]},
     "1763539200.5", 8.0),
    ("Write the trip summary", {"agent": "Writer", "expected_output": "one page", "quality": 6, "suggestions": []},
     "1763625600.25", 6.0),
]


def ltm_load(db: Path, task: str) -> list[tuple]:
    """crewai 0.x LTMSQLiteStorage.load."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT metadata, datetime, score FROM long_term_memories WHERE task_description = ? "
                       "ORDER BY datetime DESC, score ASC LIMIT 3", (task,)).fetchall()
    con.close()
    return rows


def _rag(folder: Path, name: str, docs: list[tuple[str, dict]]) -> None:
    client = chromadb.PersistentClient(path=str(folder), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection(name, embedding_function=None)
    texts = [d for d, _ in docs]
    col.add(ids=[f"{name}-{i}" for i in range(len(docs))], documents=texts, metadatas=[m for _, m in docs],
            embeddings=HashingEmbedder(32).embed(texts))


def build_crewai_storage(tmp_path: Path) -> Path:
    root = tmp_path / "trip_crew"
    root.mkdir()
    con = sqlite3.connect(root / "long_term_memory_storage.db")
    con.execute(LTM_DDL)
    con.executemany("INSERT INTO long_term_memories (task_description, metadata, datetime, score) VALUES (?, ?, ?, ?)",
                    [(t, json.dumps(m), d, s) for t, m, d, s in TASKS])
    con.commit()
    con.close()
    _rag(root / "short_term" / "Researcher_Writer", "short_term",
         [("The 9:00 train is fastest", {"agent": "Researcher"})])
    _rag(root / "entities" / "Researcher_Writer", "entities",
         [("Ana(Person): the traveller", {"relationships": "books trips", "entity_type": "Person"})])
    return root


@pytest.fixture
def storage(tmp_path: Path) -> Path:
    return build_crewai_storage(tmp_path)


def test_long_term_and_rag_memories_open_together(storage: Path):
    with open_store(storage) as store:
        contents = {m.content: m for m in store.page(limit=50)}
        routes = contents["Research train routes from Porto to Lisbon\nSuggestions: cite timetables"]
        assert routes.channel == "Researcher" and routes.metadata["quality"] == 8
        assert routes.created_at.timestamp() == pytest.approx(1763539200.5)
        assert "The 9:00 train is fastest" in contents and "Ana(Person): the traveller" in contents
        labels = {s.label for s in store._sources}
        assert {"CrewAI short-term memory (Researcher_Writer)", "CrewAI entity memory (Researcher_Writer)"} <= labels


def test_a_long_term_memory_is_deleted_not_edited(storage: Path):
    db = storage / "long_term_memory_storage.db"
    with open_store(storage) as store:
        summary = next(m for m in store.page(limit=50) if m.content.startswith("Write the trip summary"))
        with pytest.raises(UnsupportedError, match="exact task description"):
            Curator(store).edit(summary.id, content="Write a shorter summary")
        Curator(store).delete(summary.id)
    assert ltm_load(db, "Write the trip summary") == []
    with open_store(storage) as store:
        Curator(store).undo()
    [(meta, when, score)] = ltm_load(db, "Write the trip summary")
    assert json.loads(meta)["agent"] == "Writer" and when == "1763625600.25" and score == 6.0


def test_memories_in_each_chroma_directory_are_curated_in_their_own(storage: Path):
    with open_store(storage) as store:
        entity = next(m for m in store.page(limit=50) if m.content.startswith("Ana(Person)"))
        Curator(store).edit(entity.id, content="Ana(Person): the traveller, prefers trains")
    client = chromadb.PersistentClient(path=str(storage / "entities" / "Researcher_Writer"),
                                       settings=Settings(anonymized_telemetry=False))
    assert client.get_collection("entities", embedding_function=None).get(ids=["entities-0"])["documents"] == [
        "Ana(Person): the traveller, prefers trains"]


def test_import_round_trip(storage: Path, tmp_path: Path):
    dest = tmp_path / "ws"
    assert import_store(storage, dest).imported == 4
    assert import_store(storage, dest).imported == 0
    with open_store(dest) as store:
        routes = next(m for m in store.page(limit=50) if m.content.startswith("Research train routes"))
        assert routes.metadata["import"]["format"] == "crewai" and routes.channel == "Researcher"


# -- CrewAI 1.x: LanceDB ------------------------------------------------------------------------


def _lance(folder: Path) -> None:
    lancedb = pytest.importorskip("lancedb")
    db = lancedb.connect(str(folder))
    rows = [
        {"id": "m1", "content": "Ana prefers window seats", "scope": "/crew/travel", "categories_str": '["preferences"]',
         "metadata_str": '{"confidence": 0.9}', "importance": 0.8, "created_at": "2026-11-19T10:00:00",
         "last_accessed": "2026-11-20T10:00:00", "source": "Researcher", "private": False, "vector": [0.1, 0.2, 0.3]},
        {"id": "m2", "content": "The team meets on Mondays", "scope": "/", "categories_str": "[]",
         "metadata_str": "{}", "importance": 0.5, "created_at": "2026-11-18T09:00:00",
         "last_accessed": "2026-11-18T09:00:00", "source": "", "private": False, "vector": [0.3, 0.2, 0.1]},
    ]
    db.create_table("memories", rows)


def write_lance(folder: Path) -> None:
    """CrewAI's table in folder (made), written by the real lancedb even while a test blocks its
    import (sys.modules["lancedb"] = None: as if the crewai extra were not installed)."""
    import sys

    folder.mkdir(parents=True)
    blocked = "lancedb" in sys.modules and sys.modules["lancedb"] is None
    if blocked:
        del sys.modules["lancedb"]
    try:
        _lance(folder)
    finally:
        if blocked:
            sys.modules["lancedb"] = None  # type: ignore[assignment]


def test_lancedb_memories_are_read_and_read_only(tmp_path: Path):
    root = tmp_path / "crew1x"
    (root / "memory").mkdir(parents=True)
    _lance(root / "memory")
    with open_store(root) as store:
        memories = {m.content: m for m in store.page(limit=10)}
        seats = memories["Ana prefers window seats"]
        assert seats.channel == "crew/travel" and seats.tags == ("preferences",)
        assert seats.metadata["importance"] == 0.8 and seats.metadata["confidence"] == 0.9
        assert memories["The team meets on Mondays"].channel == "_global"
        assert [h.memory.content for h in search(store, "Mondays", mode="keyword").hits] == ["The team meets on Mondays"]
        with pytest.raises(ReadOnlyError, match="embedder"):
            Curator(store).delete(seats.id)
    import lancedb

    assert lancedb.connect(str(root / "memory")).open_table("memories").count_rows() == 2
    dest = tmp_path / "ws"
    assert import_store(root, dest).imported == 2
    assert import_store(root, dest).imported == 0


def test_without_lancedb_a_lance_only_store_is_unread_not_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "crew1x"
    (root / "memory").mkdir(parents=True)
    _lance(root / "memory")
    monkeypatch.setitem(__import__("sys").modules, "lancedb", None)  # as if the package were not installed
    with pytest.raises(MissingExtraError) as refused:
        open_store(root)
    assert refused.value.exit_code == 2
    assert str(refused.value).startswith("unread: install mnemoscope[crewai] (CrewAI unified memory (LanceDB) at ")
    assert [(u.package, u.extra) for u in refused.value.unread] == [("lancedb", "crewai")]


def test_without_lancedb_the_table_is_said_unread_beside_what_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = build_crewai_storage(tmp_path)
    (root / "memory").mkdir()
    _lance(root / "memory")
    monkeypatch.setitem(__import__("sys").modules, "lancedb", None)
    with open_store(root) as store:
        assert store.count() == 4  # the long-term rows and the Chroma records; LanceDB's two are not counted
        [unread] = store.unread()
        assert unread.line.startswith("unread: install mnemoscope[crewai] (CrewAI unified memory (LanceDB) at ")
        assert unread.path == str(root / "memory" / "memories.lance")
        assert store.info()["unread"] == [unread.to_dict()]
        assert not any("lancedb" in problem for problem in store.problems())  # said once, as unread
    monkeypatch.delitem(__import__("sys").modules, "lancedb")
    with open_store(root) as store:
        assert store.count() == 6 and store.unread() == [] and store.info()["unread"] == []


def test_long_term_memories_filter_count_and_page_in_sql_as_over_every_row(tmp_path: Path) -> None:
    from datetime import datetime, timezone

    from mnemoscope.storage.query import MemoryQuery
    from mnemoscope.storage.source import matches

    db = tmp_path / "long_term_memory_storage.db"
    con = sqlite3.connect(db)
    con.execute(LTM_DDL)
    rows = [(f"Task {i} on tea routes", {"agent": ["Researcher", "Writer", "", 7][i % 4], "quality": i,
                                         "suggestions": [["cite timetables", "ask Porto"], [], ["one; two"], [3, None]][i % 4]},
             [f"{1763539200 + 3600 * i}.5", f"{(1763539200 + 3600 * i) * 1000}", f"2025-11-19T{i % 24:02d}:30:00"][i % 3], i / 2)
            for i in range(40)]
    con.executemany("INSERT INTO long_term_memories (task_description, metadata, datetime, score) VALUES (?, ?, ?, ?)",
                    [(t, json.dumps(m), d, s) for t, m, d, s in rows])
    con.execute("INSERT INTO long_term_memories (task_description, metadata, datetime, score) VALUES "
                "('A task with broken metadata', 'not json', 'soon', 1)")
    con.commit()
    con.close()
    with open_store(db) as store:
        every = store.page(limit=100)
        assert len(every) == store.count() == 41
        assert every[-1].content == "Task 0 on tea routes\nSuggestions: cite timetables; ask Porto"
        since = datetime(2025, 11, 19, 12, tzinfo=timezone.utc)
        queries = [MemoryQuery(channels=(c,)) for c in ("Researcher", "Writer", "7", "_global")] + [
            MemoryQuery(contains=n) for n in ("porto", "timetables; ask", "suggestions", "none", "one; two", "task 3")
        ] + [MemoryQuery(since=since), MemoryQuery(until=since)]
        for query in queries:
            expected = [m for m in every if matches(m, query)]
            assert expected, query
            # (by id: the row whose time is unreadable is dated at each read, as one with no time is)
            assert [m.id for m in store.page(query, limit=100)] == [m.id for m in expected], query
            assert store.count(query) == len(expected), query
        assert store.counts()["channels"] == {"Researcher": 10, "Writer": 10, "7": 10, "_global": 11}
