"""OpenAI Agents SDK SQLiteSession stores, written and read back by openai-agents
itself (no model is called: items are added the way a Runner adds them)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from helpers.cli_runs import run
from helpers.owners import require, run_owner
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.views.search import search
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store

require("agents")

ITEMS = [
    {"role": "user", "content": "Book a table for two in Lisbon"},
    {"type": "function_call", "call_id": "c1", "name": "find_restaurant", "arguments": '{"city": "Lisbon"}'},
    {"type": "function_call_output", "call_id": "c1", "output": "Taberna da Rua"},
    {"type": "message", "role": "assistant", "id": "msg_1", "status": "completed",
     "content": [{"type": "output_text", "text": "Booked Taberna da Rua at 8pm.", "annotations": []}]},
]

BUILD = """
import asyncio
from agents import SQLiteSession
async def main():
    default = SQLiteSession("trip-1", db)
    await default.add_items(items)
    custom = SQLiteSession("support-7", db, sessions_table="conv_sessions", messages_table="conv_messages")
    await custom.add_items([{"role": "user", "content": "My invoice is wrong"}])
asyncio.run(main())
print(json.dumps("ok"))
"""

READ = """
import asyncio
from agents import SQLiteSession
print(json.dumps(asyncio.run(SQLiteSession(session, db).get_items())))
"""


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("oai") / "agent_memory.db"
    run_owner(BUILD, db=str(db), items=ITEMS)
    return db


@pytest.fixture
def db(_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "agent_memory.db"
    shutil.copy2(_template, copy)
    return copy


def items_of(db: Path, session: str = "trip-1") -> list[dict]:
    return run_owner(READ, db=str(db), session=session)


def test_detects_both_table_pairs_and_shows_items_as_turns(db):
    with open_store(db) as store:
        formats = store.info()["formats"]
        assert sorted(tuple(f["tables"]) for f in formats) == [
            ("agent_sessions", "agent_messages"), ("conv_sessions", "conv_messages"),
        ]
        assert store.count() == 5
        assert store.counts()["channels"] == {"trip-1": 4, "support-7": 1}
        turns = store.turns("trip-1")
        assert [(t.role, t.kind, t.content) for t in turns] == [
            ("user", "message", "Book a table for two in Lisbon"),
            ("tool", "tool", 'find_restaurant({"city": "Lisbon"})'),
            ("tool", "tool", "find_restaurant → Taberna da Rua"),
            ("assistant", "message", "Booked Taberna da Rua at 8pm."),
        ]
        hits = search(store, "invoice", mode="keyword").hits
        assert [h.memory.channel for h in hits] == ["support-7"]


def test_edit_of_message_text_is_read_back_by_the_sdk(db):
    with open_store(db) as store:
        reply = next(m for m in store.page(limit=10) if m.metadata["role"] == "assistant")
        Curator(store).edit(reply.id, content="Booked Taberna da Rua at 9pm.")
    items = items_of(db)
    assert items[3]["content"][0]["text"] == "Booked Taberna da Rua at 9pm."
    assert items[3]["content"][0]["type"] == "output_text" and items[3]["id"] == "msg_1"
    assert items[:3] == ITEMS[:3]
    with open_store(db) as store:
        Curator(store).undo()
    assert items_of(db) == ITEMS


def test_tool_calls_are_not_edited(db):
    with open_store(db) as store:
        call = next(m for m in store.page(limit=10) if m.metadata["item_type"] == "function_call")
        with pytest.raises(UnsupportedError, match="function_call"):
            Curator(store).edit(call.id, content="something else")
    assert items_of(db) == ITEMS


def test_delete_and_undo_keep_the_conversation_order(db):
    with open_store(db) as store:
        user = next(m for m in store.page(limit=10) if m.content.startswith("Book a table"))
        Curator(store).delete(user.id)
    assert items_of(db) == ITEMS[1:]
    with open_store(db) as store:
        Curator(store).undo()
    assert items_of(db) == ITEMS


def test_import_round_trip(db, tmp_path: Path):
    dest = tmp_path / "ws"
    summary = import_store(db, dest)
    assert summary.imported == 5 and summary.sessions == 2
    assert import_store(db, dest).imported == 0
    with open_store(dest) as store:
        assert store.count() == 5
        # Items came in as memories, so the sessions carry no second copy as turns.
        assert store.turns("trip-1") == []
        memory = next(m for m in store.page(limit=10) if m.content == "My invoice is wrong")
        assert memory.metadata["import"]["format"] == "openai-agents" and memory.channel == "support-7"


# A real Runner run: a scripted model (no network) asks for the tool, the SDK runs it and stores
# the call, its output and the reply in the session exactly as it does with a real model.
RUN = """
import asyncio
from agents import Agent, Runner, SQLiteSession, ToolOutputText, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

