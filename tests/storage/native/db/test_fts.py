"""fts.py: memory.db's FTS5 index entries read back from the index, written as records, and the
entries that differ from the rows found in SQL, on a real memory.db whose index another program
let drift (its triggers dropped)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemoscope.storage.native.db import fts
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from sqlalchemy import create_engine


def _drift(db: Path, *statements: str) -> None:
    con = sqlite3.connect(db)
    con.executescript("DROP TRIGGER memories_fts_ai; DROP TRIGGER memories_fts_au; " + ";".join(statements))
    con.close()


def _rowid(db: Path, memory_id: str) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute("SELECT rowid FROM memories WHERE id = ?", (memory_id,)).fetchone()[0])
    finally:
        con.close()


def test_record_ids_name_rowids() -> None:
    assert fts.fts_record(42) == "fts:42" and fts.fts_rowid("fts:42") == 42


def test_an_entry_reads_back_as_its_tokens_and_drift_is_found_and_repaired(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    kept = source.add_memory("Dana likes Decaf", tags=("coffee",))
    source.close()
    _drift(db,
           f"UPDATE memories SET content = 'Dana likes tea' WHERE id = '{kept}'",
           "INSERT INTO memories (id, layer, channel, content, created_at, updated_at, last_accessed, tags, "
           "metadata, status, derived_from, vector_state) VALUES ('m-new', 'semantic', '_global', 'Unindexed words', "
           "'2026-01-01', '2026-01-01', '2026-01-01', '[]', '{}', 'active', '[]', 'none')")
    engine = create_engine(f"sqlite:///{db}")
    kept_row, new_row = _rowid(db, kept), _rowid(db, "m-new")
    with engine.begin() as conn:
        assert fts.has_fts(conn)
        assert fts.read_entry(conn, kept_row) == {"rowid": kept_row, "content": "dana likes decaf", "tags": "coffee"}
        assert fts.read_entry(conn, new_row) is None
        assert sorted(fts.differing_entries(conn)) == [(kept_row, kept, "stale-fts"), (new_row, "m-new", "missing-fts")]
        current = fts.read_entry(conn, kept_row)
        assert fts.write_entry(conn, kept_row, current, {"content": "Dana likes tea", "tags": '["coffee"]'}) == {
            "rowid": kept_row, "content": "dana likes tea", "tags": "coffee"}
        fts.write_entry(conn, new_row, None, {"content": "Unindexed words", "tags": "[]"})
        assert list(fts.differing_entries(conn)) == []
    engine.dispose()


def test_a_sqlite_file_without_the_index_has_none(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "other.db").close()
    engine = create_engine(f"sqlite:///{tmp_path / 'other.db'}")
    with engine.connect() as conn:
        assert not fts.has_fts(conn)
    engine.dispose()


def test_the_integrity_check_tells_a_consistent_index_from_a_drifted_one_on_a_read_only_file(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    kept = source.add_memory("Dana likes Decaf", tags=("coffee",))
    source.add_memory("Lee drinks tea")
    source.close()
    read_only = create_engine("sqlite://", creator=lambda: sqlite3.connect(f"file:{db}?mode=ro", uri=True))
    with read_only.connect() as conn:
        assert fts.index_consistent(conn) and list(fts.differing_entries(conn)) == []
    _drift(db, f"UPDATE memories SET content = 'Dana likes tea' WHERE id = '{kept}'")
    with read_only.connect() as conn:
        assert not fts.index_consistent(conn)
        assert list(fts.differing_entries(conn)) == [(_rowid(db, kept), kept, "stale-fts")]
        assert conn.exec_driver_sql("SELECT count(*) FROM temp.sqlite_master WHERE name LIKE 'mnemoscope_fts_copy%'").scalar() == 0
    read_only.dispose()


def test_a_bulk_insert_is_indexed_in_one_statement_and_keeps_the_trigger(tmp_path: Path) -> None:
    from mnemoscope.storage.errors import StoreError
    from mnemoscope.storage.native.db.tables import BULK_FTS_ROWS

    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    source.add_memory("an earlier fact about tea")
    source.insert_memory_rows([source.memory_row(f"bulk fact {i} about coffee", tags=("beans",))
                               for i in range(BULK_FTS_ROWS)])
    clash = [source.memory_row(f"never kept {i} about cocoa") for i in range(BULK_FTS_ROWS)]
    clash[-1]["id"] = clash[0]["id"]  # the batch fails at its last row and is rolled back whole
    try:
        source.insert_memory_rows(clash)
    except StoreError:
        pass
    else:
        raise AssertionError("a batch repeating an id was written")
    source.add_memory("a later fact about coffee")  # the trigger indexes single adds again
    source.close()
    con = sqlite3.connect(db)
    con.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    found = con.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'coffee'").fetchone()[0]
    assert found == BULK_FTS_ROWS + 1
    assert con.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'cocoa'").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'beans'").fetchone()[0] == BULK_FTS_ROWS
    triggers = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")]
    assert triggers == ["memories_fts_ad", "memories_fts_ai", "memories_fts_au"]
    con.close()
