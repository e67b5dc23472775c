"""An OpenAI-compatible embeddings endpoint as an embedder: ``POST {base}/embeddings`` with
``{"model", "input", "dimensions"?}``, which OpenAI, Azure OpenAI, Ollama, vLLM, LM Studio
and text-embeddings-inference all answer. Standard library only (urllib).

The API key is read when a request is sent, never kept in settings, the journal, a log or an
error message: from the OS keyring as the secret ``embeddings:<base url>`` (storage/
credentials.py), else from the ``MNEMOSCOPE_EMBEDDINGS_API_KEY`` environment variable; an
endpoint without a key (a local Ollama) is sent none.

Every failure is one EmbedderError: the endpoint cannot be reached or does not answer in
time, refuses the key, does not know the model, or answers vectors of another dimension.
"""

from __future__ import annotations

import array
import base64
import binascii
import ipaddress
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from .. import credentials
from ..errors import StoreError
from .base import EmbedderError

KEY_ENV = "MNEMOSCOPE_EMBEDDINGS_API_KEY"
TIMEOUT = 60.0  # seconds for one request
BATCH = 64  # texts per request (OpenAI takes up to 2048; local servers prefer fewer)


def secret_name(base_url: str) -> str:
    """The keyring name the endpoint's API key is kept under (as `mnemoscope credentials` names it)."""
    return credentials.credential_name(f"embeddings:{normalized_url(base_url)}")


def normalized_url(base_url: str) -> str:
    """The base URL as stored: http(s), no credentials in it, no trailing slash."""
    url = base_url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EmbedderError(f"Not an http(s) URL for an embeddings endpoint: {_redacted(url)!r}.")
    if parts.username or parts.password:
        raise EmbedderError(
            "An embeddings URL must not hold credentials; the API key is kept in the keyring "
            f"(as {secret_name(_without_userinfo(parts))!r}) or in {KEY_ENV}."
        )
    return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/")))


def _without_userinfo(parts: urllib.parse.SplitResult) -> str:
    host = parts.hostname or ""
    netloc = f"[{host}]" if ":" in host else host
    if parts.port:
        netloc += f":{parts.port}"
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, path=parts.path.rstrip("/")))


def _redacted(url: str) -> str:
    return credentials.redacted(url)


