"""A store's settings: defaults, a round trip through the journal, older dictionaries read with
defaults, and never a secret."""

from __future__ import annotations

import json
from pathlib import Path

from mnemoscope.storage import open_store
from mnemoscope.storage.salience import EntityDecay, InferredFactDecay, PromotionThresholds, SalienceModel
from mnemoscope.storage.settings import SETTINGS_KEY, StoreSettings


def test_settings_round_trip_through_json_every_field_kept() -> None:
    settings = StoreSettings(
        salience=SalienceModel(decay_rate=0.9, access_boost=0.2), promotion=PromotionThresholds(confidence=0.7),
        embedder="text-embedding-3-small", entity_decay=EntityDecay(rate=0.8),
        fact_decay=InferredFactDecay(labels=("guessed",)), embedder_url="http://127.0.0.1:1/v1",
        embedder_dimensions=512, vectors_url="http://127.0.0.1:8000",
    )
    assert StoreSettings.from_dict(json.loads(json.dumps(settings.to_dict()))) == settings


def test_missing_and_partial_dictionaries_read_with_defaults() -> None:
    assert StoreSettings.from_dict(None) == StoreSettings() == StoreSettings.from_dict({})
    partial = StoreSettings.from_dict({"salience": {"decay_rate": 0.5}})
    assert partial.salience.decay_rate == 0.5 and partial.salience.access_boost == SalienceModel().access_boost
    assert partial.promotion == PromotionThresholds() and partial.embedder is None


def test_saved_settings_are_the_stores_and_kept_in_its_journal(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store.settings.embedder == "wordllama-l2_supercat"  # the demo's, recorded when it was made
        changed = StoreSettings.from_dict({**store.settings.to_dict(), "salience": {"decay_rate": 0.8}})
        store.save_settings(changed)
    with open_store(demo_path, read_only=True) as store:
        assert store.settings == changed
        assert store.read_setting(SETTINGS_KEY)["salience"]["decay_rate"] == 0.8
