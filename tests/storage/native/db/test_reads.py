"""reads.py, NativeReads on a real memory.db. Paging a memory.db deep: seeks (after=) and remembered positions give exactly the rows that
ORDER BY ... LIMIT ... OFFSET gives, in every order, with ties, across writes and sources."""

from __future__ import annotations

import random
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Layer, MemoryQuery, Order, Status, open_store
from mnemoscope.storage.native.db.schema import SCHEMA_VERSION
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.source import matches

N = 2_600
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _fill(root: Path, n: int = N) -> None:
    source = SqliteSource.open(root / "memory.db", create=True)
    source.insert_memory_rows([
        source.memory_row(
            f"fact {i}",
            memory_id=f"m-{(i * 7919) % 100_000:05d}",  # ids not in the order of anything else
            channel=("alpha", "beta")[i % 2],
            created_at=T0 + timedelta(minutes=i // 3),  # ties: three memories a minute
            updated_at=T0 + timedelta(minutes=(i * 31) % 500),
            last_accessed=T0 + timedelta(hours=i % 7),
            salience=(i % 10) / 10,
            status=Status.DELETED if i % 11 == 0 else Status.ACTIVE,
        )
        for i in range(n)
    ])
    source.close()


def _expected(root: Path, query: MemoryQuery) -> list[str]:
    """The ids in the query's order, by plain SQL."""
    column = {Order.RECENT: "updated_at", Order.CREATED: "created_at", Order.SALIENCE: "salience",
              Order.ACCESSED: "last_accessed"}[query.order]
    direction = "DESC" if query.descending else "ASC"
    where = " AND ".join(
        [f"status IN ({','.join(repr(s.value) for s in query.statuses)})"] if query.statuses else ["1"]
    ) + (f" AND channel IN ({','.join(map(repr, query.channels))})" if query.channels else "")
    con = sqlite3.connect(root / "memory.db")
    ids = [r[0] for r in con.execute(f"SELECT id FROM memories WHERE {where} ORDER BY {column} {direction}, id {direction}")]
    con.close()
    return ids


QUERIES = [
    MemoryQuery(),
    MemoryQuery(order=Order.CREATED),
    MemoryQuery(order=Order.SALIENCE, descending=False),
    MemoryQuery(order=Order.ACCESSED, statuses=()),
    MemoryQuery(channels=("beta",), order=Order.CREATED, descending=False),
]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: f"{q.order.value}-{'desc' if q.descending else 'asc'}")
def test_deep_pages_and_seeks_give_the_rows_offset_gives(tmp_path: Path, query: MemoryQuery) -> None:
    _fill(tmp_path)
    expected = _expected(tmp_path, query)
    assert len(expected) > 1_100
    with open_store(tmp_path) as store:
        offsets = [0, 999, 1000, 1001, 1999, 2000, 2050, len(expected) - 7, len(expected), len(expected) + 5]
        offsets += random.Random(7).sample(range(len(expected)), 40)  # jumps back and forth
        for offset in offsets:
            assert [m.id for m in store.page(query, 50, offset)] == expected[offset : offset + 50], offset
        walked: list[str] = []
        page = store.page(query, 97)
        while page:
            walked += [m.id for m in page]
            page = store.page(query, 97, after=page[-1])
        assert walked == expected
        middle = store.page(query, 1, 1034)[0]
        assert [m.id for m in store.page(query, 20, 5, after=middle)] == expected[1040:1060]


def test_remembered_positions_are_forgotten_when_the_file_changes(tmp_path: Path) -> None:
    _fill(tmp_path)
    query = MemoryQuery(order=Order.CREATED)
    with open_store(tmp_path) as store:
        before = [m.id for m in store.page(query, 10, 2000)]
        assert before == _expected(tmp_path, query)[2000:2010]
        con = sqlite3.connect(tmp_path / "memory.db")  # another program adds 5 newer memories
        con.executemany(
            "INSERT INTO memories (id, layer, content, created_at, updated_at, last_accessed) VALUES (?, 'semantic', ?, ?, ?, ?)",
            [(f"new-{i}", f"new {i}", "2027-01-01T00:00:00+00:00", "2027-01-01T00:00:00+00:00",
              "2027-01-01T00:00:00+00:00") for i in range(5)],
        )
        con.commit()
        con.close()
        after = [m.id for m in store.page(query, 10, 2000)]
        assert after == _expected(tmp_path, query)[2000:2010] != before


