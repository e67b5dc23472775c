"""The vector floors in storage/views/relevance.py are what fitting them again gives: each
embedder that runs offline embeds the fitting pairs (tests/quality/fit_pairs.json) and
relevance.fit_floor finds its z floor, cosine floor and noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mnemoscope.storage.embedders.base import HashingEmbedder
from mnemoscope.storage.embedders.local import LocalEmbedder
from mnemoscope.storage.views.relevance import FLOORS, fit_floor, floor_for

PAIRS = json.loads((Path(__file__).parent / "fit_pairs.json").read_text(encoding="utf-8"))["pairs"]


@pytest.mark.parametrize("embedder", [LocalEmbedder(256), LocalEmbedder(128), LocalEmbedder(64), HashingEmbedder(256)],
                         ids=lambda e: f"{e.name}-{e.dimensions}")
def test_each_fitted_floor_is_what_the_fitting_pairs_give(embedder) -> None:
    questions = embedder.embed([q for q, _fact in PAIRS])
    facts = embedder.embed([fact for _q, fact in PAIRS])
    fitted = fit_floor(questions, facts)
    kept = FLOORS[(embedder.name, embedder.dimensions)]
    assert (fitted.z, fitted.cosine, fitted.noise) == (kept.z, kept.cosine, kept.noise)


def test_an_embedder_without_fitted_floors_says_so() -> None:
    assert floor_for("text-embedding-3-small", 1536).fitted.startswith("not fitted")
    assert floor_for(HashingEmbedder(64).name, 64) is FLOORS[(HashingEmbedder(256).name, 256)]
