"""LangGraph: SqliteStore items (with real sqlite-vec vectors) and SqliteSaver threads,
written and read back by langgraph-checkpoint-sqlite itself.

This machine's Python cannot load SQLite extensions, so the owner process hands
LangGraph a pysqlite3 connection (which can) to write and search vectors;
Mnemoscope reads the same file with the standard sqlite3 module.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from helpers.owners import require, run_owner
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.query import MemoryQuery, Order
from mnemoscope.storage.transfer import import_store
from mnemoscope.storage.views.scratchpad import scratchpad
from mnemoscope.storage.views.search import search

require("langgraph.store.sqlite")
require("pysqlite3")

SETUP = """
import pysqlite3.dbapi2 as sqlite3
from langgraph.store.sqlite import SqliteStore
from mnemoscope.storage.embedders.base import HashingEmbedder
_emb = HashingEmbedder()
def open_lg(root):
    con = sqlite3.connect(root + "/store.workspace.db", check_same_thread=False, isolation_level=None)
    store = SqliteStore(con, index={"dims": len(_emb.embed(["x"])[0]), "embed": lambda t: _emb.embed(list(t)), "fields": ["text"]})
    store.setup()
    return store
"""

BUILD = SETUP + """
import sqlite3 as std_sqlite3
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.base import empty_checkpoint
from langchain_core.messages import AIMessage, HumanMessage
store = open_lg(root)
store.put(("memories", "dana"), "tea", {"text": "Dana likes tea", "kind": "preference"})
store.put(("memories", "dana"), "city", {"text": "Dana lives in Lisbon"})
store.put(("prefs",), "theme", {"mode": "dark"}, index=False)
saver = SqliteSaver(std_sqlite3.connect(root + "/checkpoints.sqlite", check_same_thread=False))
config = {"configurable": {"thread_id": "thread-1", "checkpoint_ns": ""}}
for step, messages in enumerate([[HumanMessage("plan the trip")], [HumanMessage("plan the trip"), AIMessage("Lisbon in May?")]]):
    cp = empty_checkpoint()
    cp["channel_values"] = {"messages": messages, "todo": {"open": ["book flights"]}}
    cp["channel_versions"] = {"messages": step + 1, "todo": 1}
    config = saver.put(config, cp, {"source": "loop", "step": step}, {"messages": step + 1})
