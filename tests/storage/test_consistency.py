"""The store-wide consistency check: a demo workspace damaged with the raw tools (sqlite3 on
memory.db, chromadb's own client on vectors/, plain file edits on markdown) is found out
kind by kind, repaired in one undoable step, and undo brings the damage back."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings
from formats.test_mem0 import _template, mem0_store  # noqa: F401 (fixtures)
from mnemoscope.storage import Curator, open_store
from mnemoscope.storage.consistency import KINDS, check
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.query import MemoryQuery

REPAIRABLE = ["missing-vector", "orphan-vector", "stale-vector", "vector-metadata-mismatch", "missing-bullet",
              "stale-fts", "missing-fts"]
ADVISED = ["orphan-bullet", "text-mismatch"]  # text-mismatch: repaired only when asked for by name


def _rows(path: Path, sql: str, params: tuple = ()) -> list[tuple]:
    con = sqlite3.connect(path / "memory.db")
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def plant_damage(path: Path) -> dict[str, str]:
    """One inconsistency of every native kind but vector-dimension (see its own test); returns
    each kind's record id as the check should report it."""
    mirrored = _rows(path, "SELECT id, md_file, content FROM memories WHERE md_file IS NOT NULL ORDER BY id")
    plain = [r[0] for r in _rows(path, "SELECT id FROM memories WHERE md_file IS NULL ORDER BY id")]
    (gone_id, gone_file, _), (unbulleted, unbulleted_file, unbulleted_text), (edited, edited_file, edited_text) = mirrored[:3]
    no_vector, tampered, relabelled, stale_fts, no_fts = plain[:5]

    con = sqlite3.connect(path / "memory.db")
    with con:
        con.execute("DELETE FROM memories WHERE id = ?", (gone_id,))  # its vector and bullet stay behind
        (rowid, content, tags), = con.execute("SELECT rowid, content, tags FROM memories WHERE id = ?", (stale_fts,))
        con.execute("INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', ?, ?, ?)",
                    (rowid, content, tags))
        con.execute("INSERT INTO memories_fts(rowid, content, tags) VALUES (?, 'words nobody wrote', '[]')", (rowid,))
        (rowid_missing, content, tags), = con.execute("SELECT rowid, content, tags FROM memories WHERE id = ?", (no_fts,))
        con.execute("INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', ?, ?, ?)",
                    (rowid_missing, content, tags))
    con.close()

    client = chromadb.PersistentClient(path=str(path / "vectors"), settings=Settings(anonymized_telemetry=False))
    try:
        col = client.get_collection("memories", embedding_function=None)
        col.delete(ids=[no_vector])
        noise = random.Random(3)
        col.update(ids=[tampered], embeddings=[[noise.uniform(-1, 1) for _ in range(256)]])
        col.update(ids=[relabelled], metadatas=[{"status": "archived"}])
    finally:
        client.close()

    unbulleted_path = path / unbulleted_file
    lines = unbulleted_path.read_text(encoding="utf-8").splitlines(keepends=True)
    unbulleted_path.write_text("".join(ln for ln in lines if unbulleted_text not in ln), encoding="utf-8")
    edited_path = path / edited_file
    edited_path.write_text(edited_path.read_text(encoding="utf-8").replace(
        edited_text, edited_text.replace("keep the public API stable", "keep the public API frozen")), encoding="utf-8")

    from mnemoscope.storage.native.markdown.blocks import record_id_for as block_id

    gone_text = next(r[2] for r in mirrored if r[0] == gone_id)
    return {
        "missing-vector": f"vec:memories:{no_vector}",
        "orphan-vector": f"vec:memories:{gone_id}",
        "stale-vector": f"vec:memories:{tampered}",
        "vector-metadata-mismatch": f"vec:memories:{relabelled}",
        "missing-bullet": block_id(unbulleted_file, unbulleted_text),
        "orphan-bullet": block_id(gone_file, gone_text),
        "text-mismatch": block_id(edited_file, edited_text.replace("stable", "frozen")),
        "stale-fts": f"fts:{rowid}",
        "missing-fts": f"fts:{rowid_missing}",
    }


def found(report) -> dict[str, list[str]]:
    return {kind: [f.record for f in report.items(kind)] for kind in report.counts()}