class Scripted(Model):
    def __init__(self, outputs):
        self.outputs = list(outputs)
    async def get_response(self, *args, **kwargs):
        return ModelResponse(output=[self.outputs.pop(0)], usage=Usage(), response_id=None)
    def stream_response(self, *args, **kwargs):
        raise NotImplementedError

@function_tool
def weather(city: str) -> str:
    \"\"\"The weather in a city.\"\"\"
    return f"Sunny in {city}, 24C"

@function_tool
def opening_hours(place: str) -> ToolOutputText:
    \"\"\"A place's opening hours (a structured output: input_text parts).\"\"\"
    return ToolOutputText(text=f"{place}: 10:00-18:00")

def call(n, name, args):
    return ResponseFunctionToolCall(type="function_call", call_id=f"call_{n}", name=name, arguments=args,
                                    id=f"fc_{n}", status="completed")

reply = ResponseOutputMessage(type="message", id="msg_1", role="assistant", status="completed",
    content=[ResponseOutputText(type="output_text", text="Sunny, and the museum opens at 10.", annotations=[])])
model = Scripted([call(1, "weather", '{"city": "Porto"}'), call(2, "opening_hours", '{"place": "Serralves"}'), reply])
agent = Agent(name="guide", model=model, tools=[weather, opening_hours])
asyncio.run(Runner.run(agent, "Weather in Porto, and when does Serralves open?", session=SQLiteSession("day-1", db)))
print(json.dumps(asyncio.run(SQLiteSession("day-1", db).get_items())))
"""


def test_a_runner_run_shows_each_tool_call_and_output_as_a_tool_turn(tmp_path: Path):
    db = tmp_path / "agent_memory.db"
    items = run_owner(RUN, db=str(db))
    assert [i.get("type", "message") for i in items] == [
        "message", "function_call", "function_call_output", "function_call", "function_call_output", "message"]
    assert items[4]["output"] == [{"type": "input_text", "text": "Serralves: 10:00-18:00"}]
    with open_store(db) as store:
        turns = store.turns("day-1")
        second_page = store.turns("day-1", limit=2, offset=4)
    assert [(t.kind, t.content) for t in turns] == [
        ("message", "Weather in Porto, and when does Serralves open?"),
        ("tool", 'weather({"city": "Porto"})'),
        ("tool", "weather → Sunny in Porto, 24C"),
        ("tool", 'opening_hours({"place": "Serralves"})'),
        ("tool", "opening_hours → Serralves: 10:00-18:00"),
        ("message", "Sunny, and the museum opens at 10."),
    ]
    # An output whose call is on an earlier page still names its tool.
    assert second_page[0].content == "opening_hours → Serralves: 10:00-18:00" and second_page[0].index == 4


def test_one_item_nested_thousands_deep_costs_that_item_not_the_session(db, capsys):
    deep = '{"a":' * 1500 + "1" + "}" * 1500
    with sqlite3.connect(db) as con:
        con.execute("UPDATE agent_messages SET message_data = ? WHERE id = (SELECT min(id) FROM agent_messages "
                    "WHERE session_id = 'trip-1')", (deep,))
    for argv in (["ls", db, "--limit", "20"], ["sessions", db, "--session", "trip-1"],
                 ["export", db, db.with_suffix(".jsonl"), "--format", "jsonl"]):
        code, _out, err = run(capsys, *argv)
        assert code in (0, 1), (argv, err)  # never a crash (exit 3) for one hostile row
    with open_store(db, read_only=True) as store:
        assert len(store.turns("trip-1")) == len(ITEMS)  # the others read
