"""Purge means gone (issue 26): after `rm --purge`, no file of the store, of its sidecars or of
Mnemoscope's data folder holds the purged memory's text, in any form its copies, its owner's logs,
its indexes or Mnemoscope's journal kept it. The journal keeps that a purge happened (operation,
ids, when) with the text replaced by a marker, and undo of it refuses in one clear message.

Each store is built as a person would reach that point: the memory's text is distinctive (one
full-text token, TOKEN, so an index entry of it shows in the bytes too), edited more than once so
that the journal and the owner's log hold it several times, soft-deleted where the store has a soft delete,
then purged through the command line or the Curator. Every file is then read as bytes."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli_runs import run, run_json
from helpers.owners import require, run_owner
from helpers.store_state import sql_rows
from mnemoscope.storage import Curator, MemoryQuery, NotFoundError, UnsupportedError, open_store
from mnemoscope.storage.consistency.checks import check
from platformdirs import user_cache_dir

TOKEN = "zebraquartz8841"
TEXTS = [f"Dana's locker code is {TOKEN}, first", f"Dana's locker code is {TOKEN}, second",
         f"Dana's locker code is {TOKEN}, third"]
MARKER = "[purged]"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Mnemoscope's data folder, in the test's own folder."""
    folder = tmp_path / "mnemoscope-home"
    folder.mkdir()
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(folder))
    return folder


# Mnemoscope's cache folder (Chroma record indexes, never in the store) is the user's, shared by every
# test: it is read too, TOKEN being in no other test's store.
CACHE = Path(user_cache_dir("mnemoscope", "Mnemoscope"))


def files_under(*folders: Path) -> Iterator[Path]:
    for folder in (*folders, CACHE):
        if folder.is_dir():
            yield from (p for p in sorted(folder.rglob("*")) if p.is_file())


def holding(needles: list[str], *folders: Path) -> dict[str, list[str]]:
    """Each file (under folders) whose bytes hold one of needles (UTF-8), with the needles it holds."""
    found = {}
    for path in files_under(*folders):
        data = path.read_bytes()
        hits = [n for n in needles if n.encode("utf-8") in data]
        if hits:
            found[str(path)] = hits
    return found


def findings(store) -> set[tuple[str, str]]:
    return {(f.kind, f.record) for f in check(store)}


