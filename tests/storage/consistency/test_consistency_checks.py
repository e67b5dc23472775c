"""check(store): a clean demo workspace reports nothing, every planted inconsistency is found
once with progress to the end, and a foreign format reports its own index drift."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from formats.test_mem0 import _template, mem0_store  # noqa: F401 (fixtures)
from helpers.consistency_damage import found, plant_damage
from mnemoscope.storage import open_store
from mnemoscope.storage.consistency import ConsistencyChecks, check

REPAIRABLE = ["missing-vector", "orphan-vector", "stale-vector", "vector-metadata-mismatch", "missing-bullet",
              "stale-fts", "missing-fts"]


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



def test_a_store_of_markdown_alone_is_checked_without_its_missing_parts(markdown_only: Path) -> None:
    ticks: list[tuple[int, int]] = []
    with open_store(markdown_only) as store:
        report = check(store, progress=lambda done, total: ticks.append((done, total)))
    assert report.clean and report.checked == {}
    assert ticks and ticks[-1][0] == ticks[-1][1]


def test_a_foreign_format_reports_its_own_index_drift(mem0_store) -> None:  # noqa: F811 (the fixture)
    """mem0 (written by the real library): history.db against its Chroma records."""
    root, ids = mem0_store
    ticks: list[tuple[int, int]] = []
    with open_store(root) as store:
        assert check(store, progress=lambda done, total: ticks.append((done, total))).clean
    assert ticks[-1][0] == ticks[-1][1]  # the progress ends, with no memory rows to count
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

    with open_store(root) as store:
        assert any(isinstance(source, ConsistencyChecks) for source in store.foreign)
