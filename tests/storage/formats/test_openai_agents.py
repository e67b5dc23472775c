"""OpenAI Agents SDK SQLiteSession stores, written and read back by openai-agents
itself (no model is called: items are added the way a Runner adds them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

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
        assert [(t.role, t.content) for t in turns] == [
            ("user", "Book a table for two in Lisbon"),
            ("tool", 'find_restaurant({"city": "Lisbon"})'),
            ("tool", "Taberna da Rua"),
            ("assistant", "Booked Taberna da Rua at 8pm."),
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