def purge(way: str, root: Path, memory_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    if way == "cli":
        code, out, err = run(capsys, "rm", root, memory_id, "--purge")
        assert code == 0, err
    else:
        with open_store(root) as store:
            outcome = Curator(store).delete(memory_id, purge=True)
            assert outcome.operation == "purge" and TOKEN not in json.dumps(outcome.details)


def assert_undo_refuses(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "undo", root)
    assert code != 0 and "purge" in err and "cannot be undone" in err, err
    with open_store(root) as store, pytest.raises(UnsupportedError, match="cannot be undone"):
        Curator(store).undo()


def assert_history_keeps_the_purge(root: Path, memory_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    entries = run_json(capsys, "history", root)["entries"]
    assert entries[0]["operation"] == "purge" and memory_id in entries[0]["targets"]
    assert entries[0]["at"] and MARKER in json.dumps(entries[0]["before"])
    assert TOKEN not in json.dumps(entries)


# -- the native workspace: memory.db (+ FTS5, journal), vectors/ (Chroma) and markdown -----------------


def _mirrored(root: Path) -> str:
    """A memory.db memory with a vector and a daily-log markdown copy."""
    return sql_rows(root, "SELECT id FROM memories WHERE md_file LIKE 'memory/%' ORDER BY id LIMIT 1")[0][0]


@pytest.mark.parametrize("way", ["cli", "curator"])
def test_a_purged_native_memory_leaves_its_text_in_no_file(
    demo_path: Path, home: Path, way: str, capsys: pytest.CaptureFixture[str]
) -> None:
    memory_id = _mirrored(demo_path)
    with open_store(demo_path) as store:
        original = store.get(memory_id).content
        assert [c["kind"] for c in store.copies(memory_id)] == ["chroma", "markdown"]
        curator = Curator(store)
        for text in TEXTS:
            curator.edit(memory_id, content=text)
        assert [c["kind"] for c in store.copies(memory_id)] == ["chroma", "markdown"]
        curator.delete(memory_id)  # soft: the markdown bullet goes, the row and vector stay
        before = findings(store) - {("stale-vector", memory_id)}
        count = store.count(MemoryQuery(statuses=()))
    assert holding([TOKEN], demo_path)  # the text is there to be purged
    purge(way, demo_path, memory_id, capsys)

    assert holding([TOKEN, original, *TEXTS], demo_path, home) == {}
    with open_store(demo_path) as store:
        with pytest.raises(NotFoundError):
            store.get(memory_id)
        assert store.count(MemoryQuery(statuses=())) == count - 1
        assert findings(store) <= before
        assert not any(store.keyword_lists(TOKEN, MemoryQuery(statuses=()), 5).values())
        with pytest.raises(NotFoundError, match="purged"):
            Curator(store).restore(memory_id)
    assert_history_keeps_the_purge(demo_path, memory_id, capsys)
    assert_undo_refuses(demo_path, capsys)
    assert holding([TOKEN, original, *TEXTS], demo_path, home) == {}


def test_a_purge_while_an_agent_holds_memory_db_leaves_no_text_in_the_wal(
    demo_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another program's open connection keeps memory.db in WAL mode across the purge: the -wal
    it keeps must not hold the text the purge removed."""
    import sqlite3

    memory_id = _mirrored(demo_path)
    agent = sqlite3.connect(demo_path / "memory.db")
    try:
        agent.execute("SELECT count(*) FROM memories").fetchall()
        with open_store(demo_path) as store:
            curator = Curator(store)
            for text in TEXTS:
                curator.edit(memory_id, content=text)
            curator.delete(memory_id, purge=True)
        assert holding([TOKEN], demo_path, home) == {}
    finally:
        agent.close()


def test_older_steps_of_a_purged_memory_are_redacted_and_refuse_undo(demo_path: Path, home: Path) -> None:
    """The steps before a purge held the memory's text too: they keep their place in the journal
    with the text redacted, and undoing or redoing one (were the purge ever out of the way: here,
    a journal edited by hand) refuses, writing nothing. Another memory's steps keep theirs."""
    import sqlite3

    memory_id = _mirrored(demo_path)
    other = sql_rows(demo_path, "SELECT id FROM memories WHERE id != ? ORDER BY id LIMIT 1", memory_id)[0][0]
    with open_store(demo_path) as store:
        curator = Curator(store)
        curator.edit(other, content="another memory's edit stays undoable")
        curator.edit(memory_id, content=TEXTS[0])
        curator.edit(memory_id, content=TEXTS[1])
        purged = curator.delete(memory_id, purge=True).seq
        entries = store.history()
    edits = [e for e in entries if e.operation == "edit" and memory_id in e.targets]
    assert len(edits) == 2 and all(MARKER in json.dumps([e.before, e.after, e.details]) for e in edits)
    [edit_of_other] = [e for e in entries if other in e.targets]
    assert "another memory's edit stays undoable" in json.dumps(edit_of_other.after)
    with sqlite3.connect(demo_path / "memory.db") as con:  # the purge set aside by hand
        con.execute("UPDATE audit SET state = 'dropped' WHERE seq = ?", (purged,))
    con.close()
    with open_store(demo_path) as store:
        with pytest.raises(UnsupportedError, match=f"purged for good in step {purged}"):
            Curator(store).undo()
        assert store.history(limit=1)[0].seq == purged  # nothing was written, not even an intent
    assert holding([TOKEN], demo_path, home) == {}


def test_a_purged_markdown_memory_leaves_its_text_in_no_file(
    demo_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A markdown block that is a memory of its own changes id with each edit: every version of it
    in the journal is redacted."""
    with open_store(demo_path) as store:
        daily = store.page(MemoryQuery(contains="Drafted release notes"), limit=1)[0]
        curator = Curator(store)
        memory_id = daily.id
        for text in TEXTS:
            memory_id = curator.edit(memory_id, content=text).ids[0]
    purge("cli", demo_path, memory_id, capsys)
    assert holding([TOKEN, *TEXTS], demo_path, home) == {}
    assert_undo_refuses(demo_path, capsys)


# -- mem0, written by the mem0 library: on Chroma (its queue, its full-text index, its HNSW files) and --
# -- on Qdrant's local mode (a storage.sqlite per collection), with history.db -------------------------

VECTOR_STORES = {
    "chroma": '{"provider": "chroma", "config": {"collection_name": "mem0", "path": root + "/chroma"}}',
    "qdrant": '{"provider": "qdrant", "config": {"collection_name": "mem0", "path": root + "/qdrant", '
              '"embedding_model_dims": 256}}',
}

MEM0_SETUP = """
from mem0 import Memory
from mnemoscope.storage.embedders.base import HashingEmbedder
_emb = HashingEmbedder()
class LocalEmbedder:
    def embed(self, text, memory_action=None):
        return _emb.embed([text])[0]
def open_mem0(root):
    m = Memory.from_config({"vector_store": VECTOR_STORE, "history_db_path": root + "/history.db"})
    m.embedding_model = LocalEmbedder()
    return m
def close(m):
    getattr(m.vector_store.client, "close", lambda: None)()  # qdrant_client's lock on its folder goes
"""

MEM0_BUILD = MEM0_SETUP + """
m = open_mem0(root)
ids = {}
ids["secret"] = m.add(texts[0], user_id="dana", infer=False)["results"][0]["id"]
ids["other"] = m.add("Dana lives in Lisbon", user_id="dana", infer=False)["results"][0]["id"]
m.update(ids["secret"], texts[1])
close(m)
print(json.dumps(ids))
"""

MEM0_READ = MEM0_SETUP + """
m = open_mem0(root)
print(json.dumps({"dana": m.get_all(filters={"user_id": "dana"})["results"], "history": m.history(memory_id)},
                 default=str))
close(m)
"""


def _mem0(code: str, vectors: str, root: Path, **params: object) -> dict:
    return run_owner(code.replace("VECTOR_STORE", VECTOR_STORES[vectors]), root=str(root),
                     mem0_dir=str(root / ".mem0"), **params)


@pytest.fixture(scope="module", params=sorted(VECTOR_STORES))
def _mem0_template(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    require("mem0")
    root = tmp_path_factory.mktemp(f"mem0-{request.param}") / "store"
    root.mkdir()
    return root, {"vectors": request.param, **_mem0(MEM0_BUILD, request.param, root, texts=TEXTS)}


@pytest.fixture
def mem0_store(_mem0_template: tuple[Path, dict], tmp_path: Path) -> tuple[Path, dict]:
    root, ids = _mem0_template
    copy = tmp_path / "mem0-store"
    shutil.copytree(root, copy)
    return copy, ids


@pytest.mark.parametrize("way", ["cli", "curator"])
def test_a_purged_mem0_memory_leaves_its_text_in_no_file(
    mem0_store: tuple[Path, dict], home: Path, way: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root, ids = mem0_store
    memory_id = f"vec:mem0:{ids['secret']}"
    with open_store(root) as store:
        Curator(store).edit(memory_id, content=TEXTS[2])  # journaled, and logged by history.db as mem0 does
        before = findings(store)
    holders = set(holding([TOKEN], root))
    assert str(root / "history.db") in holders and len(holders) >= 3  # the vector store's file and the journal
    purge(way, root, memory_id, capsys)

    assert holding([TOKEN, *TEXTS], root, home) == {}
    with open_store(root) as store:
        assert store.count() == 1
        assert findings(store) <= before
    owner = _mem0(MEM0_READ, ids["vectors"], root, memory_id=ids["secret"])
    assert [m["memory"] for m in owner["dana"]] == ["Dana lives in Lisbon"]
    # mem0's own log keeps every row of the memory (that it was added, updated, deleted), not its text
    assert [h["event"] for h in owner["history"]] == ["ADD", "UPDATE", "UPDATE", "DELETE"]
    assert {h["old_memory"] for h in owner["history"][1:]} == {MARKER}
    assert_history_keeps_the_purge(root, memory_id, capsys)
    assert_undo_refuses(root, capsys)
    assert holding([TOKEN, *TEXTS], root, home) == {}
