"""The workspace compares its own copies: every planted native inconsistency found once, with what
it compared and progress per page to the end; the embedder asked for only where there are vectors;
a workspace without vectors, or without memory.db, compares what it has."""

from __future__ import annotations

from pathlib import Path

from helpers.consistency_damage import found, plant_damage, rows
from mnemoscope.storage import open_store
from mnemoscope.storage.embedders.base import Embedder
from mnemoscope.storage.embedders.local import LocalEmbedder


def test_the_workspace_finds_every_planted_inconsistency_of_its_copies(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    ticks: list[tuple[int, int]] = []
    with open_store(demo_path) as store:
        report = store._workspace.check_copies(LocalEmbedder(), lambda done, total: ticks.append((done, total)))
    assert found(report) == {kind: [record] for kind, record in planted.items()}
    memory_rows = rows(demo_path, "SELECT count(*) FROM memories")[0][0]
    assert report.checked["memory rows"] == memory_rows and report.checked["vectors"] > 0
    assert report.checked["markdown blocks"] > 0 and report.skipped == []
    assert ticks[-1] == (2 * memory_rows + 1, 2 * memory_rows + 1)  # rows against vectors, then the rest
    assert [done for done, _ in ticks] == sorted(done for done, _ in ticks)
    assert report.location == str(demo_path)


def test_the_default_embedder_is_asked_for_only_where_there_are_vectors(demo_path: Path, sqlite_only: Path) -> None:
    asked: list[str] = []

    def default() -> Embedder | None:
        asked.append("asked")
        return None

    with open_store(sqlite_only) as store:
        report = store._workspace.check_copies(default_embedder=default)
    assert asked == [] and report.clean and report.skipped == []
    assert report.checked == {"memory rows": rows(sqlite_only, "SELECT count(*) FROM memories")[0][0]}

    with open_store(demo_path) as store:
        report = store._workspace.check_copies(default_embedder=default)
    assert asked == ["asked"] and report.clean  # the demo's vectors are none marked stale
    assert report.skipped == ["stale vectors: no embedder runs here, so only vectors marked stale are found"]


def test_a_workspace_without_memory_db_has_nothing_to_compare(markdown_only: Path) -> None:
    ticks: list[tuple[int, int]] = []
    with open_store(markdown_only) as store:
        report = store._workspace.check_copies(progress=lambda done, total: ticks.append((done, total)))
    assert report.clean and report.checked == {} and ticks == []
