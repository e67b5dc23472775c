"""The vector copies against the memory rows: missing, orphan, stale, relabelled and wrong-length
vectors of a damaged demo workspace, and the cosine that tells a stale vector."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.consistency_damage import plant_damage, rows
from mnemoscope.storage import open_store
from mnemoscope.storage.consistency import KINDS, check
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.embedders.local import LocalEmbedder
from mnemoscope.storage.native.copies.vectors import VectorCheck, cosines


def test_vectors_of_another_model_are_reported_by_length(demo_path: Path) -> None:
    """Checked against a 128-number model, the demo's 256-number vectors are each of the wrong
    length (and none is reported as stale on top)."""
    with open_store(demo_path) as store:
        report = check(store, embedder=HashingEmbedder(128))
    assert report.counts() == {"vector-dimension": report.checked["vectors"]}
    assert "256 numbers where the collection's model makes 128" in report.items("vector-dimension")[0].detail
    assert not KINDS["vector-dimension"].repairable



def test_the_vector_check_finds_each_planted_vector_kind_and_keeps_the_orphans_text(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    with open_store(demo_path) as store:
        workspace = store._workspace
        vectors = VectorCheck(workspace.db, workspace.vectors, LocalEmbedder())
        ticked: list[int] = []
        found = [*vectors.rows(ticked.append), *vectors.records()]
        gone_text = store._workspace.vectors.read_record(planted["orphan-vector"])["document"]
    assert {(f.kind, f.record) for f in found} == {
        (kind, planted[kind])
        for kind in ("missing-vector", "orphan-vector", "stale-vector", "vector-metadata-mismatch")
    }
    assert sum(ticked) == rows(demo_path, "SELECT count(*) FROM memories")[0][0]
    assert vectors.orphan_texts == [gone_text]
    relabelled = next(f for f in found if f.kind == "vector-metadata-mismatch")
    assert relabelled.detail == "differs from the row in status" and relabelled.source == "vectors/memories"


def test_without_an_embedder_only_vectors_marked_stale_are_found(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    with open_store(demo_path) as store:
        vectors = VectorCheck(store._workspace.db, store._workspace.vectors, None)
        kinds = {f.kind for f in vectors.rows(lambda n: None)}
    assert "stale-vector" not in kinds and planted["stale-vector"]
    assert vectors.dimension == 256  # read from the collection's own vectors


def test_cosines_compare_row_by_row() -> None:
    assert cosines([[1, 0], [0, 2], [0, 0], [1, 1]], [[2, 0], [1, 0], [0, 0], [0, 0]]) == pytest.approx(
        [1.0, 0.0, 1.0, 0.0])
    assert cosines([[1, 2, 3]], [[-1, -2, -3]]) == pytest.approx([-1.0])


def test_a_clean_store_has_no_vector_finding_and_counts_its_vectors(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        report = check(store)
        assert report.checked["vectors"] == store._workspace.vectors.record_count("memories")
    assert not [kind for kind in report.counts() if kind in KINDS and "vector" in kind]
