"""Embedders: what turns a text query (or an edited memory) into a vector, and whether it
may be used on a store's vectors.

Three kinds run here, each configured per store (StoreSettings.embedder, embedder_url,
embedder_dimensions):

- an OpenAI-compatible embeddings endpoint (openai_compatible.py): OpenAI, Azure, Ollama,
  vLLM, LM Studio; the model and dimensions are the store's, the API key comes from the
  keyring (never from settings);
- a local model whose weights ship inside a package (local.py; every install has it, and new
  workspaces and the demo embed with it): nothing is downloaded at run time;
- ``HashingEmbedder``: lexical and deterministic, for tests, and
  labelled as such wherever it is reported.

Chroma's default embedding function downloads a model at run time, which is not possible
offline, so storage never calls it: vectors are always passed explicitly.

A store's vectors were written by some model; where the store records which (Mnemoscope's
own collection metadata, a Chroma collection's embedding function configuration) and always
by their dimension, ``check_match`` refuses an embedder whose model or dimension differs,
naming both: a query vector from another model ranks nothing meaningfully.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import StoreError

_WORD = re.compile(r"\w+", re.UNICODE)
HASHING_PREFIX = "mnemoscope-hashing-"
# The collection metadata key naming the model of Mnemoscope's own vectors (native/chroma/local.py
# and server.py write it; spelled here so that this module imports no Chroma source).
EMBEDDER_KEY = "mnemoscope:embedder"


class EmbedderError(StoreError):
    """An embedder could not embed: its endpoint is unreachable, refused the key, answered
    vectors of another dimension, or its package is not installed. The environment's fault."""

    exit_code = 2


class EmbedderMismatchError(StoreError):
    """The embedder asked for is not the one whose vectors the store holds (model or dimension)."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """The model's name, as recorded beside the vectors it wrote."""
        ...

    @property
    def label(self) -> str:
        """What to tell a person: the model, where it runs, and whether it is semantic."""
        ...

    @property
    def dimensions(self) -> int | None:
        """The length of its vectors (None: not known until the first answer)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class HashingEmbedder:
    """Feature hashing of words and character trigrams into a unit vector.

    Deterministic, offline, lexical: texts sharing words land close together.
    Not a semantic model; it exists so tests and the demo have real vectors.
    """

    label = "deterministic hashing embedder (lexical, for tests and the demo; not semantic)"
    kind = "hashing"

    def __init__(self, dimensions: int = 256) -> None:
        self.dimensions = dimensions
        self.name = f"{HASHING_PREFIX}{dimensions}"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._embed_one(t) for t in texts]

    def _embed_one(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        words = [w.casefold() for w in _WORD.findall(text)]
        features = words + [
            f"#{w[i:i + 3]}" for w in words if len(w) > 3 for i in range(len(w) - 2)
        ]
        for feature in features:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            sign = 1.0 if digest[4] & 1 else -1.0
            vector[index] += sign * (2.0 if not feature.startswith("#") else 0.5)
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0:
            vector[0] = 1.0
            return vector
        return [v / norm for v in vector]


# -- what a store records about the model that wrote its vectors ---------------------------

# Chroma's embedding functions (chromadb.utils.embedding_functions), by the name a collection
# records, whose model is fixed rather than in their config.
_CHROMA_FIXED_MODELS = {"default": ("all-MiniLM-L6-v2", 384), "onnx_mini_lm_l6_v2": ("all-MiniLM-L6-v2", 384)}


@dataclass(frozen=True)
class RecordedEmbedder:
    """What a collection says about the model that wrote its vectors: its name when the
    store records one, the vectors' dimension when it holds any."""

    collection: str
    model: str | None = None
    dimensions: int | None = None
    recorded: str | None = None  # as the store spells it, e.g. "openai: text-embedding-3-small"

    def describe(self) -> str:
        parts = [self.model or "an unrecorded model"]
        if self.dimensions:
            parts.append(f"{self.dimensions} dimensions")
        return f"{', '.join(parts)} (collection {self.collection!r})"

    def to_dict(self) -> dict[str, Any]:
        return {"collection": self.collection, "model": self.model, "dimensions": self.dimensions,
                "recorded": self.recorded}