def test_a_seek_after_a_memory_of_another_source_merges_in_order(tmp_path: Path) -> None:
    """A workspace of memory.db and MEMORY.md: pages walked with after= are the offset pages."""
    _fill(tmp_path, 300)
    (tmp_path / "MEMORY.md").write_text("".join(f"- note {i}\n" for i in range(40)), encoding="utf-8")
    query = MemoryQuery(order=Order.CREATED)
    with open_store(tmp_path) as store:
        total = store.count(query)
        everything = [m.id for m in store.page(query, total)]
        walked: list[str] = []
        page = store.page(query, 33)
        while page:
            walked += [m.id for m in page]
            page = store.page(query, 33, after=page[-1])
    assert walked == everything and len(everything) == total


def test_an_order_column_that_holds_nulls_pages_without_seeking(tmp_path: Path) -> None:
    """A memory.db another program made, whose last_accessed may be NULL: NULLs come last, as in SQL."""
    _fill(tmp_path, 1_200)
    con = sqlite3.connect(tmp_path / "memory.db")
    con.executescript(
        "PRAGMA foreign_keys = OFF; CREATE TABLE m2 AS SELECT * FROM memories; DROP TABLE memories; "
        "ALTER TABLE m2 RENAME TO memories; UPDATE memories SET last_accessed = NULL WHERE rowid % 5 = 0;"
    )
    con.close()
    query = MemoryQuery(order=Order.ACCESSED)
    expected = _expected(tmp_path, query)
    with open_store(tmp_path, read_only=True) as store:
        assert [m.id for m in store.page(query, 30, 1100)] == expected[1100:1130]
        at = store.page(query, 1, 1049)[0]
        assert [m.id for m in store.page(query, 30, after=at)] == expected[1050:1080]


def test_a_version_1_file_gets_the_page_indexes_when_opened_for_writing(tmp_path: Path) -> None:
    _fill(tmp_path, 10)
    con = sqlite3.connect(tmp_path / "memory.db")
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'ix_memories_status_%'").fetchall():
        con.execute(f"DROP INDEX {name}")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    with open_store(tmp_path) as store:
        assert store.count() == 9
    names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'ix_memories_status_%'")}
    assert len(names) == 5
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    plan = " ".join(r[3] for r in con.execute(
        "EXPLAIN QUERY PLAN SELECT * FROM memories WHERE status = 'active' AND (updated_at, id) < ('2026', 'm') "
        "ORDER BY updated_at DESC, id DESC LIMIT 50"))
    assert "ix_memories_status_updated" in plan and "TEMP B-TREE" not in plan
    con.close()


@pytest.mark.parametrize("query", [MemoryQuery(), MemoryQuery(statuses=()), MemoryQuery(channels=("beta",))])
def test_counts_of_several_columns_at_once_are_the_counts_of_each(tmp_path: Path, query: MemoryQuery) -> None:
    _fill(tmp_path, 500)
    (tmp_path / "MEMORY.md").write_text("- a note\n- another note\n", encoding="utf-8")
    columns = ("kind", "channel", "layer", "status")
    with open_store(tmp_path) as store:
        db = store._workspace.db
        assert db.counts_by_columns(columns, query) == {c: db.counts_by(c, query) for c in columns}
        whole = store._workspace.counts_by_columns(columns, query)
        assert whole == {c: store._workspace.counts_by(c, query) for c in columns}
        assert store.counts(query)["total"] == store.count(query)


FILTERS = [
    MemoryQuery(channels=("beta",)),
    MemoryQuery(layers=(Layer.EPISODIC, Layer.CORE), statuses=()),
    MemoryQuery(since=T0 + timedelta(hours=2), until=T0 + timedelta(hours=5)),
    MemoryQuery(contains="100%_off"),
    MemoryQuery(contains="FACT 1", channels=("alpha",), statuses=(Status.DELETED,)),
]


@pytest.mark.parametrize("query", FILTERS, ids=range(len(FILTERS)))
def test_pages_counts_and_searches_apply_one_filter(tmp_path: Path, query: MemoryQuery) -> None:
    """Every read of memory.db renders the query's conditions one way: the rows a page walks,
    the count, the per-channel counts and the keyword hits all agree with matches()."""
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    source.insert_memory_rows([
        source.memory_row(
            f"fact {i}" + (" 100%_off" if i % 13 == 0 else " 100% off"),
            channel=("alpha", "beta")[i % 2],
            layer=(Layer.EPISODIC, Layer.SEMANTIC, Layer.CORE)[i % 3],
            created_at=T0 + timedelta(minutes=7 * i),
            status=Status.DELETED if i % 5 == 0 else Status.ACTIVE,
        )
        for i in range(120)
    ])
    source.close()
    with open_store(tmp_path) as store:
        every = store.page(MemoryQuery(statuses=()), 1000)
        expected = sorted(m.id for m in every if matches(m, query))
        assert 0 < len(expected) < len(every)
        assert sorted(m.id for m in store.page(query, 1000)) == expected
        assert store.count(query) == len(expected)
        counts = store.counts(query)
        assert counts["total"] == sum(counts["channels"].values()) == sum(counts["layers"].values()) == len(expected)
        hits = store._sources[0].keyword_search("fact", query, 1000)
        assert sorted(m.id for m in hits) == expected


