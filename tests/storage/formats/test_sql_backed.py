"""Formats read with SQL where the data lives (storage/formats/sql_backed.py), through a small
format written here as the module says formats are written (a TableSpec, memory_of, text_of): an
agent's log table in a real SQLite file, one JSON item per row, a few rows plain text. Every
count, page, grouping and keyword search is compared with Python over every memory, and no read
writes a byte of the agent's file."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from mnemoscope.storage import Layer, Memory, MemoryQuery, Status
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.formats.base import make_memory
from mnemoscope.storage.formats.sql_backed import SqlFormatSource, TableSpec, row_revision
from mnemoscope.storage.model import GLOBAL_CHANNEL
from mnemoscope.storage.source import count_by, keyword_rank, matches

WORDS = ("table", "invoice", "café", "Lisbon", "tea_time", "50%", "refund")


class LogSource(SqlFormatSource):
    """An agent's log: log(id INTEGER PRIMARY KEY, session, at, item) with item {"text": ...} as
    JSON (non-ASCII escaped, as json.dumps writes it), or plain text in the oldest rows."""

    format = "agent-log"
    label = "agent log"
    id_prefix = "log:"
    layer = Layer.EPISODIC
    odd_rows = "substr(item, 1, 1) != '{'"

    def __init__(self, db: Path) -> None:
        super().__init__(db.parent, [db], db)
        self.spec = TableSpec("log", key="id", channel="session", created="at", text="item")

    def text_of(self, raw: Any) -> str:
        try:
            return str(json.loads(raw)["text"])
        except (TypeError, ValueError, KeyError):
            return "" if raw is None else str(raw)

    def memory_of(self, row: sqlite3.Row) -> Memory:
        return make_memory(self, str(row["id"]), self.text_of(row["item"]), location=str(self.path),
                           created=row["at"], channel=row["session"] or GLOBAL_CHANNEL, layer=self.layer)


def build(path: Path, n: int = 90) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE log (id INTEGER PRIMARY KEY, session TEXT, at TEXT, item TEXT)")
    rows = []
    for i in range(n):
        words = " ".join(WORDS[j] for j in range(len(WORDS)) if (i + 1) % (j + 2) == 0)
        text = f"entry {i}: {words or 'nothing much'}" + (" table table" if i % 11 == 0 else "")
        item = text if i < 5 else json.dumps({"text": text, "role": "user"})  # the first rows: plain text
        session = None if i % 7 == 0 else f"s-{i % 3}"
        rows.append((session, f"2026-{9 + i // 40:02d}-{1 + i % 28:02d} {i % 24:02d}:00:00", item))
    con.executemany("INSERT INTO log (session, at, item) VALUES (?, ?, ?)", rows)
    con.commit()
    con.close()
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return build(tmp_path / "agent.db")


@pytest.fixture
def log(db: Path):
    source = LogSource(db)
    yield source
    source.close()


def every(source: LogSource) -> list[Memory]:
    rows = sqlite3.connect(source.path)
    rows.row_factory = sqlite3.Row
    try:
        return [source.memory_of(r) for r in rows.execute("SELECT * FROM log ORDER BY id")]
    finally:
        rows.close()


QUERIES = [
    MemoryQuery(statuses=()),
    MemoryQuery(channels=("s-1",)),
    MemoryQuery(channels=("s-0", "s-2")),
    MemoryQuery(contains="invoice"),
    MemoryQuery(contains="CAFÉ"),  # escaped in the JSON: found by text_of, not by LIKE
    MemoryQuery(contains="50%"),  # a LIKE wildcard, matched as itself
    MemoryQuery(contains="tea_time"),
    MemoryQuery(since=datetime(2026, 10, 1, tzinfo=timezone.utc), until=datetime(2026, 10, 15, tzinfo=timezone.utc)),
    MemoryQuery(ids=("log:3", "log:40", "log:999", "m-1", "log:x")),
    MemoryQuery(layers=(Layer.SEMANTIC,)),  # the format's memories are all episodic
    MemoryQuery(statuses=(Status.ARCHIVED,)),
]


@pytest.mark.parametrize("query", QUERIES, ids=range(len(QUERIES)))
def test_counts_pages_and_groupings_equal_python_over_every_memory(log: LogSource, query: MemoryQuery) -> None:
    expected = [m for m in every(log) if matches(m, query)]
    assert log.count(query) == len(expected)
    newest_first = sorted(expected, key=lambda m: int(m.id[4:]), reverse=True)
    assert [m.id for m in log.page(query, 1000)] == [m.id for m in newest_first]  # the key's order
    assert [m.id for m in log.page(query, 5, 3)] == [m.id for m in newest_first[3:8]]
    assert log.counts_by("channel", query) == count_by(expected, "channel")
    assert log.counts_by("layer", query) == ({"episodic": len(expected)} if expected else {})


def test_rows_with_no_channel_are_found_by_the_global_filter_that_counts_them(log: LogSource) -> None:
    counted = log.counts_by("channel")[GLOBAL_CHANNEL]
    assert counted == sum(m.channel == GLOBAL_CHANNEL for m in every(log)) == 13
    assert log.count(MemoryQuery(channels=(GLOBAL_CHANNEL,))) == counted


def test_plain_text_rows_are_searched_as_what_a_person_reads(log: LogSource) -> None:
    plain = [m.id for m in every(log)[:5] if "table" in m.content]
    assert plain and set(plain) <= {m.id for m in log.page(MemoryQuery(contains="table"), 1000)}


@pytest.mark.parametrize("text", ["table", "invoice table", "café lisbon", "tea_time", "50% refund", "nothing-here", ""])
@pytest.mark.parametrize("k", [1, 4, 500])
def test_keyword_search_equals_keyword_rank_over_every_memory(log: LogSource, text: str, k: int) -> None:
    query = MemoryQuery(statuses=())
    assert [m.id for m in log.keyword_search(text, query, k)] == [m.id for m in keyword_rank(every(log), text, k)]


def test_document_frequencies_count_the_rows_holding_each_term_and_see_an_agents_write(log: LogSource, db: Path) -> None:
    query = MemoryQuery(channels=("s-1",))
    kept = [m for m in every(log) if matches(m, query)]
    log.keyword_search("invoice café", query, 3)  # the pass BM25's statistics come from
    total, held = log.document_frequencies(["invoice", "Café"], query)
    assert total == len(kept)
    assert held == {"invoice": sum("invoice" in m.content for m in kept), "Café": sum("café" in m.content for m in kept)}
    con = sqlite3.connect(db)
    con.execute("INSERT INTO log (session, at, item) VALUES ('s-1', '2026-11-01 10:00:00', ?)",
                [json.dumps({"text": "the invoice for the café"})])
    con.commit()
    con.close()
    assert log.document_frequencies(["invoice", "Café"], query) == (
        total + 1, {"invoice": held["invoice"] + 1, "Café": held["Café"] + 1})


def test_seeking_after_a_memory_is_the_next_page(log: LogSource) -> None:
    query = MemoryQuery(statuses=())
    whole = log.page(query, 30)
    assert log.page(query, 10, after=whole[9]) == whole[10:20]
    assert log.page(query, 10, 2, after=whole[9]) == whole[12:22]


def test_bins_and_channels_are_counted_in_sql_as_python_counts_them(log: LogSource) -> None:
    query = MemoryQuery(statuses=())
    memories = every(log)
    for bin_format in ("%Y-%m-%d", "%Y-%m", "%G-W%V"):  # the last is not SQLite's: formatted in Python
        expected: dict[tuple[str, str], int] = {}
        for m in memories:
            key = (m.created_at.strftime(bin_format), m.channel)
            expected[key] = expected.get(key, 0) + 1
        assert log.bin_counts(query, bin_format, "channel") == expected
    assert sum(log.bin_counts(query, "%Y-%m", "layer").values()) == len(memories)
    assert {g for _, g in log.bin_counts(query, "%Y-%m", "layer")} == {"episodic"}


def test_a_record_id_names_a_row_or_nothing(log: LogSource) -> None:
    assert log.get("log:12").content == every(log)[11].content
    assert log.get("log:999") is None and log.get("m-12") is None and log.get("log:twelve") is None
    with pytest.raises(UnsupportedError, match="log:twelve is not a agent log record id"):
        log.record_key("log:twelve")


def test_reads_write_no_byte_and_see_the_next_agent_write(log: LogSource, db: Path) -> None:
    def files() -> dict[str, str]:
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in db.parent.iterdir()}

    before = files()
    log.count(MemoryQuery(statuses=()))
    log.page(MemoryQuery(contains="café"), 10)
    log.keyword_search("invoice", MemoryQuery(), 5)
    log.document_frequencies(["invoice"], MemoryQuery())
    assert files() == before  # not a byte, and no -wal or -journal left beside it
    con = sqlite3.connect(db)
    con.execute("UPDATE log SET item = ? WHERE id = 20", [json.dumps({"text": "rewritten by the agent"})])
    con.commit()
    con.close()
    assert log.get("log:20").content == "rewritten by the agent"
    assert log.count(MemoryQuery(contains="rewritten")) == 1


def test_a_file_put_back_over_the_open_one_is_read(log: LogSource, db: Path, tmp_path: Path) -> None:
    assert log.count(MemoryQuery(statuses=())) == 90
    smaller = build(tmp_path / "backup.db", 12)
    smaller.replace(db)  # a backup restored over the open file
    assert log.count(MemoryQuery(statuses=())) == 12


def test_a_rows_revision_changes_with_any_of_its_values(db: Path) -> None:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    row = con.execute("SELECT * FROM log WHERE id = 7").fetchone()
    same = con.execute("SELECT * FROM log WHERE id = 7").fetchone()
    con.execute("UPDATE log SET at = '2026-12-24 00:00:00' WHERE id = 7")
    changed = con.execute("SELECT * FROM log WHERE id = 7").fetchone()
    con.close()
    assert row_revision(row) == row_revision(same) and len(row_revision(row)) == 12
    assert row_revision(changed) != row_revision(row)