def chroma_embedding_function(configuration: Mapping[str, Any]) -> dict[str, Any] | None:
    """The embedding function a Chroma collection's configuration records: Chroma 1.x keeps
    it in the schema's #embedding vector index, earlier versions at the top level."""
    keys = (configuration.get("schema") or {}).get("keys") or {}
    index = ((keys.get("#embedding") or {}).get("float_list") or {}).get("vector_index") or {}
    for ef in ((index.get("config") or {}).get("embedding_function"), configuration.get("embedding_function")):
        if isinstance(ef, dict) and ef.get("type") == "known" and ef.get("name"):
            return ef
    return None


def recorded_in_chroma(
    collection: str, metadata: Mapping[str, Any], configuration: Mapping[str, Any], dimensions: int | None
) -> RecordedEmbedder:
    """What a Chroma collection records: Mnemoscope's own metadata key, else the embedding
    function in its configuration (only its model and dimensions are read: an endpoint
    recorded there is never called)."""
    own = metadata.get(EMBEDDER_KEY)
    if isinstance(own, str) and own:
        return RecordedEmbedder(collection, own, dimensions, own)
    ef = chroma_embedding_function(configuration)
    if ef is None:
        return RecordedEmbedder(collection, None, dimensions, None)
    name = str(ef["name"])
    raw_config = ef.get("config")
    config: dict[str, Any] = raw_config if isinstance(raw_config, dict) else {}
    model, fixed_dims = _CHROMA_FIXED_MODELS.get(name, (None, None))
    model = model or config.get("model_name") or config.get("model") or config.get("model_id")
    dims = dimensions or config.get("dimensions") or fixed_dims
    return RecordedEmbedder(
        collection, str(model) if model else None, int(dims) if dims else None,
        f"Chroma embedding function {name!r}" + (f": {model}" if model else ""),
    )


def same_model(a: str, b: str) -> bool:
    """Whether two spellings name one model: case aside, a provider prefix
    ("sentence-transformers/all-MiniLM-L6-v2") and Ollama's ":latest" tag aside."""

    def bare(name: str) -> str:
        name = name.strip().casefold().rsplit("/", 1)[-1]
        return name[: -len(":latest")] if name.endswith(":latest") else name

    return bare(a) == bare(b)


def check_match(embedder: Embedder, recorded: Sequence[RecordedEmbedder]) -> None:
    """Refuse an embedder whose model or dimension differs from the vectors' a collection
    holds (a collection without vectors records nothing to differ from)."""
    for rec in recorded:
        if rec.dimensions is None:
            continue  # no vectors yet: whatever wrote its metadata, nothing to compare with
        dims = embedder.dimensions
        model_differs = rec.model is not None and not same_model(rec.model, embedder.name)
        dims_differ = dims is not None and dims != rec.dimensions
        if model_differs or dims_differ:
            what = " and ".join(w for w, differs in (("model", model_differs), ("dimension", dims_differ)) if differs)
            ours = embedder.name + (f", {dims} dimensions" if dims else "")
            raise EmbedderMismatchError(
                f"The embedder {ours} is not the one that wrote the vectors of this store: "
                f"they are from {rec.describe()}; the {what} differ{'s' if ' and ' not in what else ''}. "
                "Choose the store's own model (mnemoscope embedder PATH ...), or search by keyword."
            )


def recorded_embedders(sources: Sequence[Any]) -> list[RecordedEmbedder]:
    """What every vector collection of these sources records about its model.

    Chroma directories (ours, mem0's, a crew's) are read through their collection_info();
    other vector stores say what they can through embedding_function_info()."""
    found: list[RecordedEmbedder] = []
    for source in sources:
        chroma = source if hasattr(source, "collection_info") else getattr(source, "vectors", None)
        for name in source.collections():
            if hasattr(source, "recorded_embedder"):  # a Chroma server: what its collection records
                found.append(source.recorded_embedder(name))
                continue
            if chroma is not None and hasattr(chroma, "collection_info") and hasattr(chroma, "files"):
                col = chroma.collection_info(name)
                dims = chroma.files.dimension(col) if chroma.record_count(name) else None
                found.append(recorded_in_chroma(name, col.metadata, col.configuration, dims))
                continue
            info = source.embedding_function_info(name)
            dims = info.get("dimensions")
            text = str(info.get("recorded_embedding_function") or "")
            if dims is None and (m := re.search(r"(\d+) dimensions", text)):
                dims = int(m.group(1))
            found.append(RecordedEmbedder(name, None, int(dims) if dims else None, text or None))
    return found
