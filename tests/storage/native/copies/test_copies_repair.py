"""The workspace plans the repairs of its own copies: one plan per memory, each change naming the
part that writes it, refused when there is nothing left to repair, nothing to embed with, or no
memory.db to repair from."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.consistency_damage import plant_damage, rows
from mnemoscope.storage import Curator, open_store
from mnemoscope.storage.consistency import check
from mnemoscope.storage.embedders.local import LocalEmbedder
from mnemoscope.storage.errors import NothingToDoError, UnsupportedError

REPAIRABLE = ["missing-vector", "orphan-vector", "stale-vector", "vector-metadata-mismatch", "missing-bullet",
              "stale-fts", "missing-fts", "text-mismatch"]


def test_a_plan_is_one_per_memory_and_refused_once_nothing_is_left(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    with open_store(demo_path) as store:
        report = check(store)
        workspace = store._workspace
        plans = workspace.plan_repairs(report, ["missing-fts", "stale-fts"], None)
        rowids = (int(planted["missing-fts"].removeprefix("fts:")), int(planted["stale-fts"].removeprefix("fts:")))
        ids = [r[0] for r in rows(demo_path, "SELECT id FROM memories WHERE rowid IN (?, ?) ORDER BY id", rowids)]
        assert sorted(p.target for p in plans) == ids
        assert all(p.changes and p.memory_id == p.target for p in plans)
        with pytest.raises(UnsupportedError, match="cannot be embedded here"):
            workspace.plan_repairs(report, ["missing-vector"], None)
        with pytest.raises(NothingToDoError, match="nothing of those kinds"):
            workspace.plan_repairs(report, ["vector-dimension"], None)
        # A repair re-reads what it changes: the old report's lost bullet, put back, plans nothing.
        Curator(store).repair(report, ["missing-bullet"])
        with pytest.raises(NothingToDoError, match="already repaired"):
            workspace.plan_repairs(report, ["missing-bullet"], None)
        # The store asks its workspace.
        assert [p.target for p in store.plan_repairs(report, ["missing-fts"], None)] == [
            p.target for p in workspace.plan_repairs(report, ["missing-fts"], None)]


def test_each_change_names_the_part_that_writes_it(demo_path: Path) -> None:
    plant_damage(demo_path)
    with open_store(demo_path) as store:
        workspace = store._workspace
        plans = workspace.plan_repairs(check(store), REPAIRABLE, LocalEmbedder())
        changes = [c for p in plans for c in p.changes]
        assert {p.kinds[0] for p in plans if len(p.kinds) == 1} >= {"orphan-vector", "missing-bullet", "stale-fts"}
        for change in changes:
            assert change.writer is not None and change.writer is workspace.part_for(change.record), change.record
        assert {id(c.writer) for c in changes} == {id(workspace.db), id(workspace.vectors), id(workspace.markdown)}


def test_a_workspace_without_memory_db_has_no_repair(demo_path: Path, chroma_only: Path) -> None:
    plant_damage(demo_path)
    with open_store(demo_path) as store:
        report = check(store)
    with open_store(chroma_only) as store:
        with pytest.raises(UnsupportedError, match="has no memory.db"):
            store._workspace.plan_repairs(report, ["orphan-vector"], None)
        with pytest.raises(NothingToDoError):
            store.plan_repairs(report, ["vector-dimension"], None)
