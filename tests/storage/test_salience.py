"""Salience (storage/salience.py): memory salience decays and access boosts it, entity salience
decays daily after a day idle, inferred facts' confidence weekly, and the promotion thresholds."""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime, timedelta, timezone

import pytest
from mnemoscope.storage.model import Entity, Kind, Layer, Memory, SourceRef
from mnemoscope.storage.salience import EntityDecay, InferredFactDecay, PromotionThresholds, SalienceModel

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def _memory(salience: float = 0.5, idle_days: float = 0, accesses: int = 0, **fields) -> Memory:
    at = NOW - timedelta(days=idle_days)
    return Memory("m-1", SourceRef(Kind.SQLITE, "memory.db:memories/m-1"), Layer.SEMANTIC, "_global", "text",
                  at, at, at, access_count=accesses, salience=salience, **fields)


def test_salience_halves_in_about_thirteen_and_a_half_idle_days() -> None:
    model = SalienceModel()
    assert model.half_life_days == pytest.approx(13.51, abs=0.01)
    memory = _memory(0.8, idle_days=model.half_life_days)
    assert model.effective(memory, NOW) == pytest.approx(0.4)
    assert model.effective(_memory(0.8), NOW) == pytest.approx(0.8)
    assert model.effective(_memory(0.8, accesses=20), NOW) == pytest.approx(min(1, 0.8 * (1 + 0.1 * math.log(21))))
    assert model.effective(_memory(0.99, accesses=1000), NOW) == 1.0  # capped
    assert SalienceModel(decay_rate=1.0).half_life_days == math.inf
    with pytest.raises(ValueError, match="decay rate must be in"):
        SalienceModel(decay_rate=0)


def test_a_memory_becomes_a_cleanup_candidate_below_the_threshold_and_idle_a_month() -> None:
    model = SalienceModel()
    memory = _memory(0.5, idle_days=0)
    crossing = model.crossing_date(memory)
    assert crossing is not None and model.effective(memory, crossing) == pytest.approx(model.cleanup_threshold)
    assert model.cleanup_date(memory) == max(crossing, NOW + timedelta(days=30))
    assert not model.is_cleanup_candidate(memory, crossing - timedelta(days=1))
    assert model.is_cleanup_candidate(memory, model.cleanup_date(memory))
    faint = _memory(0.05)
    assert model.crossing_date(faint) == NOW and model.cleanup_date(faint) == NOW + timedelta(days=30)
    assert SalienceModel(decay_rate=1.0).cleanup_date(memory) is None
    report = model.report(memory, NOW)
    assert report["effective"] == 0.5 and report["cleanup_candidate"] is False
    assert report["crosses_threshold_at"] == crossing.isoformat()


def test_the_curve_samples_from_start_to_end() -> None:
    model = SalienceModel()
    curve = model.curve(_memory(0.6), NOW, NOW + timedelta(days=60), points=7)
    assert [at for at, _ in curve][::6] == [NOW, NOW + timedelta(days=60)]
    values = [v for _, v in curve]
    assert values == sorted(values, reverse=True) and values[0] == pytest.approx(0.6)
    assert "0.95" in model.formula() and model.to_dict()["half_life_days"] == 13.51


def test_promotion_names_each_threshold_a_memory_misses() -> None:
    thresholds = PromotionThresholds()
    met = thresholds.check(_memory(accesses=5, confidence=0.9, conversations=2))
    assert met["all_met"] and met["failed"] == []
    missed = thresholds.check(_memory(accesses=1, confidence=0.5, conversations=2))
    assert not missed["all_met"] and missed["failed"] == ["confidence 0.5 < 0.85", "access_count 1 < 5"]
    assert missed["met"] == {"confidence": False, "access_count": False, "conversations": True}


def test_entities_decay_once_per_whole_idle_day_and_are_cleaned_up_after_a_month() -> None:
    decay = EntityDecay()
    entity = Entity("e-1", "Dana", "person", salience=0.5, last_accessed=NOW - timedelta(days=2, hours=20))
    assert decay.effective(entity, NOW) == pytest.approx(0.5 * 0.95**2)
    old = Entity("e-2", "Old", "thing", salience=0.2, last_accessed=NOW - timedelta(days=40))
    assert decay.is_cleanup_candidate(old, NOW)  # 0.2 x 0.95^40 < 0.1
    assert not decay.is_cleanup_candidate(Entity("e-3", "Never read", "thing", salience=0.01), NOW)


def test_only_inferred_facts_lose_confidence_a_week_at_a_time() -> None:
    decay = InferredFactDecay()
    inferred = _memory(idle_days=15, confidence=0.7)
    assert decay.applies(inferred) and decay.effective(inferred, NOW) == pytest.approx(0.7 * 0.95**2)
    explicit = _memory(idle_days=15, confidence=0.95)
    assert not decay.applies(explicit) and decay.effective(explicit, NOW) == 0.95
    labelled = _memory(idle_days=15, confidence=0.95, metadata={"certainty": "Uncertain"})
    assert decay.applies(labelled)
    assert not decay.applies(_memory(confidence=0.3, metadata={"certainty": "explicit"}))

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


def test_a_salience_the_owner_decays_is_shown_as_it_is_and_one_not_kept_is_absent() -> None:
    from mnemoscope.storage.salience import (
        MNEMOSCOPE_DECAY,
        NOT_KEPT,
        OWNERS_DECAY,
        declare_salience,
        salience_kept,
        shown_salience,
    )

    declare_salience("salience-test-owner", OWNERS_DECAY, "the test agent's score")
    declare_salience("salience-test-none", NOT_KEPT, "test files")
    with pytest.raises(ValueError, match="unknown salience decay"):
        declare_salience("salience-test-bad", "mine")
    model = SalienceModel()
    mine = _memory(0.05, idle_days=400)
    owners = dataclasses.replace(mine, source=SourceRef(Kind.SQLITE, "x", format="salience-test-owner"))
    none = dataclasses.replace(mine, source=SourceRef(Kind.MARKDOWN, "y", format="salience-test-none"))
    assert salience_kept(mine).decay == MNEMOSCOPE_DECAY and model.is_cleanup_candidate(mine, NOW)
    # the owner's score, a year idle: as it is, once; no date or cleanup call of this model's
    assert model.effective(owners, NOW) == 0.05 and model.curve(owners, NOW, NOW + timedelta(days=9)) == []
    report = model.report(owners, NOW)
    assert (report["effective"], report["stored_salience"], report["decay"]) == (0.05, 0.05, OWNERS_DECAY)
    assert (report["crosses_threshold_at"], report["cleanup_candidate_from"], report["cleanup_candidate"]) == (
        None, None, None)
    assert model.formula_of(owners) == "the test agent's score: shown as the owner keeps it, not decayed again"
    # none kept: no value at all
    assert (shown_salience(none), model.effective_shown(none, NOW)) == (None, None)
    report = model.report(none, NOW)
    assert (report["effective"], report["stored_salience"], report["cleanup_candidate"]) == (None, None, None)
    assert model.formula_of(none) == "no salience (test files keeps none)"