def api_key(base_url: str) -> str | None:
    """The endpoint's API key: the keyring's, else the environment's, else none."""
    try:
        value = credentials.secret(secret_name(base_url))
    except StoreError:  # no usable keyring here: the environment may still hold one
        value = None
    if value is not None:
        return value.reveal()
    return os.environ.get(KEY_ENV) or None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAICompatibleEmbedder:
    """One model behind an OpenAI-compatible endpoint. Nothing is sent until embed()."""

    kind = "openai-compatible"

    def __init__(
        self, base_url: str, model: str, dimensions: int | None = None, *, timeout: float = TIMEOUT,
        batch: int = BATCH,
    ) -> None:
        if not model:
            raise EmbedderError("An OpenAI-compatible embedder needs a model name.")
        if dimensions is not None and dimensions <= 0:
            raise EmbedderError(f"Embedding dimensions must be positive, not {dimensions}.")
        self.base_url = normalized_url(base_url)
        self.name = model
        self.requested_dimensions = dimensions
        self.dimensions: int | None = dimensions
        self.timeout = timeout
        self.batch = max(1, batch)
        parts = urllib.parse.urlsplit(self.base_url)
        self._endpoint = urllib.parse.urlunsplit(parts._replace(path=parts.path + "/embeddings"))
        self._azure = (parts.hostname or "").endswith(".azure.com")
        # A loopback endpoint is asked directly, never through a proxy from the environment.
        handlers = [urllib.request.ProxyHandler({})] if _is_loopback(parts.hostname or "") else []
        self._opener = urllib.request.build_opener(*handlers)

    @property
    def label(self) -> str:
        dims = f", {self.dimensions} dimensions" if self.dimensions else ""
        return f"{self.name}{dims} (OpenAI-compatible endpoint {self.base_url}; semantic)"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch):
            out += self._request([str(t) for t in texts[start : start + self.batch]])
        return out

    def _request(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.name, "input": texts}
        if self.requested_dimensions is not None:
            body["dimensions"] = self.requested_dimensions
        key = api_key(self.base_url)
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
            if self._azure:
                headers["api-key"] = key
        request = urllib.request.Request(self._endpoint, data=json.dumps(body).encode(), headers=headers, method="POST")
        where = f"The embeddings endpoint {self.base_url}"
        try:
            with self._opener.open(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise self._refusal(exc, key) from None
        except TimeoutError:
            raise EmbedderError(f"{where} did not answer within {self.timeout:g} s.") from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, TimeoutError):
                raise EmbedderError(f"{where} did not answer within {self.timeout:g} s.") from None
            text = reason.strerror if isinstance(reason, OSError) and reason.strerror else str(reason)
            raise EmbedderError(f"{where} could not be reached ({_scrub(text, key)}).") from None
        except OSError as exc:  # a connection reset mid-answer, and the like
            raise EmbedderError(f"{where} could not be reached ({_scrub(str(exc), key)}).") from None
        return self._vectors(raw, len(texts))

    def _refusal(self, exc: urllib.error.HTTPError, key: str | None) -> EmbedderError:
        where = f"The embeddings endpoint {self.base_url}"
        if exc.code in (401, 403):
            how = (
                f"store the key in the keyring as {secret_name(self.base_url)!r} or set {KEY_ENV}"
            )
            if key:
                return EmbedderError(f"{where} refused the API key (HTTP {exc.code}); {how}.")
            return EmbedderError(f"{where} needs an API key (HTTP {exc.code}); {how}.")
        try:
            detail = _error_message(exc.read())
        except OSError:
            detail = ""
        detail = _scrub(detail, key)
        if exc.code == 404:
            return EmbedderError(
                f"{where} does not serve model {self.name!r} at {self._endpoint} (HTTP 404"
                + (f": {detail}" if detail else "") + ")."
            )
        return EmbedderError(f"{where} answered HTTP {exc.code}" + (f": {detail}" if detail else "") + ".")

    def _vectors(self, raw: bytes, expected: int) -> list[list[float]]:
        where = f"The embeddings endpoint {self.base_url}"
        try:
            data = json.loads(raw)
            items = sorted(data["data"], key=lambda item: item.get("index", 0))
            vectors = [_floats(item["embedding"]) for item in items]
        except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
            raise EmbedderError(f"{where} did not answer with embeddings (not the OpenAI embeddings format).") from None
        if len(vectors) != expected:
            raise EmbedderError(f"{where} answered {len(vectors)} embeddings for {expected} texts.")
        for vector in vectors:
            if self.dimensions is None:
                self.dimensions = len(vector)
            if len(vector) != self.dimensions:
                raise EmbedderError(
                    f"{where} answered vectors of {len(vector)} dimensions for model {self.name!r}, "
                    f"where {self.dimensions} were expected"
                    + (" (it may not support the dimensions parameter)" if self.requested_dimensions else "")
                    + "."
                )
        return vectors


def _floats(embedding: Any) -> list[float]:
    """An embedding as JSON numbers, or as base64 of little-endian float32 (encoding_format
    "base64", which some servers answer whatever was asked)."""
    if isinstance(embedding, str):
        packed = array.array("f", base64.b64decode(embedding, validate=True))
        if sys.byteorder != "little":
            packed.byteswap()
        return [float(x) for x in packed]
    return [float(x) for x in embedding]


def _error_message(raw: bytes) -> str:
    """The error an OpenAI-style server explains itself with, shortened."""
    try:
        data = json.loads(raw)
        error = data.get("error", data) if isinstance(data, dict) else data
        text = error.get("message", "") if isinstance(error, dict) else str(error)
    except ValueError:
        text = raw.decode("utf-8", "replace")
    text = " ".join(str(text).split())
    return text[:200] + ("…" if len(text) > 200 else "")


def _scrub(text: str, key: str | None) -> str:
    """Never repeat the key, nor most of it, even when a server echoes it back."""
    if key:
        text = text.replace(key, "***")
        if len(key) > 12:
            for part in (key[:8], key[-6:]):
                text = text.replace(part, "***")
    return text
