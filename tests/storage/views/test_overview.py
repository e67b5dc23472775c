"""Views as data (storage/views/overview.py): the scratchpad by session, one memory's or one
entity's salience report, and the salience overview of the whole store."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.errors import NotFoundError
from mnemoscope.storage.salience import EntityDecay
from mnemoscope.storage.timeutil import utcnow
from mnemoscope.storage.views.overview import HISTOGRAM_BINS, salience_of, salience_overview, scratchpad

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


def test_the_scratchpad_is_each_sessions_keys_labelled_with_json_values_decoded(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        sessions = scratchpad(store)
        assert [s["id"] for s in sessions] == [s.id for s in store.sessions()]
        latest = sessions[0]
        assert (latest["id"], latest["channel"], latest["title"]) == ("s-20261023-08", "webshop", "webshop session 9")
        entries = {e["key"]: e for e in latest["entries"]}
        assert entries["delegation_result::dl-008"]["json"] == {"agent": "writer", "status": "ok", "words": 428}
        assert (entries["delegation_result::dl-008"]["pattern"], entries["delegation_result::dl-008"]["pattern_id"]) == (
            "delegation_result", "dl-008")
        assert entries["__pending_subagent_summaries__"]["json"] == ["sa-009"]
        assert entries["__taskspace_hint__"]["json"] is None  # plain text stays text
        assert entries["__taskspace_hint__"]["label"] == "Taskspace path hint"
        only = scratchpad(store, "s-20260911-01")
        assert [s["id"] for s in only] == ["s-20260911-01"]
        assert {e["key"] for e in only[0]["entries"]} == {"__taskspace_hint__", "session_facts",
                                                          "subagent_result::sa-001", "todo"}


def test_scratch_keys_of_a_session_with_no_row_are_shown_not_hidden(demo_path: Path) -> None:
    with sqlite3.connect(demo_path / "memory.db") as con:  # an agent writing without foreign keys
        con.execute("INSERT INTO scratchpad (session_id, key, value, updated_at) VALUES "
                    "('s-gone', 'todo', '{broken json', '2026-10-30T00:00:00+00:00')")
    con.close()
    with open_store(demo_path) as store:
        orphan = scratchpad(store)[-1]
        assert (orphan["id"], orphan["channel"], orphan["title"]) == ("s-gone", None, "(no session row)")
        assert [(e["key"], e["value"], e["json"]) for e in orphan["entries"]] == [("todo", "{broken json", None)]


def test_a_memorys_salience_report_has_its_curve_crossing_and_formula(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        memory = store.page(MemoryQuery(), 1)[0]
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


def test_the_overview_counts_every_active_memory_once_and_lists_the_weakest_first(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        overview = salience_overview(store, AT, at_risk=5)
        histogram = overview["histogram"]
        assert len(histogram) == HISTOGRAM_BINS and (histogram[0]["from"], histogram[-1]["to"]) == (0.0, 1.0)
        assert sum(b["count"] for b in histogram) == store.count(MemoryQuery())
        at_risk = overview["at_risk"]
        assert len(at_risk) == 5 and [r["effective"] for r in at_risk] == sorted(r["effective"] for r in at_risk)
        assert at_risk[0]["effective"] <= min(
            store.settings.salience.effective(m, AT) for m in store.page(MemoryQuery(), 300))
        assert all({"content", "channel", "cleanup_candidate"} <= set(r) for r in at_risk)
        entities = overview["entities_at_risk"]
        assert len(entities) == 5 and entities[0]["kind"] == "entity"
        weakest = min(store.entities(), key=lambda e: (EntityDecay().effective(e, AT), e.id))
        assert entities[0]["id"] == weakest.id
        later = salience_overview(store, AT + timedelta(days=60))
        assert later["histogram"][0]["count"] >= histogram[0]["count"]  # two months on, more have faded
        assert salience_overview(store)["at"] <= utcnow().isoformat()
