"""Salience as data (storage/views/salience.py): one memory's or one entity's salience report, and
the salience overview of the whole store, whose spread memory.db computes in SQL and other parts
in Python."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.errors import NotFoundError
from mnemoscope.storage.model import Kind, Status
from mnemoscope.storage.salience import EntityDecay, salience_kept
from mnemoscope.storage.timeutil import utcnow
from mnemoscope.storage.views.salience import HISTOGRAM_BINS, salience_of, salience_overview

AT = datetime(2026, 12, 1, tzinfo=timezone.utc)


def test_sql_effective_salience_matches_the_python_model(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        model = store.settings.salience
        at = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
        lowest = store._workspace.db.lowest_salience(model.decay_rate, model.access_boost, at, 50)
        values = [model.effective(m, at) for m in lowest]
        assert values == sorted(values)
        hist = store._workspace.db.salience_histogram(model.decay_rate, model.access_boost, at, 10)
        expected = [0] * 10
        for m in store._workspace.db.page(MemoryQuery(), 10_000):
            expected[min(int(model.effective(m, at) * 10), 9)] += 1
        assert hist == expected


def test_salience_of_an_entity_and_of_an_inferred_fact(demo_path: Path) -> None:
    from mnemoscope.storage.views.salience import salience_of, salience_overview

    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    with open_store(demo_path) as store:
        dana = next(e for e in store.entities() if e.id == "e-dana")
        report = salience_of(store, "e-dana", at)
        assert report["kind"] == "entity"
        assert report["effective"] == pytest.approx(EntityDecay().effective(dana, at), abs=1e-6)
        assert "0.95 ^ whole days" in report["formula"]
        overview = salience_overview(store, at)
        assert set(overview["formulas"]) == {"memory salience", "entity salience", "inferred-fact confidence"}
        values = [r["effective"] for r in overview["entities_at_risk"]]
        assert values and values == sorted(values)
        fact = store.add_memory("Dana may be moving to Lisbon", channel="webshop", confidence=0.7)
        inferred = salience_of(store, fact, utcnow() + timedelta(days=15))  # two whole weeks idle
        assert inferred["confidence"]["stored"] == 0.7
        assert inferred["confidence"]["effective"] == pytest.approx(0.7 * 0.95**2, abs=1e-6)


def test_a_memorys_salience_report_has_its_curve_crossing_and_formula(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        memory = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1)[0]
        report = salience_of(store, memory.id, AT)
        model = store.settings.salience
        assert report["id"] == memory.id and report["at"] == AT.isoformat()
        assert report["effective"] == pytest.approx(model.effective(memory, AT), abs=1e-6)
        assert report["formula"] == model.formula() and report["model"] == model.to_dict()
        curve = report["curve"]
        times = [datetime.fromisoformat(p["at"]) for p in curve]
        assert len(curve) == 40 and times == sorted(times)
        assert times[0] <= AT <= times[-1]
        values = [p["effective"] for p in curve]
        assert values == sorted(values, reverse=True)  # salience only decays while nothing reads it
        assert "confidence" not in report or report["confidence"]["stored"] == memory.confidence
        with pytest.raises(NotFoundError):
            salience_of(store, "m-no-such-memory", AT)


def salient(store) -> list:
    """The active memories that keep a salience (workspace markdown keeps none)."""
    return [m for m in store.page(MemoryQuery(), 10_000) if salience_kept(m).kept]


def test_the_overview_counts_every_active_memory_once_and_lists_the_weakest_first(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        overview = salience_overview(store, AT, at_risk=5)
        histogram = overview["histogram"]
        assert len(histogram) == HISTOGRAM_BINS and (histogram[0]["from"], histogram[-1]["to"]) == (0.0, 1.0)
        scored = [m for m in store.page(MemoryQuery(), 10_000) if m.salience is not None]
        assert sum(b["count"] for b in histogram) == len(scored) > 0
        assert overview["without_salience"] == store.count(MemoryQuery()) - len(scored) > 0  # the workspace's files
        at_risk = overview["at_risk"]
        assert len(at_risk) == 5 and [r["effective"] for r in at_risk] == sorted(r["effective"] for r in at_risk)
        assert at_risk[0]["effective"] <= min(
            store.settings.salience.effective(m, AT) for m in scored)
        assert not [r for r in at_risk if r["id"].startswith("md:")]
        assert all({"content", "channel", "cleanup_candidate"} <= set(r) for r in at_risk)
        entities = overview["entities_at_risk"]
        assert len(entities) == 5 and entities[0]["kind"] == "entity"
        weakest = min(store.entities(), key=lambda e: (EntityDecay().effective(e, AT), e.id))
        assert entities[0]["id"] == weakest.id
        later = salience_overview(store, AT + timedelta(days=60))
        assert later["histogram"][0]["count"] >= histogram[0]["count"]  # two months on, more have faded
        assert salience_overview(store)["at"] <= utcnow().isoformat()


def test_markdown_keeps_no_salience_so_its_memories_are_in_no_bin_and_never_at_risk(markdown_only: Path) -> None:
    with open_store(markdown_only) as store:
        model = store.settings.salience
        active = store.page(MemoryQuery(statuses=(Status.ACTIVE,)), 10_000)
        assert active and all(m.salience is None and model.effective(m, AT) is None for m in active)
        assert store.salience_spread(model, AT, HISTOGRAM_BINS, 3) == ([0] * HISTOGRAM_BINS, [])
        overview = salience_overview(store, AT)
        assert overview["without_salience"] == len(active) and overview["at_risk"] == []
        assert not any(model.is_cleanup_candidate(m, AT) for m in active)


def test_a_store_without_memory_db_spreads_its_salience_in_python_over_every_active_memory(
    demo_path: Path, tmp_path: Path
) -> None:
    chroma = tmp_path / "vectors-only"
    shutil.copytree(demo_path / "vectors", chroma / "vectors")
    with open_store(chroma) as store:
        model = store.settings.salience
        active = store.page(MemoryQuery(statuses=(Status.ACTIVE,)), 10_000)
        assert active and all(m.salience is not None for m in active)
        expected = [0] * HISTOGRAM_BINS
        for m in active:
            expected[min(int(model.effective(m, AT) * HISTOGRAM_BINS), HISTOGRAM_BINS - 1)] += 1
        histogram, weakest = store.salience_spread(model, AT, HISTOGRAM_BINS, 3)
        assert histogram == expected
        assert [m.id for m in weakest] == [m.id for m in sorted(active, key=lambda m: (model.effective(m, AT), m.id))[:3]]


def test_markdown_keeps_no_salience_to_spread_or_put_at_risk(markdown_only: Path) -> None:
    with open_store(markdown_only) as store:
        model = store.settings.salience
        assert store.count(MemoryQuery()) > 0
        histogram, weakest = store.salience_spread(model, AT, HISTOGRAM_BINS, 3)
        assert (sum(histogram), weakest) == (0, [])
        memory = store.page(MemoryQuery(), 1)[0]
        report = salience_of(store, memory.id, AT)
        assert (report["effective"], report["stored_salience"], report["curve"]) == (None, None, [])
        assert report["cleanup_candidate"] is None and report["crosses_threshold_at"] is None
        assert report["formula"] == "no salience (workspace markdown keeps none)"


def test_the_spread_of_a_workspace_adds_memory_db_in_sql_to_its_other_parts(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        model = store.settings.salience
        histogram, weakest = store.salience_spread(model, AT, HISTOGRAM_BINS, 4)
        rows = store.count(MemoryQuery(statuses=(Status.ACTIVE,), kinds=(Kind.SQLITE,)))
        assert sum(histogram) == rows  # memory.db's rows, counted in SQL; its markdown files keep no salience
        values = [model.effective(m, AT) for m in weakest]
        assert len(weakest) == 4 and values == sorted(values)
