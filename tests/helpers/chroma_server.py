"""A real Chroma server (``chroma run``, the script installed beside this Python) on 127.0.0.1.

    from helpers.chroma_server import chroma_server  # noqa: F401 (a session fixture)

    def test_x(chroma_server):
        chroma_server.url        # "http://127.0.0.1:PORT"
        client = chroma_server.client()  # a chromadb.HttpClient (close it, or let reset() do)
        chroma_server.reset()    # delete every collection

One server per test session, on a free port, persisting into a temp folder. It is stopped at
the end (terminate, then kill), and on Linux it is told to die with the test process too
(PR_SET_PDEATHSIG), so a killed run leaves no server behind. The tests using it skip, with
the reason printed, only if it truly cannot start.
"""

from __future__ import annotations

import contextlib
import ctypes
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


@dataclass
class ChromaServer:
    host: str
    port: int
    path: Path
    log: Path
    process: subprocess.Popen[bytes]
    _clients: list[Any] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def client(self, **kwargs: Any) -> Any:
        """A chromadb.HttpClient on the server (closed by reset() and at the end)."""
        import chromadb
        from chromadb.config import Settings

        client = chromadb.HttpClient(
            host=self.host, port=self.port, settings=Settings(anonymized_telemetry=False), **kwargs
        )
        self._clients.append(client)
        return client

    def reset(self) -> None:
        """Delete every collection of the default database, and close the clients handed out."""
        client = self.client()
        for collection in client.list_collections():
            client.delete_collection(collection.name)
        self.close_clients()

    def close_clients(self) -> None:
        while self._clients:
            self._clients.pop().close()

    def alive(self) -> bool:
        return self.process.poll() is None and _heartbeat(self.url)


class TokenGate:
    """A loopback reverse proxy in front of the real server that asks for a bearer token, as an
    authenticating gateway in front of a team's Chroma does (`chroma run` itself checks none):
    401 without the right ``Authorization: Bearer <token>``, else the server's own answer.

        with TokenGate(chroma_server.url, "tok") as gate:
            gate.url  # "http://127.0.0.1:PORT"
    """

    def __init__(self, target: str, token: str) -> None:
        self.target, self.token = target, token
        self.refused = 0
        self._server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> TokenGate:
        import httpx

        gate = self
        upstream = httpx.Client(base_url=self.target, timeout=30)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Authorization") != f"Bearer {gate.token}":
                    gate.refused += 1
                    status, content, kind = 401, b'{"error":"unauthorized"}', "application/json"
                else:
                    headers = {"Content-Type": self.headers.get("Content-Type") or "application/json"}
                    answer = upstream.request(self.command, self.path, content=body, headers=headers)
                    status, content = answer.status_code, answer.content
                    kind = answer.headers.get("Content-Type", "application/json")
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _relay  # noqa: N815 (http.server's names)

        self._upstream = upstream
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
        self._upstream.close()


def chroma_script() -> Path:
    return Path(sys.executable).with_name("chroma")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _heartbeat(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2) as answer:
            return "nanosecond heartbeat" in json.loads(answer.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _die_with_parent() -> None:  # runs in the child before exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # its own session: only what it started
        process.wait(STOP_TIMEOUT)


@contextlib.contextmanager
def running_chroma_server(folder: Path) -> Iterator[ChromaServer | str]:
    """A started server, or the reason it could not start (a string)."""
    script = chroma_script()
    if not script.exists():
        yield f"no chroma script beside {sys.executable}"
        return
    folder.mkdir(parents=True, exist_ok=True)
    reason = ""
    for attempt in range(3):  # a port taken between choosing and binding: try another
        port = _free_port()
        data, log = folder / f"data-{attempt}", folder / f"chroma-{attempt}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(script), "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
                env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
            )
        server = ChromaServer("127.0.0.1", port, data, log, process)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and process.poll() is None and not _heartbeat(server.url):
                time.sleep(0.1)
            if process.poll() is None and _heartbeat(server.url):
                try:
                    yield server
                finally:
                    server.close_clients()
                return
            tail = log.read_text(errors="replace")[-800:]
            reason = (
                f"chroma run exited with {process.returncode}" if process.poll() is not None
                else f"chroma run did not answer its heartbeat within {START_TIMEOUT:g} s"
            ) + f"; its log ends: {tail}"
        finally:
            _stop(process)
    yield reason


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    with running_chroma_server(tmp_path_factory.mktemp("chroma-server")) as server:
        if isinstance(server, str):
            print(f"\nSKIP: no Chroma server: {server}", file=sys.stderr)
            pytest.skip(f"no Chroma server: {server}")
        yield server


def copy_to_server(vectors: Path, server: ChromaServer, scratch: Path) -> list[str]:
    """Every collection of a local Chroma directory, record for record, onto the server."""
    import chromadb
    from chromadb.config import Settings

    copy = scratch / "vectors-copy"
    shutil.copytree(vectors, copy)  # chromadb's local client writes as it opens: read a copy
    local = chromadb.PersistentClient(path=str(copy), settings=Settings(anonymized_telemetry=False))
    remote = server.client()
    names = []
    try:
        for listed in local.list_collections():
            col = local.get_collection(listed.name, embedding_function=None)
            records = col.get(include=["documents", "metadatas", "embeddings"])
            target = remote.create_collection(listed.name, metadata=dict(col.metadata), embedding_function=None)
            target.add(
                ids=records["ids"],
                documents=records["documents"],
                metadatas=records["metadatas"],
                embeddings=[list(map(float, e)) for e in records["embeddings"]],
            )
            names.append(listed.name)
    finally:
        local.close()
    return names