def test_a_clean_demo_store_has_nothing_to_report(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        report = check(store)
    assert report.clean, report.to_dict()
    assert report.checked["memory rows"] > 0 and report.checked["vectors"] > 0 and report.checked["markdown blocks"] > 0


def test_every_planted_inconsistency_is_found_once(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    ticks: list[tuple[int, int]] = []
    with open_store(demo_path) as store:
        report = check(store, progress=lambda done, total: ticks.append((done, total)))
    assert found(report) == {kind: [record] for kind, record in planted.items()}
    assert ticks[-1][0] == ticks[-1][1] > 0
    data = report.to_dict()
    assert data["total"] == len(planted) and not data["clean"]
    assert {k["kind"]: k["count"] for k in data["kinds"]} == dict.fromkeys(planted, 1)
    assert {k["kind"] for k in data["kinds"] if k["repairable"] and k["by_default"]} == set(REPAIRABLE)
    for kind in data["kinds"]:
        assert kind["title"] and kind["severity"] in ("error", "warning")
        assert kind["items"][0]["detail"]


def test_repair_leaves_the_check_clean_and_undo_brings_the_damage_back(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    with open_store(demo_path) as store:
        report = check(store)
        outcome = Curator(store).repair(report)
        assert outcome.operation == "repair"
        assert outcome.details["kinds"] == dict.fromkeys(REPAIRABLE, 1)
        after = check(store)
        # Only what a person has to decide is left. The orphan bullet was known by the vector copy
        # its memory left too; with that gone, the bullet reads as a markdown memory of its own.
        assert found(after) == {"text-mismatch": [planted["text-mismatch"]]}
        assert store.journal.next_to_undo().operation == "repair"
        Curator(store).undo()
        assert found(check(store)) == {kind: [record] for kind, record in planted.items()}
    with open_store(demo_path) as store:  # and it holds on disk
        Curator(store).redo()
        assert found(check(store)) == {"text-mismatch": [planted["text-mismatch"]]}
        # The person's call, asked for by name: the memory's text wins; the bullet says it again.
        edited_file = planted["text-mismatch"].split(":")[1]
        before = (demo_path / edited_file).read_bytes()
        Curator(store).repair(check(store), ["text-mismatch"])
        assert check(store).clean
        Curator(store).undo()
        assert (demo_path / edited_file).read_bytes() == before
        assert found(check(store)) == {"text-mismatch": [planted["text-mismatch"]]}


def test_repaired_copies_say_what_the_row_says(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    rowid = int(planted["missing-fts"].removeprefix("fts:"))
    (unindexed_id, unindexed_text), = _rows(demo_path, "SELECT id, content FROM memories WHERE rowid = ?", (rowid,))

    def keyword_found(store) -> bool:
        hits = store.keyword_lists(unindexed_text, MemoryQuery(), 50)
        return unindexed_id in {m.id for ranked in hits.values() for m in ranked}

    with open_store(demo_path) as store:
        assert not keyword_found(store)
        Curator(store).repair(check(store), ["missing-vector", "missing-bullet", "missing-fts"])
        memory_id = planted["missing-vector"].removeprefix("vec:memories:")
        vector = store.workspace.vectors.read_record(planted["missing-vector"])
        assert vector["document"] == store.get(memory_id).content
        assert planted["missing-bullet"] in {b.record_id for f in store.workspace.markdown.files()
                                             for b in store.workspace.markdown.blocks(f)}
        assert keyword_found(store)  # keyword search finds it again
        left = check(store)
        assert set(left.counts()) == set(planted) - {"missing-vector", "missing-bullet", "missing-fts"}


def test_kinds_without_a_safe_repair_are_refused(demo_path: Path) -> None:
    plant_damage(demo_path)
    with open_store(demo_path) as store:
        report = check(store)
        with pytest.raises(UnsupportedError, match="vector-dimension is not repaired"):
            Curator(store).repair(report, ["vector-dimension"])
        assert KINDS["vector-dimension"].advice and not KINDS["vector-dimension"].repairable
        assert store.journal.next_to_undo() is None or store.journal.next_to_undo().operation != "repair"


def test_vectors_of_another_model_are_reported_by_length(demo_path: Path) -> None:
    """Checked against a 128-number model, the demo's 256-number vectors are each of the wrong
    length (and none is reported as stale on top)."""
    with open_store(demo_path) as store:
        report = check(store, embedder=HashingEmbedder(128))
    assert report.counts() == {"vector-dimension": report.checked["vectors"]}
    assert "256 numbers where the collection's model makes 128" in report.items("vector-dimension")[0].detail
    assert not KINDS["vector-dimension"].repairable


def test_a_foreign_format_reports_its_own_index_drift(mem0_store) -> None:  # noqa: F811 (the fixture)
    """mem0 (written by the real library): history.db against its Chroma records."""
    root, ids = mem0_store
    with open_store(root) as store:
        assert check(store).clean
    con = sqlite3.connect(root / "history.db")
    with con:
        con.execute("UPDATE history SET new_memory = 'something else' WHERE memory_id = ?", (ids["lisbon"],))
        con.execute(
            "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, updated_at, is_deleted) "
            "VALUES ('h-x', 'lost-1', NULL, 'Lost memory', 'ADD', '2026-01-01', '2026-01-01', 0)"
        )
    con.close()
    with open_store(root) as store:
        report = check(store)
    assert found(report) == {"mem0-history-drift": [f"vec:mem0:{ids['lisbon']}"], "mem0-missing-vector": ["lost-1"]}
    assert not any(kind["repairable"] for kind in report.to_dict()["kinds"])
