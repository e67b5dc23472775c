"""CrewAI's long-term memory where it lives (issue 27): 200k rows of ``long_term_memories``,
against the SQL a person writes for the same answer.

CrewAI cannot be installed beside the test extra (see tests/storage/formats/test_crewai.py), so
the table is written with crewai 0.x LTMSQLiteStorage's own DDL and INSERT (task description,
metadata JSON with agent, quality and suggestions, epoch text, score), as its save() does.
Rows: "open + first page" (the newest) against a new connection's count(*) and newest page by id;
"count" against SELECT count(*). Contract: each within 2x of its baseline, timed in turns.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from bench.harness import FULL, Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage.opening import open_store

pytestmark = pytest.mark.bench

PAGE = 100
DB = "long_term_memory_storage.db"
AGENTS = ("Researcher", "Writer", "Planner", "Reviewer")
WORDS = ("tea coffee lisbon porto flight hotel invoice meeting deploy outage budget release dinner "
         "report weather calendar reminder draft summary customer order shipping ticket").split()
FIXED_S = 0.05  # open_store's probing of the folder, the same on any store however small
# crewai 0.x src/crewai/memory/storage/ltm_sqlite_storage.py: _initialize_db and save.
LTM_DDL = """CREATE TABLE IF NOT EXISTS long_term_memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT, task_description TEXT, metadata TEXT, datetime TEXT, score REAL)"""
LTM_SAVE = "INSERT INTO long_term_memories (task_description, metadata, datetime, score) VALUES (?, ?, ?, ?)"


def holds(row: Row) -> None:
    if FULL:
        assert row.holds, row
    else:
        assert row.project_s <= row.limit * row.baseline_s + FIXED_S, row


def build_crewai(folder: Path, size: int) -> None:
    rnd = random.Random(27)

    def words(n: int) -> str:
        return " ".join(rnd.choice(WORDS) for _ in range(n))

    con = sqlite3.connect(folder / DB)
    con.execute(LTM_DDL)
    con.executemany(LTM_SAVE, (
        (f"Task {i}: {words(rnd.randint(6, 14))}",
         json.dumps({"agent": AGENTS[i % 4], "expected_output": words(5), "quality": rnd.randint(1, 10),
                     "suggestions": [words(4) for _ in range(rnd.randint(0, 3))]}),
         str(1_756_713_600 + 37 * i + rnd.random()), float(rnd.randint(1, 10)))
        for i in range(size)
    ))
    con.commit()
    con.close()


@pytest.fixture(scope="module", params=sizes(full=[200_000], ci=[20_000]))
def crewai_db(request: pytest.FixtureRequest) -> tuple[Path, int]:
    size = request.param
    return cached_store("crewai-ltm", size, 1, build_crewai) / DB, size


def sql(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


NEWEST = "SELECT * FROM long_term_memories ORDER BY id DESC LIMIT ?"


def test_crewai_open_and_first_page(crewai_db: tuple[Path, int]) -> None:
    db, size = crewai_db

    def project() -> None:
        with open_store(db) as store:
            assert len(store.page(limit=PAGE)) == PAGE

    def baseline() -> None:
        con = sql(db)
        con.execute("SELECT count(*) FROM long_term_memories").fetchone()
        assert len(con.execute(NEWEST, (PAGE,)).fetchall()) == PAGE
        con.close()

    con = sql(db)
    with open_store(db) as store:  # the same rows, in the same order
        tasks = [m.metadata["task_description"] for m in store.page(limit=PAGE)]
        assert tasks == [row[1] for row in con.execute(NEWEST, (PAGE,))]
    con.close()
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=9, warmup=1)
    row = record(Row("crewai-ltm", f"open + first page of {PAGE}", size, project_s,
                     "new connection, count(*) + newest page", baseline_s, 2.0))
    holds(row)


def test_crewai_count(crewai_db: tuple[Path, int]) -> None:
    db, size = crewai_db
    con = sql(db)
    with open_store(db) as store:
        assert store.count() == size
        project_s, baseline_s = paired_medians_s(
            store.count, lambda: con.execute("SELECT count(*) FROM long_term_memories").fetchone(), repeat=15)
        row = record(Row("crewai-ltm", "count", size, project_s, "SELECT count(*)", baseline_s, 2.0))
    con.close()
    holds(row)
