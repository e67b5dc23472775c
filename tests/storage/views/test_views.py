"""Salience, timeline bins, graph and search fusion as data."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Entity, Kind, Layer, Memory, MemoryQuery, open_store
from mnemoscope.storage.model import SourceRef, classify_scratch_key
from mnemoscope.storage.salience import EntityDecay, InferredFactDecay, PromotionThresholds, SalienceModel
from mnemoscope.storage.timeutil import utcnow
from mnemoscope.storage.views.graph import graph_view
from mnemoscope.storage.views.search import rrf
from mnemoscope.storage.views.timeline import bin_bounds, timeline

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def memory(**kw) -> Memory:
    base = dict(
        id="m-1", source=SourceRef(Kind.SQLITE, "x"), layer=Layer.SEMANTIC, channel="p",
        content="c", created_at=T0, updated_at=T0, last_accessed=T0,
    )
    return Memory(**{**base, **kw})


def test_decay_halves_in_about_two_weeks_and_access_boosts() -> None:
    model = SalienceModel()
    assert model.half_life_days == pytest.approx(13.51, abs=0.01)
    m = memory(salience=0.8)
    assert model.effective(m, T0) == pytest.approx(0.8)
    assert model.effective(m, T0 + timedelta(days=model.half_life_days)) == pytest.approx(0.4)
    assert model.effective(memory(salience=0.5, access_count=5), T0) == pytest.approx(0.5 * (1 + 0.1 * math.log(6)))


def test_crossing_and_cleanup_dates() -> None:
    model = SalienceModel()
    m = memory(salience=0.8)
    crossing = model.crossing_date(m)
    assert model.effective(m, crossing) == pytest.approx(0.1)
    assert model.cleanup_date(m) == max(crossing, T0 + timedelta(days=30))
    weak = memory(salience=0.12)  # crosses in ~3.6 days, but stays until idle 30 days
    assert model.cleanup_date(weak) == T0 + timedelta(days=30)
    assert not model.is_cleanup_candidate(weak, T0 + timedelta(days=29))
    assert model.is_cleanup_candidate(weak, T0 + timedelta(days=30))
    assert SalienceModel(decay_rate=1.0).crossing_date(m) is None


def test_sql_effective_salience_matches_the_python_model(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        model = store.settings.salience
        at = datetime(2026, 11, 1, 12, tzinfo=timezone.utc)
        lowest = store.workspace.db.lowest_salience(model.decay_rate, model.access_boost, at, 50)
        values = [model.effective(m, at) for m in lowest]
        assert values == sorted(values)
        hist = store.workspace.db.salience_histogram(model.decay_rate, model.access_boost, at, 10)
        expected = [0] * 10
        for m in store.workspace.db.page(MemoryQuery(), 10_000):
            expected[min(int(model.effective(m, at) * 10), 9)] += 1
        assert hist == expected


def test_promotion_thresholds() -> None:
    check = PromotionThresholds().check(memory(confidence=0.9, access_count=5, conversations=1))
    assert check["met"] == {"confidence": True, "access_count": True, "conversations": False}
    assert not check["all_met"]


def entity(**kw) -> Entity:
    return Entity(**{"id": "e-1", "name": "Dana", "type": "person", "salience": 0.8, "last_accessed": T0, **kw})


def test_entity_salience_decays_5_percent_a_day_after_24_hours_idle() -> None:
    """Seed 002: "Entity salience: daily decay for entities not accessed in 24h", rate 0.95,
    and cleanup "deletes entities with salience < 0.1 not accessed in 30 days"."""
    decay = EntityDecay()
    e = entity()
    assert decay.effective(e, T0 + timedelta(hours=23)) == pytest.approx(0.8)  # not yet idle 24 h
    assert decay.effective(e, T0 + timedelta(hours=25)) == pytest.approx(0.8 * 0.95)
    assert decay.effective(e, T0 + timedelta(days=14, hours=3)) == pytest.approx(0.8 * 0.95**14)  # ~half: 0.39
    weak = entity(salience=0.12)
    assert decay.effective(weak, T0 + timedelta(days=4)) < 0.1  # below the threshold after 4 days ...
    assert not decay.is_cleanup_candidate(weak, T0 + timedelta(days=29))  # ... kept until idle 30 days
    assert decay.is_cleanup_candidate(weak, T0 + timedelta(days=30))
    assert not decay.is_cleanup_candidate(entity(), T0 + timedelta(days=30))  # 0.8 x 0.95^30 = 0.17


@pytest.mark.parametrize(("confidence", "certainty", "decays"), [
    (0.70, None, True),  # the seed's calibration of "inferred"
    (0.50, None, True),  # "uncertain"
    (0.85, None, False),  # "implied"
    (0.95, None, False),  # "explicit"
    (0.90, "inferred", True),  # a label says more than the number
    (0.60, "explicit", False),
])
def test_inferred_fact_confidence_decays_weekly(confidence: float, certainty: str | None, decays: bool) -> None:
    """Seed 002: "Fact confidence: weekly decay for inferred facts (slower decay)"."""
    decay = InferredFactDecay()
    fact = memory(confidence=confidence, metadata={"certainty": certainty} if certainty else {})
    assert decay.applies(fact) is decays
    assert decay.effective(fact, T0 + timedelta(days=6)) == pytest.approx(confidence)  # not a whole week yet
    three_weeks = decay.effective(fact, T0 + timedelta(days=21))
    assert three_weeks == pytest.approx(confidence * 0.95**3 if decays else confidence)


def test_salience_of_an_entity_and_of_an_inferred_fact(demo_path: Path) -> None:
    from mnemoscope.storage.views.overview import salience_of, salience_overview

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


def test_rrf_rewards_agreement() -> None:
    a, b, c = memory(id="a"), memory(id="b"), memory(id="c")
    fused = rrf({"keyword": [a, b], "vector": [b, c]})
    assert [h.memory.id for h in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)


@pytest.mark.parametrize(
    "label, bin, start, end",
    [
        ("2026-03-14", "day", datetime(2026, 3, 14), datetime(2026, 3, 15)),
        ("2026-W11", "week", datetime(2026, 3, 9), datetime(2026, 3, 16)),
        ("2020-W53", "week", datetime(2020, 12, 28), datetime(2021, 1, 4)),
        ("2026-12", "month", datetime(2026, 12, 1), datetime(2027, 1, 1)),
    ],
)
def test_bin_bounds(label: str, bin: str, start: datetime, end: datetime) -> None:
    assert bin_bounds(label, bin) == (start.replace(tzinfo=timezone.utc), end.replace(tzinfo=timezone.utc))
    fmt = {"day": "%Y-%m-%d", "week": "%G-W%V", "month": "%Y-%m"}[bin]
    assert start.strftime(fmt) == label and (end - timedelta(seconds=1)).strftime(fmt) == label


def test_clicking_a_bin_filters_to_its_memories(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        data = timeline(store, bin="week", query=MemoryQuery(statuses=()))
        busiest = max(data["bins"], key=lambda b: b["memories"])
        start, end = bin_bounds(busiest["bin"], "week")
        assert store.count(MemoryQuery(statuses=(), since=start, until=end)) == busiest["memories"]


def test_graph_filters_by_relation_type_and_channel(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        graph, _ = graph_view(store, relation_types=["PART_OF"])
        assert {d["type"] for _, _, d in graph.edges(data=True)} == {"PART_OF"}
        web, _ = graph_view(store, channels=["webshop"])
        assert {d["channel"] for _, d in web.nodes(data=True)} == {"webshop"}
        capped, info = graph_view(store, max_nodes=5)
        assert capped.number_of_nodes() == 5 and info["hidden_nodes"] == 13


@pytest.mark.parametrize(
    "key, pattern, captured",
    [
        ("subagent_result::sa-1", "subagent_result", "sa-1"),
        ("delegation_result::x", "delegation_result", "x"),
        ("session_facts", "session_facts", None),
        ("__pending_subagent_summaries__", "pending_subagent_summaries", None),
        ("__taskspace_hint__", "taskspace_hint", None),
        ("__taskspace_label_hint__", "taskspace_label_hint", None),
        ("todo", None, None),
    ],
)
def test_reserved_scratchpad_keys(key: str, pattern: str | None, captured: str | None) -> None:
    assert classify_scratch_key(key)[:2] == (pattern, captured)


def test_change_token_moves_when_an_agent_writes_any_kind(demo_path: Path) -> None:
    import sqlite3
    import time

    with open_store(demo_path) as store:
        token = store.change_token()
        time.sleep(0.01)
        with (demo_path / "MEMORY.md").open("a") as handle:
            handle.write("- an agent appended this\n")
        after_md = store.change_token()
        assert after_md != token
        con = sqlite3.connect(demo_path / "memory.db")
        con.execute("UPDATE memories SET access_count = access_count + 1")
        con.commit()
        con.close()
        after_sql = store.change_token()
        assert after_sql != after_md
        store.workspace.vectors.collection("memories").update(ids=[store.workspace.db.page(MemoryQuery(), 1)[0].id], metadatas=[{"x": 1}])
        assert store.change_token() != after_sql
