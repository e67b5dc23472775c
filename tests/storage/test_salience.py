"""Salience (storage/salience.py): memory salience decays and access boosts it, entity salience
decays daily after a day idle, inferred facts' confidence weekly, and the promotion thresholds."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest
from mnemoscope.storage import Entity, Kind, Layer, Memory
from mnemoscope.storage.model import SourceRef
from mnemoscope.storage.salience import EntityDecay, InferredFactDecay, PromotionThresholds, SalienceModel

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
