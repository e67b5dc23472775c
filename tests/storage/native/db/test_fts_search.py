"""fts_search.py: how a keyword search asks memory.db's FTS5 index (a word asked once where no
longer indexed word begins with it) and the statistics read from the index's own records, on a
real memory.db."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.native.db import fts_search
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.views.search import search

TEXTS = ("order 42 shipped", "order 420 is late", "stripe payments failed", "café opens at nine",
         "the foo_bar flag", "payments retried 42 times")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    for text in TEXTS:
        source.add_memory(text)
    source.close()
    return tmp_path / "memory.db"


def _connect(db: Path) -> contextlib.closing[sqlite3.Connection]:
    return contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True))


def test_a_word_no_longer_word_begins_with_is_asked_whole_only(db: Path) -> None:
    with _connect(db) as con:
        assert fts_search.match_expression(con, "Stripe payments") == '"Stripe" OR "payments"'
        # "420" begins with "42"; "café" and "foo_bar" are not indexed as they are written
        assert fts_search.match_expression(con, "42 café foo_bar") == (
            '"42" OR "42"* OR "café" OR "café"* OR "foo_bar" OR "foo_bar"*')
        assert fts_search.match_expression(con, "  ,; ") == ""


def test_asked_whole_or_as_a_prefix_the_index_finds_the_same_rows(db: Path) -> None:
    with _connect(db) as con:
        for word in ("stripe", "payments", "order", "nine", "missing"):
            both = con.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank",
                               (f'"{word}" OR "{word}"*',)).fetchall()
            asked = con.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank",
                                (fts_search.match_expression(con, word),)).fetchall()
            assert asked == both


def test_a_whole_word_still_ranks_above_a_longer_one(db: Path) -> None:
    with open_store(db.parent, read_only=True) as store:
        hits = search(store, "42", mode="keyword", k=10).hits
        assert [h.memory.content for h in hits][-1] == "order 420 is late"
        assert {h.memory.content for h in hits} == {"order 42 shipped", "payments retried 42 times",
                                                   "order 420 is late"}
        assert [h.memory.content for h in search(store, "café", mode="keyword", k=10).hits] == ["café opens at nine"]
        assert store.count(MemoryQuery()) == len(TEXTS)


def test_the_index_counts_its_rows_as_memories_come_and_go(db: Path) -> None:
    with _connect(db) as con:
        assert fts_search.indexed_rows(con) == len(TEXTS)
        assert fts_search.document_frequencies(con, ["42", "payments", "zzz"]) == (
            len(TEXTS), {"42": 3, "payments": 2, "zzz": 0})
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM memories WHERE content LIKE 'order%'")
        con.executemany("INSERT INTO memories (id, layer, channel, content, created_at, updated_at, last_accessed) "
                        "VALUES (?, 'semantic', '_global', ?, '2026-01-01T00:00:00+00:00', "
                        "'2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')",
                        [(f"bulk-{i}", f"bulk fact {i}") for i in range(300)])
    con.close()
    with _connect(db) as con:
        assert fts_search.indexed_rows(con) == con.execute("SELECT count(*) FROM memories").fetchone()[0] == 304


def test_without_its_averages_record_the_memories_are_counted(db: Path) -> None:
    con = sqlite3.connect(db)
    with con:
        con.execute("DELETE FROM memories_fts_data WHERE id = 1")
    with contextlib.closing(con):
        assert fts_search.indexed_rows(con) == len(TEXTS)


@pytest.mark.parametrize("value", [0, 1, 127, 128, 240, 2287, 67823, 2**32 + 5, 2**56 + 3, 2**63 - 1])
def test_varints_read_as_sqlite_writes_them(value: int) -> None:
    with contextlib.closing(sqlite3.connect(":memory:")) as con:
        con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        if 0 < value < 2**20:  # FTS5's own record, for the counts a store can hold
            con.executemany("INSERT INTO t VALUES ('a')", [()] * value)
            con.commit()
            (block,) = con.execute("SELECT block FROM t_data WHERE id = 1").fetchone()
            assert fts_search._varint(block) == value
    assert fts_search._varint(_encode(value) + b"\x05") == value
    assert fts_search._varint(_encode(value)[:-1]) is None


def _encode(value: int) -> bytes:
    """SQLite's varint encoding (sqlite3PutVarint), written out for the test."""
    if value > 0x00FFFFFFFFFFFFFF:
        out = [value & 0xFF]
        value >>= 8
        for _ in range(8):
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(out))
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))
