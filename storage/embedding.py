"""Embedders Mnemoscope can run offline.

Chroma's default embedding function downloads a model at run time, which is
not possible offline, so storage never calls it: vectors are always passed
explicitly. The one embedder shipped here is lexical and deterministic, for
tests and the demo store, and labelled as such wherever it is reported.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from typing import Protocol

_WORD = re.compile(r"\w+", re.UNICODE)


class Embedder(Protocol):
    name: str
    label: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class HashingEmbedder:
    """Feature hashing of words and character trigrams into a unit vector.

    Deterministic, offline, lexical: texts sharing words land close together.
    Not a semantic model; it exists so tests and the demo have real vectors.
    """

    label = "deterministic hashing embedder (lexical, for tests and the demo; not semantic)"

    def __init__(self, dimensions: int = 256) -> None:
        self.dimensions = dimensions
        self.name = f"mnemoscope-hashing-{dimensions}"

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


def embedder_by_name(name: str | None) -> Embedder | None:
    """The embedder recorded for a collection, if it runs here offline."""
    if not name:
        return None
    m = re.fullmatch(r"mnemoscope-hashing-(\d+)", name)
    if m:
        return HashingEmbedder(int(m.group(1)))
    return None