print(json.dumps("ok"))
"""

READ = SETUP + """
store = open_lg(root)
item = store.get(tuple(ns), key)
hits = store.search(("memories", "dana"), query=query, limit=5)
vectors = store.conn.execute("SELECT count(*) FROM store_vectors WHERE key = ?", (key,)).fetchone()[0]
print(json.dumps({"value": item.value if item else None, "hits": [[h.key, h.score] for h in hits], "vectors": vectors}))
"""


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("langgraph") / "agent"
    root.mkdir()
    run_owner(BUILD, root=str(root))
    return root


@pytest.fixture
def lg_root(_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "agent"
    shutil.copytree(_template, copy)
    return copy


def owner_view(root: Path, ns: list[str], key: str, query: str) -> dict:
    return run_owner(READ, root=str(root), ns=ns, key=key, query=query)


def test_detects_both_files_and_reads_items_and_threads(lg_root):
    with open_store(lg_root) as store:
        assert sorted(f["format"] for f in store.info()["formats"]) == ["langgraph", "langgraph"]
        assert store.count() == 3
        assert store.counts()["channels"] == {"memories.dana": 2, "prefs": 1}
        tea = store.get("lg:store.workspace.db:memories.dana/tea")
        assert tea.content == "Dana likes tea"
        assert tea.metadata["kind"] == "preference" and tea.metadata["indexed_fields"]
        theme = store.get("lg:store.workspace.db:prefs/theme")
        assert theme.content == '{"mode": "dark"}'
        [thread] = store.sessions()
        assert thread.id == "thread-1" and thread.turn_count == 2
        assert [(t.role, t.content) for t in store.turns("thread-1")] == [
            ("user", "plan the trip"), ("assistant", "Lisbon in May?"),
        ]
        [session] = scratchpad(store)
        assert [(e["key"], e["json"]) for e in session["entries"]] == [("todo", {"open": ["book flights"]})]
    with open_store(lg_root / "checkpoints.sqlite") as store:
        assert store.count() == 0 and len(store.sessions()) == 1


def test_edit_is_read_back_by_langgraph_and_undo_restores_vectors(lg_root):
    before = owner_view(lg_root, ["memories", "dana"], "tea", "tea")
    assert before["vectors"] == 1 and before["hits"][0][0] == "tea"
    with open_store(lg_root) as store:
        Curator(store).edit("lg:store.workspace.db:memories.dana/tea", content="Dana likes green tea")
    after = owner_view(lg_root, ["memories", "dana"], "tea", "tea")
    assert after["value"] == {"text": "Dana likes green tea", "kind": "preference"}
    assert after["vectors"] == 0  # its stale vector is gone; LangGraph re-embeds on its next put
    with open_store(lg_root) as store:
        Curator(store).undo()
    undone = owner_view(lg_root, ["memories", "dana"], "tea", "tea")
    assert undone["value"] == {"text": "Dana likes tea", "kind": "preference"}
    assert undone["vectors"] == 1 and undone["hits"][0] == before["hits"][0]


def test_delete_removes_the_vectors_too_and_undo_brings_both_back(lg_root):
    with open_store(lg_root) as store:
        Curator(store).delete("lg:store.workspace.db:memories.dana/city")
        assert store.count() == 2
    gone = owner_view(lg_root, ["memories", "dana"], "city", "Lisbon")
    assert gone["value"] is None and gone["vectors"] == 0
    assert "city" not in [h[0] for h in gone["hits"]]
    with open_store(lg_root) as store:
        Curator(store).undo()
    back = owner_view(lg_root, ["memories", "dana"], "city", "Lisbon")
    assert back["value"] == {"text": "Dana lives in Lisbon"} and back["vectors"] == 1


def test_a_write_by_langgraph_between_read_and_edit_is_not_overwritten(lg_root):
    from mnemoscope.storage.errors import ConflictError

    with open_store(lg_root) as store:
        tea = store.get("lg:store.workspace.db:memories.dana/tea")
        con = sqlite3.connect(lg_root / "store.workspace.db")
        con.execute("UPDATE store SET value = '{\"text\": \"agent wrote this\"}' WHERE key = 'tea'")
        con.commit()
        con.close()
        with pytest.raises(ConflictError):
            Curator(store).edit(tea.id, content="mine", expected_revision=tea.revision)
    assert owner_view(lg_root, ["memories", "dana"], "tea", "x")["value"] == {"text": "agent wrote this"}


def test_import_round_trip(lg_root, tmp_path: Path):
    dest = tmp_path / "ws"
    first = import_store(lg_root, dest)
    assert first.imported == 3 and first.sessions == 1
    assert import_store(lg_root, dest).already_present == 3
    with open_store(dest) as store:
        contents = {m.content: m for m in store.page(limit=10)}
        assert contents["Dana likes tea"].channel == "memories.dana"
        assert contents["Dana likes tea"].metadata["import"]["format"] == "langgraph"
        assert contents["Dana likes tea"].id.startswith("m-")  # a native id; the original is kept as provenance
        assert contents["Dana likes tea"].metadata["import"]["original_id"] == "lg:store.workspace.db:memories.dana/tea"
        assert [t.content for t in store.turns("thread-1")] == ["plan the trip", "Lisbon in May?"]


TOOL_THREAD = """
import sqlite3 as std_sqlite3
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.base import empty_checkpoint
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
saver = SqliteSaver(std_sqlite3.connect(root + "/checkpoints.sqlite", check_same_thread=False))
config = {"configurable": {"thread_id": "thread-tools", "checkpoint_ns": ""}}
call = AIMessage("", tool_calls=[{"name": "find_hotels", "args": {"city": "Lisbon"}, "id": "call-1"}])
cp = empty_checkpoint()
cp["channel_values"] = {"messages": [HumanMessage("find me a hotel"), call]}
cp["channel_versions"] = {"messages": 1}
config = saver.put(config, cp, {"source": "loop", "step": 1}, {"messages": 1})
# The tool ran and wrote its answer, then the run stopped before the next checkpoint.
saver.put_writes(config, [("messages", [ToolMessage("3 hotels near the river", tool_call_id="call-1", name="find_hotels")])], "task-1")
saver.put_writes(config, [("__interrupt__", "approve the booking?")], "task-2")
print(json.dumps("ok"))
"""


def test_tool_calls_and_the_writes_no_checkpoint_holds_yet_are_turns(lg_root):
    run_owner(TOOL_THREAD, root=str(lg_root))
    with open_store(lg_root / "checkpoints.sqlite") as store:
        turns = store.turns("thread-tools")
        assert [(t.role, t.content, t.kind) for t in turns] == [
            ("user", "find me a hotel", "message"),
            ("assistant", 'find_hotels({"city": "Lisbon"})', "message"),
            ("tool", "3 hotels near the river", "pending"),
            ("interrupt", "approve the booking?", "pending"),
        ]
        assert {s.id: s.turn_count for s in store.sessions()}["thread-tools"] == 4
        assert [t.kind for t in store.turns("thread-1")] == ["message", "message"]  # no writes pending there


TWO_STORES = """
import sqlite3
from langgraph.store.sqlite import SqliteStore
def put(name, items):
    store = SqliteStore(sqlite3.connect(root + "/" + name, check_same_thread=False, isolation_level=None))
    store.setup()
    for ns, key, value in items:
        store.put(tuple(ns), key, value)
