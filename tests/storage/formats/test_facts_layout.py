"""How a five-layer agent laid out its facts DB (storage/formats/facts_layout.py): the one table of
facts with Layer 1's salience, and how its FTS5 index and vec0 table name a fact, read from files
the agent's own SQLite (with sqlite-vec loaded) wrote; none where that is not clear."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.owners import require

require("pysqlite3")
require("sqlite_vec")

from formats.test_facts_db import (  # noqa: E402
    MEMORIES_SCHEMA,
    MEMORIES_TRIGGERS,
    SCHEMA,
    agent_connection,
    build_facts_workspace,
    build_memories_workspace,
)
from mnemoscope.storage.formats.facts_layout import FtsIndex, VecIndex, facts_layout  # noqa: E402


def written(path: Path, script: str) -> Path:
    con = agent_connection(path)
    con.executescript(script)
    con.close()
    return path


def test_the_agent_kept_layout_facts_facts_fts_and_facts_vec(tmp_path: Path) -> None:
    db = build_facts_workspace(tmp_path / "ws") / "facts.db"
    before = db.read_bytes()
    layout = facts_layout(db).layout
    assert layout is not None and db.read_bytes() == before
    assert (layout.table, layout.id, layout.rowid, layout.content) == ("facts", "id", "rowid", "value")
    assert layout.roles == {"key": "key", "category": "category", "access_count": "access_count",
                            "last_accessed": "last_accessed", "created": "created_at", "decay": "decay_score",
                            "confidence": "confidence", "source": "source"}
    # the index the agent keeps itself names a fact by fact_id; the vectors by the fact's text id
    assert layout.fts == FtsIndex("facts_fts", ("fact_id", "key", "value", "category"), "fact_id", "id")
    assert layout.vec == VecIndex("facts_vec", "id", "id", "embedding", 4, (), text_key=True)
    assert not layout.categories  # (categories_vec is the categories' own, not a second vec0 of the facts)


def test_the_external_content_layout_with_a_vec0_table_of_metadata_and_auxiliary_columns(tmp_path: Path) -> None:
    db = build_memories_workspace(tmp_path / "ws") / "memory.sqlite"
    layout = facts_layout(db).layout
    assert layout is not None
    assert (layout.table, layout.id, layout.rowid, layout.content) == ("memories", "id", "id", "content")
    assert layout.roles["last_accessed"] == "last_accessed_at" and layout.roles["decay"] == "decay_score"
    assert layout.fts == FtsIndex("memories_fts", ("content", "category"), "rowid", "id", external=True, by_triggers=True)
    assert layout.vec == VecIndex("memories_vec", "memory_id", "id", "embedding", 4, ("category", "content"))
    # The agent that indexes its rows itself (no triggers)
    bare = written(tmp_path / "bare.sqlite", MEMORIES_SCHEMA)
    found = facts_layout(bare).layout
    assert found is not None and found.fts is not None and not found.fts.by_triggers


def test_a_vec0_table_with_no_declared_key_names_the_fact_by_rowid(tmp_path: Path) -> None:
    db = written(tmp_path / "notes.db", """
        CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, hits INTEGER, importance REAL);
        CREATE VIRTUAL TABLE notes_vec USING vec0(embedding float[8] distance_metric=cosine, chunk_size=8);
    """)
    layout = facts_layout(db).layout
    assert layout is not None and (layout.content, layout.roles["access_count"], layout.roles["decay"]) == (
        "body", "hits", "importance")
    assert layout.fts is None and layout.vec == VecIndex("notes_vec", "rowid", "id", "embedding", 8)


def test_no_layout_where_the_shape_is_not_there_or_not_clear(tmp_path: Path, demo_path: Path) -> None:
    # two tables of facts, each with its indexes: which one is the agent's is not clear
    both = written(tmp_path / "both.sqlite", SCHEMA + MEMORIES_SCHEMA + MEMORIES_TRIGGERS)
    found = facts_layout(both)
    assert found.layout is None and "more than one table looks like facts: " in found.ambiguous
    # two vec0 tables of one table of facts
    twice = written(tmp_path / "twice.sqlite", MEMORIES_SCHEMA.replace("memories_vec", "memories_vec_a")
                    + "CREATE VIRTUAL TABLE memories_vec_b USING vec0(memory_id INTEGER PRIMARY KEY, embedding float[4]);")
    found = facts_layout(twice)
    assert found.layout is None and "memories_vec_a" in found.ambiguous and "memories_vec_b" in found.ambiguous
    # texts with no salience (Layer 1), texts with no index: not facts of this system
    no_salience = written(tmp_path / "plain.sqlite", "CREATE TABLE notes (id INTEGER PRIMARY KEY, content TEXT); "
                          "CREATE VIRTUAL TABLE notes_fts USING fts5(content, content='notes', content_rowid='id');")
    no_index = written(tmp_path / "bare.sqlite", "CREATE TABLE facts (id TEXT PRIMARY KEY, value TEXT, "
                       "access_count INTEGER, decay_score REAL);")
    assert facts_layout(no_salience) == facts_layout(no_index) == facts_layout(tmp_path / "none.db")
    assert facts_layout(no_index).layout is None and not facts_layout(no_index).ambiguous
    assert not (tmp_path / "none.db").exists()
    # Mnemoscope's own memory.db (memories, access_count, salience, an external-content index) is not one
    assert facts_layout(demo_path / "memory.db").layout is None


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_reading_the_layout_writes_no_byte_of_a_read_only_file(tmp_path: Path) -> None:
    folder = build_memories_workspace(tmp_path / "ws")
    copy = tmp_path / "ro"
    shutil.copytree(folder, copy)
    os.chmod(copy / "memory.sqlite", 0o444)
    before = sorted(os.listdir(copy)), (copy / "memory.sqlite").read_bytes()
    assert facts_layout(copy / "memory.sqlite").layout is not None
    assert (sorted(os.listdir(copy)), (copy / "memory.sqlite").read_bytes()) == before
