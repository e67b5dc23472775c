"""mem0: a store written by the real mem0ai library (Chroma + history.db), offline.

mem0 runs with infer=False (no LLM) and a deterministic local embedder in place
of its OpenAI one; everything it writes to disk is its own code's doing.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from helpers.owners import require, run_owner
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.views.search import search
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store

require("mem0")

SETUP = """
from mem0 import Memory
from mnemoscope.storage.embedders.base import HashingEmbedder
_emb = HashingEmbedder()
class LocalEmbedder:
    def embed(self, text, memory_action=None):
        return _emb.embed([text])[0]
def open_mem0(root):
    m = Memory.from_config({
        "vector_store": {"provider": "chroma", "config": {"collection_name": "mem0", "path": root + "/chroma"}},
        "history_db_path": root + "/history.db",
    })
    m.embedding_model = LocalEmbedder()
    return m
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
print(json.dumps(ids))
"""

READ = SETUP + """
m = open_mem0(root)
out = {"dana": m.get_all(filters={"user_id": "dana"})["results"], "one": m.get(memory_id), "history": m.history(memory_id)}
print(json.dumps(out, default=str))
"""


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("mem0") / "store"
    root.mkdir()
    ids = run_owner(BUILD, root=str(root), mem0_dir=str(root / ".mem0"))
    return root, ids


@pytest.fixture
def mem0_store(_template, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root, ids = _template
    copy = tmp_path / "mem0-store"
    shutil.copytree(root, copy)
    return copy, ids


def owner_view(root: Path, memory_id: str) -> dict:
    return run_owner(READ, root=str(root), memory_id=memory_id, mem0_dir=str(root / ".mem0"))


def test_detects_mem0_from_the_folder_the_chroma_dir_or_history_db(mem0_store):
    root, ids = mem0_store
    for path in (root, root / "chroma", root / "history.db"):
        with open_store(path) as store:
            info = store.info()
            assert [f["format"] for f in info["formats"]] == ["mem0"]
            assert info["formats"][0]["files"] == [str(root / "chroma"), str(root / "history.db")]
            assert store.count() == 3  # four added, one deleted by mem0


def test_contents_channels_and_history(mem0_store):
    root, ids = mem0_store
    with open_store(root) as store:
        tea = store.get(f"vec:mem0:{ids['tea']}")
        assert tea.content == "Dana prefers green tea"
        assert tea.channel == "user:dana"
        assert tea.metadata["topic"] == "drinks"
        assert store.get(f"vec:mem0:{ids['deploy']}").channel == "agent:helper/run:r1"
        events = [(h["event"], h["new_memory"]) for h in store.owner_history(tea.id)]
        assert events == [("ADD", "Dana prefers tea over coffee"), ("UPDATE", "Dana prefers green tea")]
        assert store.counts()["channels"] == {"user:dana": 2, "agent:helper/run:r1": 1}
        [session] = store.sessions()
        assert [t.content for t in store.turns(session.id)] == ["I moved to Lisbon", "Noted."]
        assert store.problems() == []
        found = search(store, "Lisbon", mode="keyword")
        assert [hit.memory.id for hit in found.hits] == [f"vec:mem0:{ids['lisbon']}"]


def test_its_chroma_vectors_are_handed_out_for_the_map(mem0_store):
    """vector_collections: mem0's collection as its Chroma directory hands it out (not native:
    no memory.db here), each record's channel as mem0 means it in the record index."""
    root, ids = mem0_store
    with open_store(root, read_only=True) as store:
        found, notes = store.vector_collections()
        assert notes == [] and [(c.name, c.count, c.native) for c in found] == [("mem0", 3, False)]
        [(record_ids, vectors)] = list(found[0].batches(10))
        assert sorted(record_ids) == sorted(ids[k] for k in ("tea", "lisbon", "deploy"))
        assert vectors.shape == (3, found[0].dimension)
        index = found[0].record_index()
        channels = {str(i): index.channels[c] for i, c in zip(index.ids.tolist(), index.channel.tolist(), strict=True)}
        assert channels[ids["deploy"]] == "agent:helper/run:r1"


def test_edit_is_read_back_by_mem0_and_undone(mem0_store):
    root, ids = mem0_store
    memory_id = f"vec:mem0:{ids['lisbon']}"
    with open_store(root) as store:
        Curator(store).edit(memory_id, content="Dana lives in Porto")
    after = owner_view(root, ids["lisbon"])
    assert after["one"]["memory"] == "Dana lives in Porto"
    assert after["one"]["hash"] == hashlib.md5(b"Dana lives in Porto").hexdigest()
    assert after["history"][-1]["event"] == "UPDATE"
    assert (after["history"][-1]["old_memory"], after["history"][-1]["new_memory"]) == ("Dana lives in Lisbon", "Dana lives in Porto")
    with open_store(root) as store:
        Curator(store).undo()
    undone = owner_view(root, ids["lisbon"])
    assert undone["one"]["memory"] == "Dana lives in Lisbon"
    assert undone["one"]["hash"] == hashlib.md5(b"Dana lives in Lisbon").hexdigest()
    assert [h["event"] for h in undone["history"]] == ["ADD", "UPDATE", "UPDATE"]


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
    back = owner_view(root, ids["tea"])
    assert back["one"]["memory"] == "Dana prefers green tea"
    assert back["history"][-1]["event"] == "ADD"


def test_promote_and_reinforce_are_refused_with_the_reason(mem0_store):
    root, ids = mem0_store
    with open_store(root) as store:
        with pytest.raises(UnsupportedError, match="no project and global channels"):
            Curator(store).promote(f"vec:mem0:{ids['tea']}")
        with pytest.raises(UnsupportedError, match="no access count"):
            Curator(store).reinforce(f"vec:mem0:{ids['tea']}")
        assert store._journal.count() == 0


def test_drift_between_chroma_and_history_is_flagged(mem0_store):
    root, ids = mem0_store
    import sqlite3

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
        assert any("missing from Chroma: lost-1" in p for p in problems)
        assert any("1 memories: text differs" in p for p in problems)


def test_import_round_trip_is_idempotent(mem0_store, tmp_path: Path):
    root, ids = mem0_store
    dest = tmp_path / "workspace"
    first = import_store(root, dest)
    assert first.imported == 3 and first.sessions == 1
    again = import_store(root, dest)
    assert again.imported == 0 and again.already_present == 3
    with open_store(dest) as store:
        imported = {m.content: m for m in store.page(limit=10)}
        tea = imported["Dana prefers green tea"]
        assert tea.channel == "user:dana"
        assert tea.metadata["import"]["format"] == "mem0"
        assert tea.metadata["import"]["original_id"] == f"vec:mem0:{ids['tea']}"
        assert len(store.turns("user_id=dana")) == 2
