"""The OpenAI Agents SDK session read with SQL where it lives (storage/formats/sql_backed.py).

The store is laid out in the SDK's exact schema (agents/memory/sqlite_session.py) and filled
with sqlite3, so that it can hold what the SDK would not write by itself (broken JSON, a bare
JSON string, a list as tool output). Every answer the SQL source gives is checked against the
same question answered in Python over every memory (source.py's matches, keyword_rank,
count_by, bin_by), which is how the format was read before.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import ConflictError
from mnemoscope.storage.model import Layer, Status
from mnemoscope.storage.query import MemoryQuery
from mnemoscope.storage.source import bin_by, count_by, keyword_rank, matches
from mnemoscope.storage.opening import open_store

SCHEMA = """
CREATE TABLE IF NOT EXISTS agent_sessions (
    session_id TEXT PRIMARY KEY,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS agent_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    message_data TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (session_id) REFERENCES agent_sessions (session_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS idx_agent_messages_session_id ON agent_messages (session_id, id);
"""

WORDS = "lisbon table invoice refund flight hotel tea_time 100% café Straße".split()


def items(n: int) -> list[object]:
    found: list[object] = []
    for i in range(n):
        words = " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(i % 5 + 1))
        kind = i % 6
        if kind == 0:
            found.append({"role": "user", "content": f"Please {words} {words if i % 4 else ''}".strip()})
        elif kind == 1:
            found.append({"type": "function_call", "call_id": f"c{i}", "name": "lookup",
                          "arguments": json.dumps({"q": words})})
        elif kind == 2:
            found.append({"type": "function_call_output", "call_id": f"c{i}", "output": f"found {words}"})
        elif kind == 3:
            found.append({"type": "message", "role": "assistant", "id": f"msg_{i}", "status": "completed",
                          "content": [{"type": "output_text", "text": f"Done: {words}.", "annotations": []},
                                      {"type": "output_text", "text": "Table TABLE table"}]})
        elif kind == 4:
            found.append({"type": "reasoning", "id": f"rs_{i}", "summary": [{"type": "summary_text", "text": words}]})
        else:
            found.append({"type": "function_call_output", "call_id": f"c{i}",
                          "output": [{"type": "input_text", "text": words, "annotations": None}]})
    # What the SDK would not write, but a damaged or hand-made file may hold.
    found += ["just a string about the invoice", "{broken json about the table", 42]
    return found


def build(path: Path, n: int = 120) -> Path:
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    t0 = datetime(2026, 3, 1, 9, 0, 0)
    rows = []
    for i, item in enumerate(items(n)):
        session = f"s{i % 4}"
        stamp = (t0 + timedelta(hours=7 * (i // 3))).strftime("%Y-%m-%d %H:%M:%S")  # three items a turn
        data = item if isinstance(item, str) and item.startswith("{") else json.dumps(item)
        rows.append((session, data, stamp))
    con.executemany("INSERT OR IGNORE INTO agent_sessions (session_id) VALUES (?)", {(r[0],) for r in rows if r[0] != "s3"})
    con.executemany("INSERT INTO agent_messages (session_id, message_data, created_at) VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build(tmp_path / "agent_memory.db")


def every_memory(source) -> list:
    """Every memory, built row by row: the Python reference the SQL answers must equal."""
    return [source.memory_of(r) for r in source.rows('SELECT * FROM "agent_messages" ORDER BY id')]


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


QUERIES = [
    MemoryQuery(),
    MemoryQuery(statuses=()),
    MemoryQuery(statuses=(Status.DELETED,)),
    MemoryQuery(layers=(Layer.SEMANTIC,)),
    MemoryQuery(layers=(Layer.EPISODIC,), channels=("s1", "s3")),
    MemoryQuery(contains="table"),
    MemoryQuery(contains="TEA_TIME"),
    MemoryQuery(contains="100%"),
    MemoryQuery(contains="café"),
    MemoryQuery(contains="done: "),
    MemoryQuery(contains="lookup({"),
    MemoryQuery(contains="value"),
    MemoryQuery(contains="unread"),
    MemoryQuery(contains="none"),
    MemoryQuery(contains=" "),
    MemoryQuery(since=datetime(2026, 3, 3, tzinfo=timezone.utc), until=datetime(2026, 3, 5, 12, tzinfo=timezone.utc)),
    MemoryQuery(channels=("s2",), contains="invoice", since=datetime(2026, 3, 2, tzinfo=timezone.utc)),
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_counts_pages_and_groupings_equal_python_over_every_memory(db: Path, query: MemoryQuery) -> None:
    with open_store(db) as store:
        (source,) = store._sources
        expected = [m for m in every_memory(source) if matches(m, query) and query.wants_kind(m.source.kind)]
        assert source.count(query) == len(expected)
        newest_first = sorted(expected, key=lambda m: -int(m.id.rsplit(":", 1)[1]))
        assert [m.id for m in source.page(query, 1000)] == [m.id for m in newest_first]
        assert source.page(query, 7, 3) == newest_first[3:10]
        for column in ("channel", "layer", "status", "kind"):
            assert source.counts_by(column, query) == count_by(expected, column)
        for fmt in ("%Y-%m-%d", "%Y-W%W", "%Y-%m", "%G-%V"):  # the last one SQLite cannot format
            for group in ("kind", "layer", "channel"):
                assert source.bin_counts(query, fmt, group) == bin_by(expected, fmt, group)


@pytest.mark.parametrize(
    "text", ["table", "TABLE invoice", "tea_time", "café", "strasse", "straße lisbon", "value", "type", "raw", "none", "42", "c1", "!!"]
)
@pytest.mark.parametrize("k", [1, 3, 10, 500])
def test_keyword_search_equals_keyword_rank_over_every_memory(db: Path, text: str, k: int) -> None:
    with open_store(db) as store:
        (source,) = store._sources
        for query in (MemoryQuery(), MemoryQuery(channels=("s0", "s2"))):
            expected = keyword_rank([m for m in every_memory(source) if matches(m, query)], text, k)
            assert [m.id for m in source.keyword_search(text, query, k)] == [m.id for m in expected]


@pytest.mark.parametrize("terms", [["table"], ["invoice", "table"], ["tea_time", "café"], ["strasse", "lisbon"],
                                   ["value", "type", "raw", "none"], ["42", "c1", "zeppelin"]])
def test_document_frequencies_equal_python_over_every_memory(db: Path, terms: list[str]) -> None:
    """BM25's statistics: the memories a query keeps, and how many of them show each term, the
    same whether the keyword search just counted them or they are counted afresh."""
    with open_store(db) as store:
        (source,) = store._sources
        for query in (MemoryQuery(), MemoryQuery(channels=("s0", "s2")), MemoryQuery(statuses=(Status.DELETED,))):
            kept = [m for m in every_memory(source) if matches(m, query)]
            expected = (len(kept), {t: sum(t in m.content.lower() for m in kept) for t in terms})
            assert source.document_frequencies(terms, query) == expected
            source.keyword_search(" ".join(terms), query, 3)
            assert source.document_frequencies(terms, query) == expected


def test_document_frequencies_come_from_the_search_that_just_read_the_rows(db: Path) -> None:
    with open_store(db) as store:
        (source,) = store._sources
        read = []
        text_of = source.text_of
        source.text_of = lambda raw: read.append(raw) or text_of(raw)
        source.keyword_search("table invoice", MemoryQuery(), 3)
        assert read
        read.clear()
        held = source.document_frequencies(["table", "invoice"], MemoryQuery())
        assert read == [] and held[1]["table"] > 0


def test_a_write_during_the_count_leaves_counts_of_the_file(db: Path) -> None:
    """An agent commits while the words are counted: BM25 gets the counts of the file before or
    after that write, never zeros."""
    with closing(sqlite3.connect(db)) as con:
        con.execute("PRAGMA journal_mode = WAL")
    with open_store(db) as store:
        (source,) = store._sources
        kept = [m for m in every_memory(source) if matches(m, MemoryQuery())]
        before = (len(kept), sum("table" in m.content.lower() for m in kept))
        text_of = source.text_of
        written = []

        def agent_writes_once(raw: object) -> str:
            if not written:
                with closing(sqlite3.connect(db)) as agent:
                    agent.execute("INSERT INTO agent_messages (session_id, message_data) VALUES ('s0', ?)",
                                  (json.dumps({"role": "user", "content": "table for two"}),))
                    agent.commit()
                written.append(True)
            return text_of(raw)

        source.text_of = agent_writes_once
        total, held = source.document_frequencies(["table"], MemoryQuery())
        assert written and total in (before[0], before[0] + 1) and held["table"] in (before[1], before[1] + 1)
        assert before[1] > 0


def test_document_frequencies_after_the_source_reconnects_are_counted_again(db: Path) -> None:
    """A new connection counts data_version from the start again: the counts the search kept on
    the old one are forgotten with it."""
    with open_store(db) as store:
        (source,) = store._sources
        source.keyword_search("lisbon", MemoryQuery(), 1)
        total, held = source.document_frequencies(["lisbon"], MemoryQuery())
        source.close()
        with closing(sqlite3.connect(db)) as agent:
            agent.execute("INSERT INTO agent_messages (session_id, message_data) VALUES ('s0', ?)",
                          (json.dumps({"role": "user", "content": "Lisbon again"}),))
            agent.commit()
        assert source.document_frequencies(["lisbon"], MemoryQuery()) == (total + 1, {"lisbon": held["lisbon"] + 1})


def test_document_frequencies_see_an_agents_write_after_the_search(db: Path) -> None:
    with open_store(db) as store:
        (source,) = store._sources
        query = MemoryQuery()
        assert [m.content for m in source.keyword_search("lisbon", query, 1)] != []
        before = source.document_frequencies(["lisbon"], query)
        con = sqlite3.connect(db)
        con.execute("INSERT INTO agent_messages (session_id, message_data) VALUES ('s0', ?)",
                    (json.dumps({"role": "user", "content": "Lisbon again"}),))
        con.commit()
        con.close()
        assert source.document_frequencies(["lisbon"], query) == (before[0] + 1, {"lisbon": before[1]["lisbon"] + 1})


def test_seek_after_a_memory_is_the_next_page(db: Path) -> None:
    with open_store(db) as store:
        whole = store.page(limit=1000)
        assert store.page(limit=10, after=whole[9]) == whole[10:20]
        assert store.page(limit=10, offset=5, after=whole[9]) == whole[15:25]
        oldest_first = store.page(MemoryQuery(descending=False), limit=1000)
        assert oldest_first == whole[::-1]
        assert store.page(MemoryQuery(descending=False), limit=5, after=oldest_first[4]) == oldest_first[5:10]


def test_sessions_turns_and_problems_in_sql(db: Path) -> None:
    with open_store(db) as store:
        (source,) = store._sources
        memories = every_memory(source)
        sessions = {s.id: s for s in store.sessions()}
        assert {sid: s.turn_count for sid, s in sessions.items()} == {
            sid: sum(1 for m in memories if m.channel == sid) for sid in ("s0", "s1", "s2", "s3")
        }
        assert sessions["s3"].started_at == min(m.created_at for m in memories if m.channel == "s3")
        turns = store.turns("s1", limit=4, offset=2)
        in_s1 = [m for m in memories if m.channel == "s1"]
        # a tool's output is the output as a memory, and "tool → output" as a turn of the conversation
        assert [(t.index, t.content, t.timestamp) for t in turns] == [
            (i + 2, m.content if m.metadata["item_type"] != "function_call_output" else f"function → {m.content}",
             m.created_at)
            for i, m in enumerate(in_s1[2:6])
        ]
        assert any(m.content == "Straße lisbon table" for m in in_s1)  # a structured output read as its text
        assert store.problems() == ["OpenAI Agents SDK session: messages of session s3 have no row in agent_sessions"]
        assert [s.id for s in store.sessions(("s2",))] == ["s2"]


def test_reads_write_no_byte_and_leave_no_file(db: Path) -> None:
    before = digest(db.parent)
    with open_store(db) as store:
        store.page(limit=50)
        store.count(MemoryQuery(contains="table"))
        store.counts()
        store.info()
        store.sessions()
        store.turns("s0")
        store._sources[0].keyword_search("invoice", MemoryQuery(), 5)
        store._sources[0].bin_counts(MemoryQuery(), "%Y-%m-%d", "channel")
        memory = store.page(limit=1)[0]
        assert store.get(memory.id) == memory
    assert digest(db.parent) == before


def test_an_agents_write_is_seen_by_the_next_read(db: Path) -> None:
    with open_store(db) as store:
        total = store.count()
        con = sqlite3.connect(db)
        con.execute(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('s0', ?)",
            (json.dumps({"role": "user", "content": "one more thing about the zeppelin"}),),
        )
        con.commit()
        con.close()
        assert store.count() == total + 1
        assert store.page(limit=1)[0].content == "one more thing about the zeppelin"
        assert [m.content for m in store._sources[0].keyword_search("zeppelin", MemoryQuery(), 5)] == [
            "one more thing about the zeppelin"
        ]


def change_behind_our_back(db: Path, row_id: int, text: str) -> None:
    con = sqlite3.connect(db)
    con.execute("UPDATE agent_messages SET message_data = ? WHERE id = ?", (json.dumps({"role": "user", "content": text}), row_id))
    con.commit()
    con.close()


def test_a_record_changed_since_it_was_shown_is_not_overwritten(db: Path) -> None:
    with open_store(db) as store:
        shown = next(m for m in store.page(limit=100) if m.metadata["role"] == "user")
        assert shown.revision and store.get(shown.id).revision == shown.revision
        change_behind_our_back(db, int(shown.id.rsplit(":", 1)[1]), "the agent's own words")
        assert store.get(shown.id).revision != shown.revision
        with pytest.raises(ConflictError):
            Curator(store).edit(shown.id, content="mine", expected_revision=shown.revision)
        assert store.get(shown.id).content == "the agent's own words"


def test_undo_refuses_when_the_agent_changed_the_record_since(db: Path) -> None:
    with open_store(db) as store:
        shown = next(m for m in store.page(limit=100) if m.metadata["role"] == "user")
        Curator(store).edit(shown.id, content="mine", expected_revision=shown.revision)
        assert store.get(shown.id).content == "mine"
        row_id = int(shown.id.rsplit(":", 1)[1])
        change_behind_our_back(db, row_id, "the agent's later words")
        with pytest.raises(ConflictError):
            Curator(store).undo()
        assert store.get(shown.id).content == "the agent's later words"


def test_delete_then_undo_puts_the_row_back_under_its_id(db: Path) -> None:
    with open_store(db) as store:
        shown = store.page(limit=5)[2]
        Curator(store).delete(shown.id)
        assert store.find(shown.id) is None and shown.id not in [m.id for m in store.page(limit=1000)]
        Curator(store).undo()
        assert store.get(shown.id) == shown
        assert store.page(limit=5)[2] == shown


def test_a_file_put_back_over_the_open_one_is_read(db: Path, tmp_path: Path) -> None:
    other = build(tmp_path / "other.db", n=30)
    with open_store(db) as store:
        assert store.count() == 123
        other.replace(db)  # a backup restored over it: another file under the same name
        assert store.count() == 33
        assert len(store.page(limit=1000)) == 33
