"""Which embedder a name, a store's settings or a person's choice means, and whether it runs
here: settings keep the endpoint and dimensions, a remote model without an endpoint does not
run, and each wrong choice is one error saying what is missing."""

from __future__ import annotations

import json

import pytest
from mnemoscope.storage.embedders.base import EmbedderError, HashingEmbedder
from mnemoscope.storage.embedders.choice import KINDS, build_embedder, embedder_by_name, make_embedder
from mnemoscope.storage.embedders.openai_compatible import OpenAICompatibleEmbedder
from mnemoscope.storage.settings import StoreSettings

pytest.importorskip("wordllama", reason="the local embedder comes with the install (pyproject dependencies)")
from mnemoscope.storage.embedders.local import LOCAL_MODEL, LocalEmbedder  # noqa: E402


def test_settings_keep_the_endpoint_and_dimensions_and_read_older_ones() -> None:
    settings = StoreSettings(embedder="text-embedding-3-small", embedder_url="http://127.0.0.1:1/v1", embedder_dimensions=512)
    again = StoreSettings.from_dict(json.loads(json.dumps(settings.to_dict())))
    assert again == settings
    older = StoreSettings.from_dict({"embedder": "mnemoscope-hashing-256"})
    assert older.embedder_url is None and older.embedder_dimensions is None
    assert isinstance(make_embedder(older.embedder), HashingEmbedder)
    remote = make_embedder(settings.embedder, settings.embedder_url, settings.embedder_dimensions)
    assert isinstance(remote, OpenAICompatibleEmbedder) and remote.dimensions == 512
    assert make_embedder("text-embedding-3-small") is None  # no endpoint: it does not run here
    assert isinstance(make_embedder(LOCAL_MODEL, dimensions=64), LocalEmbedder)



def test_a_recorded_name_is_run_here_only_offline() -> None:
    hashing = embedder_by_name("mnemoscope-hashing-128")
    assert isinstance(hashing, HashingEmbedder) and hashing.dimensions == 128
    assert isinstance(embedder_by_name(LOCAL_MODEL), LocalEmbedder)
    assert embedder_by_name("text-embedding-3-small") is None
    assert embedder_by_name(None) is None and make_embedder("") is None


def test_a_person_chooses_an_embedder_by_kind() -> None:
    assert KINDS == ("openai-compatible", "local", "hashing")
    remote = build_embedder("openai-compatible", model="nomic-embed-text", url="http://127.0.0.1:11434/v1")
    assert isinstance(remote, OpenAICompatibleEmbedder) and remote.name == "nomic-embed-text"
    local = build_embedder("local", model=LOCAL_MODEL.upper(), dimensions=128)
    assert isinstance(local, LocalEmbedder) and local.dimensions == 128
    hashing = build_embedder("hashing", dimensions=32)
    assert isinstance(hashing, HashingEmbedder) and hashing.dimensions == 32
    assert build_embedder("hashing").dimensions == 256


@pytest.mark.parametrize(("kind", "options", "message"), [
    ("openai-compatible", {"model": "m"}, "needs the endpoint's URL and a model name"),
    ("openai-compatible", {"url": "http://127.0.0.1:1/v1"}, "needs the endpoint's URL and a model name"),
    ("local", {"url": "http://127.0.0.1:1/v1"}, "The local embedder runs here; it takes no URL"),
    ("local", {"model": "all-MiniLM-L6-v2"}, "'all-MiniLM-L6-v2' does not run here"),
    ("hashing", {"model": "m"}, "has no model to choose"),
    ("hashing", {"dimensions": -3}, "must be positive, not -3"),
    ("word2vec", {}, "Unknown embedder kind 'word2vec'; use one of openai-compatible, local, hashing"),
])
def test_a_wrong_choice_says_what_is_wrong(kind: str, options: dict, message: str) -> None:
    with pytest.raises(EmbedderError, match=message):
        build_embedder(kind, **options)
