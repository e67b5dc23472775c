"""Which embedder a name, a store's settings or a person's choice means, and whether it runs here.
Imports the local model and the OpenAI-compatible client only when one is asked for."""

from __future__ import annotations

import re

from .base import HASHING_PREFIX, Embedder, EmbedderError, HashingEmbedder, same_model


def make_embedder(name: str | None, url: str | None = None, dimensions: int | None = None) -> Embedder | None:
    """The embedder a store's settings (or a collection's record) name, if it runs here.

    With url: that model behind an OpenAI-compatible endpoint (nothing is sent until it
    embeds). Without: the hashing embedder, or the local model when its package is
    installed; None for any other model (a remote one nobody configured an endpoint for).
    """
    if not name:
        return None
    if url:
        from .openai_compatible import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(url, name, dimensions)
    m = re.fullmatch(re.escape(HASHING_PREFIX) + r"(\d+)", name)
    if m:
        return HashingEmbedder(int(m.group(1)))
    from . import local

    if name == local.LOCAL_MODEL and local.available():
        return local.LocalEmbedder(dimensions or local.LOCAL_DIMENSIONS)
    return None


def default_embedder() -> Embedder:
    """The embedder a new workspace and the demo embed with: the local semantic model, which
    every install has (the hashing one where its package was left out)."""
    from . import local

    return local.LocalEmbedder() if local.available() else HashingEmbedder()


def embedder_by_name(name: str | None) -> Embedder | None:
    """The embedder recorded for a collection, if it runs here offline (no endpoint is ever
    taken from a store's files: it is configured by the person, per store)."""
    return make_embedder(name)


KINDS = ("openai-compatible", "local", "hashing")


def build_embedder(
    kind: str, *, model: str | None = None, url: str | None = None, dimensions: int | None = None
) -> Embedder:
    """An embedder a person chose: kind is one of KINDS; an endpoint needs url and model; the
    local model and the hashing one take dimensions only. EmbedderError says what is missing."""
    if kind == "openai-compatible":
        if not url or not model:
            raise EmbedderError("An OpenAI-compatible embedder needs the endpoint's URL and a model name.")
        from .openai_compatible import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(url, model, dimensions)
    if url:
        raise EmbedderError(f"The {kind} embedder runs here; it takes no URL.")
    if kind == "local":
        from . import local

        if model and not same_model(model, local.LOCAL_MODEL):
            raise EmbedderError(
                f"The local embedder is {local.LOCAL_MODEL}; {model!r} does not run here "
                "(serve it from an OpenAI-compatible endpoint instead)."
            )
        if not local.available():
            raise EmbedderError(
                f"The local embedder {local.LOCAL_MODEL} needs the wordllama package: "
                "pip install 'wordllama>=0.4,<0.5' (it comes with mnemoscope)."
            )
        return local.LocalEmbedder(dimensions or local.LOCAL_DIMENSIONS)
    if kind == "hashing":
        if model:
            raise EmbedderError("The hashing embedder has no model to choose; give --dimensions only.")
        if dimensions is not None and dimensions <= 0:
            raise EmbedderError(f"Embedding dimensions must be positive, not {dimensions}.")
        return HashingEmbedder(dimensions or 256)
    raise EmbedderError(f"Unknown embedder kind {kind!r}; use one of {', '.join(KINDS)}.")