put("home.db", [(["memories", "dana"], "tea", {"text": "Dana likes tea"}),
                (["memories", "dana"], "city", {"text": "Dana lives in Lisbon"})])
put("work.db", [(["memories", "dana"], "tea", {"text": "Dana drinks green tea at work"})])
print(json.dumps("ok"))
"""


def test_two_store_files_in_one_folder_name_their_file_and_a_copy_is_listed_once(tmp_path: Path):
    root = tmp_path / "graphs"
    root.mkdir()
    run_owner(TWO_STORES, root=str(root))
    shutil.copy2(root / "home.db", root / "home.backup.db")  # a copy: the same items
    (root / "latest.db").symlink_to("home.db")  # another name of the same file
    with open_store(root) as store:
        memories = {m.id: m for m in store.page(limit=20)}
        problems = {f["files"][0].rsplit("/", 1)[-1]: f["problems"] for f in store.info()["formats"]}
    assert sorted(memories) == [
        "lg:home.db:memories.dana/city", "lg:home.db:memories.dana/tea", "lg:work.db:memories.dana/tea"]
    home_tea, work_tea = memories["lg:home.db:memories.dana/tea"], memories["lg:work.db:memories.dana/tea"]
    assert (home_tea.content, work_tea.content) == ("Dana likes tea", "Dana drinks green tea at work")
    assert home_tea.metadata["store_file"] == "home.db" and work_tea.metadata["store_file"] == "work.db"
    assert home_tea.source.path == "home.db" and work_tea.source.location.startswith("work.db:")
    assert home_tea.metadata["also_in"] == ["home.backup.db"] and "also_in" not in work_tea.metadata
    assert sorted(problems) == ["home.backup.db", "home.db", "work.db"]  # the link is not a store of its own
    assert problems["home.backup.db"] == [
        "2 items of home.backup.db are the same (namespace, key, value, update time) as in home.db, a copy: "
        "listed once, under home.db (an edit there changes home.db only)"]
    assert problems["home.db"] == ["latest.db is another name of home.db (the same file): its items are listed once"]
    # Once the two files no longer agree on an item, each file's version is listed.
    with open_store(root) as store:
        Curator(store).edit("lg:home.db:memories.dana/tea", content="Dana gave up tea")
        contents = sorted((m.id, m.content) for m in store.page(limit=20) if m.metadata["key"] == "tea")
    assert contents == [
        ("lg:home.backup.db:memories.dana/tea", "Dana likes tea"),
        ("lg:home.db:memories.dana/tea", "Dana gave up tea"),
        ("lg:work.db:memories.dana/tea", "Dana drinks green tea at work"),
    ]


def test_pages_filters_and_search_answer_as_the_items_read(lg_root):
    """Items are read with SQL on the file: the order, filters and keyword ranking are what a
    person reads of the items, as when every item was loaded."""
    con = sqlite3.connect(lg_root / "store.workspace.db")
    con.execute("UPDATE store SET updated_at = '2030-01-01 00:00:00' WHERE key = 'theme'")
    con.commit()
    con.close()
    with open_store(lg_root) as store:
        newest = store.page(limit=10)
        assert newest[0].metadata["key"] == "theme" and len(newest) == 3
        assert [m.id for m in store.page(MemoryQuery(descending=False), limit=10)] == [m.id for m in reversed(newest)]
        for order in Order:  # a page after a memory (the table scrolling on) continues the order
            for descending in (True, False):
                query = MemoryQuery(order=order, descending=descending)
                whole = store.page(query, limit=10)
                stepped = [whole[0]]
                while len(step := store.page(query, limit=1, after=stepped[-1])) == 1:
                    stepped += step
                assert [m.id for m in stepped] == [m.id for m in whole], (order, descending)
        assert [m.content for m in store.page(MemoryQuery(contains="LISBON"), limit=10)] == ["Dana lives in Lisbon"]
        # A value with no text field is read as json.dumps shows it, not as orjson stored it.
        assert [m.metadata["key"] for m in store.page(MemoryQuery(contains='"mode": "dark"'), limit=10)] == ["theme"]
        assert store.count(MemoryQuery(channels=("memories.dana",))) == 2
        assert store.count(MemoryQuery(ids=("lg:store.workspace.db:prefs/theme", "lg:store.workspace.db:x/y"))) == 1
        assert search(store, "tea", mode="keyword", k=5).hits[0].memory.metadata["key"] == "tea"
        assert store.find("lg:store.workspace.db:memories.dana/nothing") is None
