"""mem0 on Qdrant's local mode: stores written by the real mem0ai library, offline.

mem0 runs with infer=False (no LLM) and a deterministic local embedder in place of its
OpenAI one, on qdrant_client's ``QdrantClient(path=...)``; everything on disk is their code's
doing. What Mnemoscope writes is read back by mem0 (and so by qdrant_client) in a child process.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers.owners import OFFLINE_ENV, REPO, require, run_owner
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.detect.discover import discover
from mnemoscope.storage.errors import ConflictError, LockedError, UnsupportedError, WrapsStoresError
from mnemoscope.storage.formats.qdrant_points import RefusedPickle, dump_point, load_point
from mnemoscope.storage.query import MemoryQuery
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.settings import StoreSettings
from mnemoscope.storage.transfer import import_store
from mnemoscope.storage.views.search import search, similar

require("mem0")

SETUP = """
from mem0 import Memory
from mnemoscope.storage.embedders.base import HashingEmbedder
_emb = HashingEmbedder()
class LocalEmbedder:
    def embed(self, text, memory_action=None):
        return _emb.embed([text])[0]
def open_mem0(root, collection="mem0"):
    m = Memory.from_config({
        "vector_store": {"provider": "qdrant", "config": {
            "collection_name": collection, "path": root + "/qdrant", "embedding_model_dims": 256}},
        "history_db_path": root + "/history.db",
        "version": "v1.1",
    })
    m.embedding_model = LocalEmbedder()
    return m
def close(m):
    m.vector_store.client.close()  # releases qdrant_client's lock on the folder
"""

BUILD = SETUP + """
m = open_mem0(root)
ids = {}
ids["tea"] = m.add("Dana prefers tea over coffee", user_id="dana", infer=False, metadata={"topic": "drinks"})["results"][0]["id"]
ids["lisbon"] = m.add("Dana lives in Lisbon", user_id="dana", infer=False)["results"][0]["id"]
ids["deploy"] = m.add("Deploys run on Fridays", agent_id="helper", run_id="r1", infer=False)["results"][0]["id"]
ids["gone"] = m.add("Temporary note", user_id="dana", infer=False)["results"][0]["id"]
m.update(ids["tea"], "Dana prefers green tea")
m.delete(ids["gone"])
m.db.save_messages([{"role": "user", "content": "I moved to Lisbon"}, {"role": "assistant", "content": "Noted."}], "user_id=dana")
close(m)
print(json.dumps(ids))
"""

READ = SETUP + """
m = open_mem0(root, collection)
from qdrant_client.http.models import SparseVector
[point] = m.vector_store.client.retrieve(collection, [memory_id], with_vectors=True) or [None]
vector = point.vector if point is not None else None
out = {
    "dana": m.get_all(filters={"user_id": "dana"})["results"],
    "one": m.get(memory_id),
    "history": m.history(memory_id),
    "dense": (vector.get("") if isinstance(vector, dict) else vector),
    "sparse": ({k: [v.indices, v.values] for k, v in vector.items() if isinstance(v, SparseVector)}
               if isinstance(vector, dict) else {}),
    "found": [r["id"] for r in m.search(query, filters={"user_id": "dana"}, top_k=1)["results"]] if query else [],
}
close(m)
print(json.dumps(out, default=str))
"""

# SynthOrg's Mem0 backend (memory/backends/mem0/config.py): <data_dir>/qdrant and <data_dir>/history.db,
# collection "synthorg_memories"; here one data_dir per agent, as its memory design lays it out, each
# written as its backend's store() writes (user_id the agent, SynthOrg's metadata; test_synthorg.py).
SYNTHORG = SETUP + """
for agent, facts in agents.items():
    m = open_mem0(data + "/" + agent, collection="synthorg_memories")
    for fact in facts:
        m.add([{"role": "user", "content": fact}], user_id=agent, infer=False, metadata={
            "_synthorg_category": "semantic", "_synthorg_namespace": "default", "_synthorg_confidence": 1.0})
    close(m)