def test_the_other_reads_answer_from_sql(tmp_path: Path) -> None:
    """Sessions, turns and their bins, the scratchpad, salience, markdown copies and table counts."""
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    try:
        source.add_session("s1", channel="webshop", started_at=T0)
        source.add_session("s2", started_at=T0 + timedelta(days=1))
        source.add_turns("s1", [("user", f"turn {i}", T0 + timedelta(hours=i * 12)) for i in range(4)])
        source.set_scratch("s1", "retries", 3, updated_at=T0)
        low = source.add_memory("rarely used", salience=0.1, created_at=T0, md_file="MEMORY.md")
        source.add_memory("often used", salience=0.9, created_at=T0, vector_state="stale")
        source.add_memory("gone", salience=0.0, created_at=T0, status=Status.DELETED)
        assert [s.id for s in source.sessions()] == ["s2", "s1"] and [s.id for s in source.sessions(["webshop"])] == ["s1"]
        assert [t.content for t in source.turns("s1", limit=2, offset=1)] == ["turn 1", "turn 2"]
        assert source.turn_bin_counts("%Y-%m-%d", None, None) == {"2026-01-01": 2, "2026-01-02": 2}
        assert source.turn_bin_counts("%Y-%m-%d", T0 + timedelta(days=1), None) == {"2026-01-02": 2}
        assert [(e.session_id, e.key, e.value) for e in source.scratch_entries()] == [("s1", "retries", "3")]
        assert sum(source.salience_histogram(rate=0.99, boost=0.0, at=T0, bins=10)) == 2  # active only
        assert [m.id for m in source.lowest_salience(rate=0.99, boost=0.0, at=T0, limit=1)] == [low]
        assert source.counts_by("status") == {"active": 2, "deleted": 1}
        assert source.bin_counts(MemoryQuery(statuses=()), "%Y", "status") == {("2026", "active"): 2, ("2026", "deleted"): 1}
        assert len(source.stale_vector_ids()) == 1
        assert source.memories_with_markdown_copies() == [("MEMORY.md", "rarely used")]
        assert source.memory_with_markdown_copy("MEMORY.md", "  Rarely\n used ") == low
        assert source.table_counts() == {"sessions": 2, "turns": 4, "scratchpad": 1, "memories": 3, "entities": 0,
                                         "relations": 0, "audit": 0}
    finally:
        source.close()


def test_a_layer_or_status_no_one_knows_counts_and_filters_as_it_reads(tmp_path: Path) -> None:
    """A damaged page or another tool's spelling ("lsemanti", "Bogus"): each row reads as semantic
    and active, and counts, the semantic filter and a markdown export agree with that, where the
    export used to stop on "'lsemanti' is not a valid Layer"."""
    import io

    from mnemoscope.storage.transfer import export_markdown

    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    odd = source.add_memory("a fact on a damaged page", created_at=T0)
    source.add_memory("a plain fact", created_at=T0)
    source.add_memory("what happened", created_at=T0, layer=Layer.EPISODIC)
    source.close()
    with sqlite3.connect(tmp_path / "memory.db") as db:
        db.execute("UPDATE memories SET layer = 'lsemanti', status = 'Bogus' WHERE id = ?", (odd,))
    store = open_store(tmp_path)
    try:
        counts = store.counts()
        assert counts["layers"] == {"semantic": 2, "episodic": 1}
        assert counts["statuses"] == {"active": 3}
        semantic = store.page(MemoryQuery(layers=(Layer.SEMANTIC,), statuses=()), limit=10)
        assert sorted(m.content for m in semantic) == ["a fact on a damaged page", "a plain fact"]
        assert [m.content for m in store.page(MemoryQuery(layers=(Layer.EPISODIC,), statuses=()), limit=10)] == ["what happened"]
        out = io.StringIO()
        assert export_markdown(store, out, MemoryQuery(statuses=())) == 3
        assert "a fact on a damaged page" in out.getvalue()
    finally:
        store.close()
