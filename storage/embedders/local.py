"""A semantic embedder that runs offline: WordLlama's ``l2_supercat`` model, whose weights
(a 32,000-token x 256 static embedding table, 16 MB) and tokenizer ship inside the
``wordllama`` wheel, which every install of mnemoscope has. Nothing is downloaded, ever: the files are
read from the installed package. The wordllama package is not even imported: its loader looks
for the tokenizer in a folder the wheel does not have and would then try Hugging Face, and
its inference module calls logging.basicConfig() on import. The computation is its own:
the tokens' rows of the table, averaged, then normalised.

The model is Matryoshka-trained: its first 64 or 128 dimensions are a smaller model of their
own. Vectors are mean-pooled token embeddings, normalised to unit length.

numpy, tokenizers and the weights load on the first embed, not on import.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import EmbedderError

LOCAL_MODEL = "wordllama-l2_supercat"
LOCAL_DIMENSIONS = 256
LOCAL_SIZES = (64, 128, 256)
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_BATCH = 256

_lock = threading.Lock()
_loaded: dict[str, Any] = {}  # the embedding table and tokenizer, loaded once per process


def available() -> bool:
    """Whether the package with the weights is installed here, its weights and tokenizer in it."""
    return any((f / _WEIGHTS).is_file() and (f / _TOKENIZER).is_file() for f in _folders())


def _folders() -> list[Path]:
    """Where the wordllama package's files may be, found without importing it (its __init__
    imports requests and pydantic, and configures logging): the installed package's folder, or
    in the one-folder bundle, where its data files were copied (packaging/mnemoscope.spec)."""
    bundled = getattr(sys, "_MEIPASS", None)
    if bundled is not None and (Path(bundled) / "wordllama" / _WEIGHTS).is_file():
        return [Path(bundled) / "wordllama"]
    spec = importlib.util.find_spec("wordllama")
    return [Path(f) for f in (spec.submodule_search_locations or [])] if spec is not None else []


def _package_folder() -> Path:
    """The folder holding the weights and the tokenizer."""
    for folder in _folders():
        if (Path(folder) / _WEIGHTS).is_file() and (Path(folder) / _TOKENIZER).is_file():
            return Path(folder)
    raise EmbedderError(
        f"The local embedder {LOCAL_MODEL} found no weights in the installed wordllama package "
        "(it comes with mnemoscope: pip install --force-reinstall 'wordllama>=0.4,<0.5')."
    )


def _model() -> tuple[Any, Any]:
    with _lock:
        if not _loaded:
            if not available():
                raise EmbedderError(
                    f"The local embedder {LOCAL_MODEL} needs the wordllama package, which comes with "
                    "mnemoscope: pip install 'wordllama>=0.4,<0.5'."
                )
            from safetensors import safe_open
            from tokenizers import Tokenizer

            package = _package_folder()
            with safe_open(str(package / _WEIGHTS), framework="np", device="cpu") as f:
                table = f.get_tensor("embedding.weight")
            tokenizer = Tokenizer.from_file(str(package / _TOKENIZER))
            tokenizer.no_truncation()
            tokenizer.no_padding()
            _loaded.update(table=table, tokenizer=tokenizer)
        return _loaded["table"], _loaded["tokenizer"]


class LocalEmbedder:
    """WordLlama l2_supercat, offline, from the weights in the installed package."""

    kind = "local"
    name = LOCAL_MODEL

    def __init__(self, dimensions: int = LOCAL_DIMENSIONS) -> None:
        if dimensions not in LOCAL_SIZES:
            raise EmbedderError(
                f"The local embedder {LOCAL_MODEL} makes vectors of {', '.join(map(str, LOCAL_SIZES))} "
                f"dimensions, not {dimensions}."
            )
        self.dimensions = dimensions
        self.label = (
            f"{LOCAL_MODEL}, {dimensions} dimensions (local, offline: WordLlama's weights shipped in the "
            "wordllama package; semantic)"
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        table, tokenizer = _model()
        out: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            batch = [str(t) for t in texts[start : start + _BATCH]]
            for encoding in tokenizer.encode_batch(batch, add_special_tokens=False):
                ids = encoding.ids
                if ids:
                    vector = table[ids, : self.dimensions].astype(np.float32).mean(axis=0)
                else:
                    vector = np.zeros(self.dimensions, np.float32)
                norm = float(np.linalg.norm(vector))
                if norm == 0.0:
                    vector = np.zeros(self.dimensions, np.float32)
                    vector[0] = 1.0
                else:
                    vector = vector / norm
                out.append(vector.tolist())
        return out
