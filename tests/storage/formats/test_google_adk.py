"""Google ADK session databases written and read back by google-adk's own
DatabaseSessionService (SQLite through aiosqlite; no model is called)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.owners import require, run_owner
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store
from mnemoscope.storage.views.scratchpad import scratchpad

require("google.adk.sessions")
require("aiosqlite")

BUILD = """
import asyncio
from google.adk.events import Event, EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types
async def main():
    svc = DatabaseSessionService("sqlite+aiosqlite:///" + db)
    s = await svc.create_session(app_name="trip", user_id="dana", session_id="s1",
                                 state={"app:theme": "dark", "user:city": "Lisbon", "step": 1})
    await svc.append_event(s, Event(author="user", invocation_id="i1",
        content=types.Content(role="user", parts=[types.Part(text="Plan three days in Lisbon")])))
    await svc.append_event(s, Event(author="planner", invocation_id="i1",
        content=types.Content(role="model", parts=[types.Part(text="Day 1: Alfama")]),
        actions=EventActions(state_delta={"step": 2})))
    await svc.close() if hasattr(svc, "close") else None
asyncio.run(main())
print(json.dumps("ok"))
"""

READ = """
import asyncio
from google.adk.sessions import DatabaseSessionService
async def main():
    svc = DatabaseSessionService("sqlite+aiosqlite:///" + db)
    s = await svc.get_session(app_name="trip", user_id="dana", session_id="s1")
    return {"state": s.state, "texts": [e.content.parts[0].text for e in s.events]}
print(json.dumps(asyncio.run(main())))
"""


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("adk") / "sessions.db"
    run_owner(BUILD, db=str(db))
    return db


@pytest.fixture
def db(_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "sessions.db"
    shutil.copy2(_template, copy)
    return copy


def owner_view(db: Path) -> dict:
    return run_owner(READ, db=str(db))


def test_events_sessions_and_state(db):
    with open_store(db) as store:
        assert store.info()["formats"][0]["format"] == "google-adk"
        assert store.count() == 2
        assert [(t.role, t.content) for t in store.turns("s1")] == [
            ("user", "Plan three days in Lisbon"), ("assistant", "Day 1: Alfama"),
        ]
        [session] = scratchpad(store)
        assert {e["key"]: e["value"] for e in session["entries"]} == {
            "step": "2", "app:theme": "dark", "user:city": "Lisbon",
        }
        assert session["user_id"] == "dana" and session["channel"] == "trip"


def test_edit_and_delete_are_read_back_by_adk_and_undone(db):
    with open_store(db) as store:
        day1 = next(m for m in store.page(limit=10) if m.content == "Day 1: Alfama")
        Curator(store).edit(day1.id, content="Day 1: Belém")
    assert owner_view(db)["texts"] == ["Plan three days in Lisbon", "Day 1: Belém"]
    with open_store(db) as store:
        first = next(m for m in store.page(limit=10) if m.content.startswith("Plan"))
        Curator(store).delete(first.id)
    view = owner_view(db)
    assert view["texts"] == ["Day 1: Belém"] and view["state"]["step"] == 2
    with open_store(db) as store:
        Curator(store).undo()
        Curator(store).undo()
    assert owner_view(db)["texts"] == ["Plan three days in Lisbon", "Day 1: Alfama"]


def test_import_round_trip(db, tmp_path: Path):
    summary = import_store(db, tmp_path / "ws")
    assert summary.imported == 2 and summary.sessions == 1
    assert import_store(db, tmp_path / "ws").already_present == 2
    with open_store(tmp_path / "ws") as store:
        keys = {e.key for e in store.scratch_entries("s1")}
        assert keys == {"step", "app:theme", "user:city"}


MANY = """
import asyncio
from google.adk.events import Event, EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types
async def main():
    svc = DatabaseSessionService("sqlite+aiosqlite:///" + db)
    for n, app in enumerate(["trip", "shop"]):
        s = await svc.create_session(app_name=app, user_id="dana", session_id=f"s{n}/x", state={"n": n})
        for i in range(6):
            parts = [types.Part(text=f"{app} note {i} about tea")]
            if i == 2:
                parts = [types.Part(function_call=types.FunctionCall(name="find_tea", args={"city": "Porto"}))]
            if i == 3:
                parts = [types.Part(function_response=types.FunctionResponse(name="find_tea", response={"shops": 3}))]
            content = None if i == 4 else types.Content(role="user" if i % 2 else "model", parts=parts)
            await svc.append_event(s, Event(author="user" if i % 2 else "agent", invocation_id=f"i{i}", content=content,
                                            actions=EventActions(state_delta={"seen": i} if i == 4 else {})))
    await svc.close() if hasattr(svc, "close") else None
asyncio.run(main())
print(json.dumps("ok"))
"""


def test_filters_orders_and_pages_in_sql_as_over_every_event(tmp_path: Path) -> None:
    from mnemoscope.storage.query import MemoryQuery, Order
    from mnemoscope.storage.source import matches, sort_key

    db = tmp_path / "many.db"
    run_owner(MANY, db=str(db))
    with open_store(db) as store:
        every = store.page(limit=100)
        assert len(every) == store.count() == 12
        assert {m.content for m in every} >= {'find_tea({"city": "Porto"})', 'find_tea -> {"shops": 3}',
                                              '(state change: {"seen": 4})'}
        for order in (Order.RECENT, Order.CREATED, Order.SALIENCE):
            for descending in (True, False):
                query = MemoryQuery(order=order, descending=descending)
                page = store.page(query, limit=100)
                assert page == sorted(every, key=sort_key(order), reverse=descending)
                walked, after = [], None
                while len(walked) < 12:  # seeking past the last one shown, 5 at a time
                    got = store.page(query, limit=5, after=after)
                    walked += got
                    after = got[-1]
                assert walked == page
        for needle in ("tea", "find_tea -", "state change", "porto", "without", "shop note 5", "city"):
            query = MemoryQuery(contains=needle)
            assert store.page(query, limit=100) == [m for m in every if matches(m, query)], needle
            assert store.count(query) == len([m for m in every if matches(m, query)])
        assert store.count(MemoryQuery(channels=("shop",))) == 6
        assert [t.content for t in store.turns("s1/x")][:2] == ["shop note 0 about tea", "shop note 1 about tea"]
        assert [(s.id, s.turn_count) for s in store.sessions()] == [("s0/x", 6), ("s1/x", 6)]
        one = every[3]
        assert store.get(one.id) == one
