"""A real OpenAI-compatible embeddings server on 127.0.0.1, for the embedder tests.

``POST /v1/embeddings`` with ``{"model", "input", "dimensions"?}`` answers real embeddings,
computed by the local model (WordLlama's l2_supercat, from the wordllama package): a real
model behind a real HTTP endpoint, in a thread of the test process, on a free port. It
requires ``Authorization: Bearer <key>`` and answers errors as OpenAI does (401 for a wrong
key, 404 for a model it does not serve, 400 for a dimension it cannot make).

    with EmbeddingServer(key="sk-test") as server:
        server.base_url  # "http://127.0.0.1:PORT/v1"
        server.requests  # the bodies it was sent, in order
"""

from __future__ import annotations

import array
import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mnemoscope.storage.embedders.local import LOCAL_MODEL, LOCAL_SIZES, LocalEmbedder


class EmbeddingServer:
    def __init__(self, key: str, *, model: str = LOCAL_MODEL, honour_dimensions: bool = True) -> None:
        self.key = key
        self.model = model
        self.honour_dimensions = honour_dimensions  # False: answers its full size, as some servers do
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> EmbeddingServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet: pytest shows failures, not traffic
                pass

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, code: str) -> None:
                self._answer(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}})

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                owner.headers.append(dict(self.headers.items()))
                if self.path.rstrip("/") != "/v1/embeddings":
                    return self._error(404, f"No route {self.path}", "not_found")
                if self.headers.get("Authorization") != f"Bearer {owner.key}":
                    given = self.headers.get("Authorization", "")
                    # As OpenAI does: the key it got, echoed back (a client must not repeat it).
                    return self._error(401, f"Incorrect API key provided: {given.removeprefix('Bearer ')}",
                                       "invalid_api_key")
                try:
                    body = json.loads(raw)
                except ValueError:
                    return self._error(400, "The body is not JSON", "invalid_json")
                owner.requests.append(body)
                if body.get("model") != owner.model:
                    return self._error(404, f"The model `{body.get('model')}` does not exist", "model_not_found")
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                dims = body.get("dimensions") if owner.honour_dimensions else None
                if dims is not None and dims not in LOCAL_SIZES:
                    return self._error(400, f"dimensions must be one of {LOCAL_SIZES}", "invalid_dimensions")
                vectors: list[Any] = LocalEmbedder(dims or max(LOCAL_SIZES)).embed(texts)
                if body.get("encoding_format") == "base64":  # what the openai package asks for
                    vectors = [base64.b64encode(array.array("f", v).tobytes()).decode() for v in vectors]
                self._answer(200, {
                    "object": "list",
                    "model": owner.model,
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0},
                })

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedding-server", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


def closed_port_url() -> str:
    """The URL of a port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
