"""Google ADK's session database where it lives (issue 27): 200k events (2,000 sessions of 100),
against the SQL a person writes for the same answer.

ADK's own DatabaseSessionService creates the schema and writes the first LIBRARY_SESSIONS sessions
(create_session, append_event); the rest go in with executemany in the very form its
append_event leaves (event_data JSON with the same keys in the same order, the timestamp column
as SQLAlchemy writes a DATETIME), which the builder checks against an event ADK wrote, reading
the last session back through DatabaseSessionService.
Rows: "open + first page" (the newest events) against a new connection's count(*) and newest page;
"count" against SELECT count(*). Contract: each within 2x of its baseline, timed in turns.
"""

from __future__ import annotations

import json
import random
import sqlite3
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from bench.harness import FULL, Row, cached_store, paired_medians_s, record, sizes
from mnemoscope.storage.opening import open_store

pytestmark = pytest.mark.bench

PAGE = 100
EVENTS = 100  # per session
LIBRARY_SESSIONS = 2
DB = "sessions.db"
WORDS = ("tea coffee lisbon porto flight hotel invoice meeting deploy outage budget release dinner "
         "report weather calendar reminder draft summary customer order shipping ticket").split()
FIXED_S = 0.05  # open_store's probing of the folder, the same on any store however small
START = datetime(2025, 9, 1, 8, 0, 0, tzinfo=timezone.utc)


def holds(row: Row) -> None:
    if FULL:
        assert row.holds, row
    else:
        assert row.project_s <= row.limit * row.baseline_s + FIXED_S, row


def texts(rnd: random.Random, n: int) -> list[str]:
    return [" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(6, 14))) for _ in range(n)]


LIBRARY = """
import asyncio
from google.adk.events import Event
from google.adk.sessions import DatabaseSessionService
from google.genai import types
async def main():
    svc = DatabaseSessionService("sqlite+aiosqlite:///" + db)
    for n, lines in enumerate(sessions):
        s = await svc.create_session(app_name="trip", user_id=f"user-{n:04d}", session_id=f"session-{n:05d}",
                                     state={"step": n})
        for i, text in enumerate(lines):
            role = "user" if i % 2 == 0 else "model"
            await svc.append_event(s, Event(author="user" if role == "user" else "planner", invocation_id=f"i{i // 2}",
                                            content=types.Content(role=role, parts=[types.Part(text=text)])))
    await svc.close() if hasattr(svc, "close") else None
asyncio.run(main())
print(json.dumps("ok"))
"""

READ_LAST = """
import asyncio
from google.adk.sessions import DatabaseSessionService
async def main():
    svc = DatabaseSessionService("sqlite+aiosqlite:///" + db)
    s = await svc.get_session(app_name="trip", user_id=user, session_id=session)
    return [e.content.parts[0].text for e in s.events]
print(json.dumps(asyncio.run(main())))
"""


def build_adk(folder: Path, size: int) -> None:
    from helpers.owners import run_owner

    rnd = random.Random(27)
    sessions = size // EVENTS
    db = folder / DB
    run_owner(LIBRARY, db=str(db), sessions=[texts(rnd, EVENTS) for _ in range(min(sessions, LIBRARY_SESSIONS))])
    con = sqlite3.connect(db)
    template = json.loads(con.execute("SELECT event_data FROM events ORDER BY rowid LIMIT 1").fetchone()[0])
    last_texts: list[str] = []
    for n in range(LIBRARY_SESSIONS, sessions):
        session, user = f"session-{n:05d}", f"user-{n:04d}"
        begun = START + timedelta(minutes=9 * n)
        stamp = begun.strftime("%Y-%m-%d %H:%M:%S.%f")
        events = []
        last_texts = texts(rnd, EVENTS)
        for i, text in enumerate(last_texts):
            at = begun + timedelta(seconds=5 * i, microseconds=rnd.randint(0, 999_999))
            role = "user" if i % 2 == 0 else "model"
            event = dict(template)  # ADK's keys, in ADK's order
            event.update(content={"parts": [{"text": text}], "role": role}, invocation_id=f"i{i // 2}",
                         author="user" if role == "user" else "planner", id=str(uuid.UUID(int=rnd.getrandbits(128), version=4)),
                         timestamp=at.timestamp())
            events.append((event["id"], "trip", user, session, event["invocation_id"],
                           at.strftime("%Y-%m-%d %H:%M:%S.%f"), json.dumps(event)))
        con.execute("INSERT INTO sessions VALUES ('trip', ?, ?, ?, ?, ?)", (user, session, json.dumps({"step": n}), stamp,
                                                                            events[-1][5]))
        con.executemany("INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", events)
    con.commit()
    kinds = con.execute("SELECT DISTINCT typeof(timestamp), length(timestamp), typeof(event_data) FROM events").fetchall()
    assert len(kinds) == 1, kinds  # the rows written here have the form ADK's have
    con.close()
    if sessions > LIBRARY_SESSIONS:
        found = run_owner(READ_LAST, db=str(db), user=f"user-{sessions - 1:04d}", session=f"session-{sessions - 1:05d}")
        assert found == last_texts


@pytest.fixture(scope="module", params=sizes(full=[200_000], ci=[20_000]))
def adk_db(request: pytest.FixtureRequest) -> tuple[Path, int]:
    pytest.importorskip("google.adk.sessions")
    pytest.importorskip("aiosqlite")
    size = request.param
    return cached_store("adk", size, 1, build_adk) / DB, size


def sql(db: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)


NEWEST = "SELECT * FROM events ORDER BY timestamp DESC, session_id || '/' || id DESC LIMIT ?"


def test_adk_open_and_first_page(adk_db: tuple[Path, int]) -> None:
    db, size = adk_db

    def project() -> None:
        with open_store(db) as store:
            assert len(store.page(limit=PAGE)) == PAGE

    def baseline() -> None:
        con = sql(db)
        con.execute("SELECT count(*) FROM events").fetchone()
        assert len(con.execute(NEWEST, (PAGE,)).fetchall()) == PAGE
        con.close()

    con = sql(db)
    with open_store(db) as store:  # the same events, in the same order
        ids = [m.id.rsplit("/", 1)[1] for m in store.page(limit=PAGE)]
        assert ids == [row[0] for row in con.execute(NEWEST, (PAGE,))]
    con.close()
    project_s, baseline_s = paired_medians_s(project, baseline, repeat=9, warmup=1)
    row = record(Row("google-adk", f"open + first page of {PAGE}", size, project_s,
                     "new connection, count(*) + newest page", baseline_s, 2.0))
    holds(row)


def test_adk_count(adk_db: tuple[Path, int]) -> None:
    db, size = adk_db
    con = sql(db)
    with open_store(db) as store:
        assert store.count() == size
        project_s, baseline_s = paired_medians_s(
            store.count, lambda: con.execute("SELECT count(*) FROM events").fetchone(), repeat=15)
        row = record(Row("google-adk", "count", size, project_s, "SELECT count(*)", baseline_s, 2.0))
    con.close()
    holds(row)
