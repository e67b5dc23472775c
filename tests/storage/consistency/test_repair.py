"""Repairs: one undoable step that leaves the check clean, copies that say what the row says,
refusals for kinds without a safe repair, the kinds a repair takes, and a store with no native
workspace, which has no automatic repair."""

from __future__ import annotations

from pathlib import Path

import pytest
from formats.test_mem0 import _template, mem0_store  # noqa: F401 (fixtures)
from helpers.consistency_damage import found, plant_damage
from helpers.consistency_damage import rows as _rows
from mnemoscope.storage import Curator, open_store
from mnemoscope.storage.consistency import KINDS, Finding, Report, check
from mnemoscope.storage.consistency.repair import repair_kinds
from mnemoscope.storage.errors import NothingToDoError, UnsupportedError
from mnemoscope.storage.query import MemoryQuery

REPAIRABLE = ["missing-vector", "orphan-vector", "stale-vector", "vector-metadata-mismatch", "missing-bullet",
              "stale-fts", "missing-fts"]


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
        assert store._journal.next_to_undo().operation == "repair"
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
        vector = store._workspace.vectors.read_record(planted["missing-vector"])
        assert vector["document"] == store.get(memory_id).content
        assert planted["missing-bullet"] in {b.record_id for f in store._workspace.markdown.files()
                                             for b in store._workspace.markdown.blocks(f)}
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
        assert store._journal.next_to_undo() is None or store._journal.next_to_undo().operation != "repair"



def test_repair_kinds_are_the_reports_default_ones_or_those_named(demo_path: Path) -> None:
    plant_damage(demo_path)
    with open_store(demo_path) as store:
        report = check(store)
    assert sorted(repair_kinds(report, None)) == sorted(REPAIRABLE)
    assert repair_kinds(report, ["text-mismatch", "stale-fts", "text-mismatch"]) == ["text-mismatch", "stale-fts"]
    with pytest.raises(UnsupportedError, match="No finding kind 'no-such-kind'"):
        repair_kinds(report, ["no-such-kind"])


def test_a_store_with_no_native_workspace_has_no_automatic_repair(mem0_store) -> None:  # noqa: F811 (the fixture)
    root, _ids = mem0_store
    with open_store(root) as store:
        report = check(store)
        with pytest.raises(NothingToDoError, match="nothing of those kinds"):
            Curator(store).repair(report)
        stray = Report(location=store.location)
        stray.add(Finding("orphan-vector", "vec:mem0:x", "a vector copy of a gone memory"))
        with pytest.raises(UnsupportedError, match="has no native workspace"):
            store.plan_repairs(stray, ["orphan-vector"], None)