print(json.dumps("ok"))
"""
AGENTS = {
    "ceo": ["The team chose Litestar over Flask", "PRs require 2 approvals"],
    "qa-lead": ["The QA lead prefers detailed test plans"],
}


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("mem0-qdrant") / "store"
    root.mkdir()
    ids = run_owner(BUILD, root=str(root), mem0_dir=str(root / ".mem0"))
    return root, ids


@pytest.fixture
def mem0_store(_template, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root, ids = _template
    copy = tmp_path / "mem0-store"
    shutil.copytree(root, copy)
    return copy, ids


def build_synthorg(data: Path) -> Path:
    """A SynthOrg data folder: one mem0 store on embedded Qdrant per agent."""
    data.mkdir(parents=True, exist_ok=True)
    run_owner(SYNTHORG, data=str(data), agents=AGENTS, mem0_dir=str(data / ".mem0"))
    return data


def owner_view(root: Path, memory_id: str, query: str = "", collection: str = "mem0") -> dict:
    """What mem0 (through qdrant_client) reads of one memory: get, get_all, history, its vectors."""
    return run_owner(
        READ, root=str(root), memory_id=memory_id, query=query, collection=collection, mem0_dir=str(root / ".mem0")
    )


def storage_file(root: Path) -> Path:
    return root / "qdrant" / "collection" / "mem0" / "storage.sqlite"


def test_detects_mem0_on_qdrant_from_the_folder_the_qdrant_folder_or_history_db(mem0_store):
    root, ids = mem0_store
    for path in (root, root / "qdrant", root / "history.db"):
        with open_store(path) as store:
            info = store.info()
            assert [(f["format"], f["label"]) for f in info["formats"]] == [("mem0", "mem0 (Qdrant local)")]
            assert info["formats"][0]["files"] == [str(root / "qdrant"), str(root / "history.db")]
            assert store.count() == 3  # four added, one deleted by mem0


def test_contents_channels_history_sessions_and_search(mem0_store):
    root, ids = mem0_store
    with open_store(root) as store:
        tea = store.get(f"vec:mem0:{ids['tea']}")
        assert tea.content == "Dana prefers green tea"
        assert tea.channel == "user:dana"
        assert tea.metadata["topic"] == "drinks"
        assert tea.source.format == "mem0"
        assert store.get(f"vec:mem0:{ids['deploy']}").channel == "agent:helper/run:r1"
        events = [(h["event"], h["new_memory"]) for h in store.owner_history(tea.id)]
        assert events == [("ADD", "Dana prefers tea over coffee"), ("UPDATE", "Dana prefers green tea")]
        assert store.counts()["channels"] == {"user:dana": 2, "agent:helper/run:r1": 1}
        assert store.count(MemoryQuery(channels=("user:dana",))) == 2
        [session] = store.sessions()
        assert [t.content for t in store.turns(session.id)] == ["I moved to Lisbon", "Noted."]
        assert store.problems() == []
        found = search(store, "Lisbon", mode="keyword")
        assert [hit.memory.id for hit in found.hits] == [f"vec:mem0:{ids['lisbon']}"]
        # Over the vectors mem0 stored: "Dana lives in Lisbon" shares "Dana" with the tea memory.
        near = [hit.memory.id for hit in similar(store, tea.id, k=2).hits]
        assert near and near == [f"vec:mem0:{ids['lisbon']}", f"vec:mem0:{ids['deploy']}"][: len(near)]
        assert store.embedding_of(tea.id) is not None and len(store.embedding_of(tea.id)) == 256
        text = search(store, "Lisbon", mode="vector")  # mem0's embedder is code, not in the store
        assert text.mode == "keyword" and any("not recorded in the store; 256 dimensions, Cosine" in n for n in text.notices)


def test_every_point_written_back_is_the_point_qdrant_client_loads(mem0_store):
    root, _ids = mem0_store
    con = sqlite3.connect(storage_file(root))
    blobs = [blob for (blob,) in con.execute("SELECT point FROM points")]
    con.close()
    assert len(blobs) == 3
    for blob in blobs:  # the test's own store: trusted, so the real library may unpickle it here
        assert pickle.loads(dump_point(load_point(blob))) == pickle.loads(blob)


def test_edit_is_read_back_by_mem0_and_undone(mem0_store):
    root, ids = mem0_store
    memory_id = f"vec:mem0:{ids['lisbon']}"
    before = owner_view(root, ids["lisbon"])
    with open_store(root) as store:
        outcome = Curator(store).edit(memory_id, content="Dana lives in Porto")
        assert store.stale_ids() == [memory_id]  # no embedder for mem0's vectors here: flagged, not guessed
    after = owner_view(root, ids["lisbon"])
    assert after["one"]["memory"] == "Dana lives in Porto"
    assert after["one"]["hash"] == hashlib.md5(b"Dana lives in Porto").hexdigest()
    assert after["one"]["metadata"]["mnemoscope_stale"] is True
    assert after["dense"] == before["dense"]
    assert after["history"][-1]["event"] == "UPDATE"
    assert (after["history"][-1]["old_memory"], after["history"][-1]["new_memory"]) == ("Dana lives in Lisbon", "Dana lives in Porto")
    assert outcome.operation == "edit"
    with open_store(root) as store:
        Curator(store).undo()
        assert store.stale_ids() == []
    undone = owner_view(root, ids["lisbon"])
    assert undone["one"]["memory"] == "Dana lives in Lisbon"
    assert undone["one"]["hash"] == hashlib.md5(b"Dana lives in Lisbon").hexdigest()
    assert "mnemoscope_stale" not in (undone["one"].get("metadata") or {})
    assert [h["event"] for h in undone["history"]] == ["ADD", "UPDATE", "UPDATE"]
    assert undone["dense"] == before["dense"]


def test_edit_with_the_stores_embedder_replaces_the_vector_mem0_searches(mem0_store):
    root, ids = mem0_store
    with open_store(root) as store:
        store.save_settings(StoreSettings(embedder="mnemoscope-hashing-256"))
        Curator(store).edit(f"vec:mem0:{ids['tea']}", content="Dana drinks espresso in Porto")
        assert store.stale_ids() == []
    after = owner_view(root, ids["tea"], query="espresso Porto")
    assert after["one"]["memory"] == "Dana drinks espresso in Porto"
    assert "mnemoscope_stale" not in (after["one"].get("metadata") or {})
    assert after["found"] == [ids["tea"]]  # mem0's own vector search finds it by its new text


def test_delete_is_read_back_by_mem0_and_restored(mem0_store):
    root, ids = mem0_store
    memory_id = f"vec:mem0:{ids['tea']}"
    with open_store(root) as store:
        outcome = Curator(store).delete(memory_id)
        assert any("no soft delete" in n for n in outcome.notes)
        assert store.count() == 2
    gone = owner_view(root, ids["tea"])
    assert gone["one"] is None
    assert ids["tea"] not in [m["id"] for m in gone["dana"]]
    assert gone["history"][-1]["event"] == "DELETE" and gone["history"][-1]["is_deleted"]
    with open_store(root) as store:
        Curator(store).restore(memory_id)
        assert store.count() == 3
    back = owner_view(root, ids["tea"])
    assert back["one"]["memory"] == "Dana prefers green tea"
    assert back["one"]["metadata"] == {"topic": "drinks"}
    assert back["history"][-1]["event"] == "ADD"


def test_undo_of_a_delete_brings_the_point_back_for_mem0(mem0_store):
    root, ids = mem0_store
    before = owner_view(root, ids["deploy"])
    with open_store(root) as store:
        Curator(store).delete(f"vec:mem0:{ids['deploy']}")
        Curator(store).undo()
    back = owner_view(root, ids["deploy"])
    assert {k: back["one"][k] for k in ("memory", "hash", "agent_id", "run_id", "created_at")} == {
        k: before["one"][k] for k in ("memory", "hash", "agent_id", "run_id", "created_at")}
    assert back["dense"] == before["dense"]


WITH_BM25 = SETUP + """
from qdrant_client.http.models import PointStruct, SparseVector
m = open_mem0(root)
[point] = m.vector_store.client.retrieve("mem0", [key], with_vectors=True, with_payload=True)
bm25 = SparseVector(indices=[3, 17], values=[0.5, 0.25])  # what mem0 adds when fastembed is installed
dense = point.vector if isinstance(point.vector, list) else point.vector[""]
m.vector_store.client.upsert("mem0", [PointStruct(id=key, vector={"": dense, "bm25": bm25}, payload=point.payload)])
close(m)
print(json.dumps("ok"))
"""


def test_an_edit_drops_the_bm25_vector_of_the_old_text_and_undo_brings_it_back(mem0_store):
    root, ids = mem0_store
    run_owner(WITH_BM25, root=str(root), key=ids["lisbon"], mem0_dir=str(root / ".mem0"))
    assert owner_view(root, ids["lisbon"])["sparse"] == {"bm25": [[3, 17], [0.5, 0.25]]}
    with open_store(root) as store:
        outcome = Curator(store).edit(f"vec:mem0:{ids['lisbon']}", content="Dana lives in Porto")
        assert any("bm25 sparse vector held the old text and was dropped" in n for n in outcome.notes)
    edited = owner_view(root, ids["lisbon"])
    assert (edited["one"]["memory"], edited["sparse"]) == ("Dana lives in Porto", {})
    with open_store(root) as store:
        Curator(store).undo()
    undone = owner_view(root, ids["lisbon"])
    assert (undone["one"]["memory"], undone["sparse"]) == ("Dana lives in Lisbon", {"bm25": [[3, 17], [0.5, 0.25]]})


def test_promote_and_reinforce_are_refused_with_the_reason(mem0_store):
    root, ids = mem0_store
    with open_store(root) as store:
        with pytest.raises(UnsupportedError, match="no project and global channels"):
            Curator(store).promote(f"vec:mem0:{ids['tea']}")
        with pytest.raises(UnsupportedError, match="no access count"):
            Curator(store).reinforce(f"vec:mem0:{ids['tea']}")
        assert store._journal.count() == 0


def test_a_point_mem0_changed_since_it_was_read_is_not_overwritten(mem0_store):
    root, ids = mem0_store
    memory_id = f"vec:mem0:{ids['lisbon']}"
    with open_store(root) as store:
        read = store.get(memory_id)
        snapshot = store.source_for(memory_id).read_record(memory_id)
        run_owner(SETUP + "m = open_mem0(root); m.update(key, 'Dana moved to Madrid'); close(m); print('1')",
                  root=str(root), key=ids["lisbon"], mem0_dir=str(root / ".mem0"))
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).edit(memory_id, content="Dana lives in Porto", expected_revision=read.revision)
        source = store.source_for(memory_id)
        with pytest.raises(ConflictError, match="changed since it was read"):  # the check in the write itself
            source.write_record(memory_id, snapshot, {**snapshot, "metadata": {**snapshot["metadata"], "data": "x"}})
    view = owner_view(root, ids["lisbon"])
    assert view["one"]["memory"] == "Dana moved to Madrid"
    assert [h["event"] for h in view["history"]] == ["ADD", "UPDATE"]


def test_a_change_of_a_vector_alone_changes_the_revision_and_is_read_from_the_file(mem0_store):
    """A point's revision hashes its row as stored (no float is rounded: a nudge of one shows), and
    its vector is read from the file when asked for, not kept from the open."""
    root, ids = mem0_store
    memory_id = f"vec:mem0:{ids['lisbon']}"
    with open_store(root) as store:
        read = store.get(memory_id)
        before = store.source_for(memory_id).embedding_of(memory_id)
        con = sqlite3.connect(storage_file(root))
        [(key, blob)] = [(k, b) for k, b in con.execute("SELECT id, point FROM points") if ids["lisbon"].encode() in b]
        point = load_point(blob)
        vector = point.fields()["vector"]
        dense = vector[""] if isinstance(vector, dict) else vector
        dense[0] += 1e-7
        con.execute("INSERT OR REPLACE INTO points VALUES (?, ?)", (key, sqlite3.Binary(dump_point(point))))
        con.commit()
        con.close()
        again = store.get(memory_id)
        assert again.content == read.content and again.revision != read.revision
        assert store.source_for(memory_id).embedding_of(memory_id) == [before[0] + 1e-7, *before[1:]]
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).edit(memory_id, content="Dana lives in Porto", expected_revision=read.revision)


def test_nothing_is_written_while_mem0_holds_the_store_open(mem0_store):
    root, ids = mem0_store
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SETUP) + f"m = open_mem0({str(root)!r})\nprint('open', flush=True)\ninput()\nclose(m)\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        env={**os.environ, **OFFLINE_ENV, "PYTHONPATH": str(REPO), "MEM0_DIR": str(root / ".mem0")},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        before = storage_file(root).read_bytes()
        with open_store(root) as store:
            with pytest.raises(LockedError, match="open in another program"):
                Curator(store).edit(f"vec:mem0:{ids['lisbon']}", content="Dana lives in Porto")
            assert store._journal.count() == 0
        assert storage_file(root).read_bytes() == before
    finally:
        holder.communicate("\n", timeout=60)
    assert owner_view(root, ids["lisbon"])["one"]["memory"] == "Dana lives in Lisbon"


class _Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(mem0_store, tmp_path: Path):
    root, ids = mem0_store
    marker = tmp_path / "pwned"
    evil = pickle.dumps(_Exploit(marker))
    with pytest.raises(RefusedPickle):
        load_point(evil)
    con = sqlite3.connect(storage_file(root))
    con.execute("INSERT INTO points VALUES ('evil-key', ?)", (evil,))
    con.commit()
    con.close()
    before = storage_file(root).read_bytes()
    with open_store(root) as store:
        assert store.count() == 3  # the three memories mem0 wrote, and not the planted row
        [problem] = store.problems()
        assert "1 point(s) were not read" in problem and "system" in problem
    assert not marker.exists()
    assert storage_file(root).read_bytes() == before  # reading wrote nothing
    with open_store(root) as store:
        Curator(store).edit(f"vec:mem0:{ids['lisbon']}", content="Dana lives in Porto")  # the rest stays usable
    assert not marker.exists()
    con = sqlite3.connect(storage_file(root))
    assert con.execute("SELECT point FROM points WHERE id = 'evil-key'").fetchone()[0] == evil  # left as found
    con.close()
    pickle.loads(evil)  # what qdrant_client does on open: it runs
    assert marker.exists()


def test_drift_between_qdrant_and_history_is_flagged(mem0_store):
    root, ids = mem0_store
    con = sqlite3.connect(root / "history.db")
    con.execute("UPDATE history SET new_memory = 'something else' WHERE memory_id = ? AND event = 'ADD'", (ids["lisbon"],))
    con.execute(
        "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted) "
        "VALUES ('h-x', 'lost-1', NULL, 'Lost memory', 'ADD', '2026-01-01', '2026-01-01', 0)"
    )
    con.commit()
    con.close()
    with open_store(root) as store:
        assert store.get(f"vec:mem0:{ids['lisbon']}").metadata["mem0_drift"] == "text differs from the last history.db entry"
        problems = store.problems()
        assert any("missing from Qdrant: lost-1" in p for p in problems)
        assert any("1 memories: text differs" in p for p in problems)


def test_import_round_trip_is_idempotent(mem0_store, tmp_path: Path):
    root, ids = mem0_store
    dest = tmp_path / "workspace"
    first = import_store(root, dest)
    assert first.imported == 3 and first.sessions == 1
    assert import_store(root, dest).already_present == 3
    with open_store(dest) as store:
        tea = {m.content: m for m in store.page(limit=10)}["Dana prefers green tea"]
        assert tea.channel == "user:dana"
        assert tea.metadata["import"]["original_id"] == f"vec:mem0:{ids['tea']}"


def test_a_synthorg_data_folder_offers_each_agents_store(tmp_path: Path):
    data = build_synthorg(tmp_path / "data" / "memory")
    with pytest.raises(WrapsStoresError) as wrapped:
        open_store(data)
    label = "SynthOrg (mem0 on Qdrant local)"
    assert sorted(wrapped.value.inside) == [(str(data / agent), label) for agent in sorted(AGENTS)]
    found = discover([data])
    assert [(f.path, f.tool, f.memories) for f in found] == [
        (data / agent, label, len(facts)) for agent, facts in sorted(AGENTS.items())
    ]
    assert all(f.size > 0 and f.last_write is not None and not f.problem for f in found)
    with open_store(data / "ceo") as store:
        assert {m.content for m in store.page(limit=10)} == set(AGENTS["ceo"])
        assert store.counts()["channels"] == {"agent:ceo": 2}
        assert store.counts()["layers"] == {"semantic": 2}
        assert store.info()["formats"][0]["files"] == [str(data / "ceo" / "qdrant"), str(data / "ceo" / "history.db")]


def test_a_plain_page_builds_only_the_memories_it_shows_in_the_order_of_every_memory(mem0_store):
    from mnemoscope.storage.formats.mem0_qdrant import Mem0QdrantSource
    from mnemoscope.storage.query import Order
    from mnemoscope.storage.source import sort_key

    root, _ids = mem0_store
    with open_store(root) as store:
        [source] = [s for s in store._sources if isinstance(s, Mem0QdrantSource)]
        shown = {}
        for order in (Order.RECENT, Order.CREATED, Order.ACCESSED):
            for descending in (True, False):
                query = MemoryQuery(order=order, descending=descending)
                shown[(order, descending)] = (store.page(query, limit=2, offset=1), store.count(query))
        assert not source._points().built  # no memory was built but those shown
        every = source._matching(MemoryQuery(statuses=()))
        assert source._points().built and len(every) == 3
        for (order, descending), (page, count) in shown.items():
            assert page == sorted(every, key=sort_key(order), reverse=descending)[1:3] and count == 3
        assert store.page(MemoryQuery(channels=("user:dana",)), limit=5) == [
            m for m in sorted(every, key=sort_key(Order.RECENT), reverse=True) if m.channel == "user:dana"]
