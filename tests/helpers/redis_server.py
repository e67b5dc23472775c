"""A real redis-server on 127.0.0.1 for the tests, and AgentX's working memory written into it.

The server is Debian's ``redis-server`` (``.ci/run`` installs it where it is missing; another
binary: ``MNEMOSCOPE_TEST_REDIS_SERVER``), started on a free loopback port in a temporary folder,
with a generated password (``requirepass``) and no persistence; stopped and deleted at the end of
the session. Without the binary, the tests that need it skip, saying so.

``write_working_memory`` writes what AgentX's WorkingMemory and consolidation worker write (seed
002), with redis-py's commands as AgentX's ``memory/working.py`` issues them:

    def test_something(agentx_redis):
        store = open_store(agentx_redis.url)       # redis://:PASSWORD@127.0.0.1:PORT/0
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

ALICE, BOB = "alice", "bob"
RUST, TRAVEL = "my-rust-project", "travel-planner"
RUST_CHAT = "11111111-1111-4111-8111-111111111111"
TRAVEL_CHAT = "33333333-3333-4333-8333-333333333333"
RUST_SESSION = f"working:{ALICE}:{RUST}:{RUST_CHAT}"
GLOBAL_SESSION = f"working:{ALICE}:_global:global"  # WorkingMemory without a conversation id
TRAVEL_SESSION = f"working:{BOB}:{TRAVEL}:{TRAVEL_CHAT}"
HOUR = 3600


def find_binary() -> tuple[str | None, str]:
    override = os.environ.get("MNEMOSCOPE_TEST_REDIS_SERVER")
    if override:
        return (override, override) if Path(override).exists() else (None, f"{override} does not exist")
    found = shutil.which("redis-server") or next(
        (str(p) for p in (Path("/usr/bin/redis-server"), Path("/usr/sbin/redis-server")) if p.exists()), None)
    return (found, found) if found else (None, "no redis-server: apt-get install redis-server (bash .ci/run does)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One running redis-server. ``url`` carries the password; ``client()`` is a redis-py client."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.password = "pw:@/" + secrets.token_urlsafe(12)  # characters a URL must quote
        self.host = "127.0.0.1"
        self.port = 0
        self.folder = Path(tempfile.mkdtemp(prefix="mnemo-redis-"))
        self.socket = self.folder / "redis.sock"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        failure = ""
        for _attempt in range(3):  # another process may take the free port before the server binds it
            self.port = _free_port()
            config = self.folder / "redis.conf"
            config.write_text(
                f"port {self.port}\nbind 127.0.0.1\ndir {self.folder}\nsave \"\"\nappendonly no\n"
                f"unixsocket {self.socket}\nunixsocketperm 700\n"
                f"requirepass \"{self.password}\"\nlogfile {self.folder / 'redis.log'}\n"
            )
            self._process = subprocess.Popen([self.binary, str(config)], stdout=subprocess.DEVNULL,
                                             stderr=subprocess.PIPE)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self._process.poll() is None:
                with contextlib.suppress(Exception):
                    if self.client().ping():
                        return
                time.sleep(0.05)
            failure = (self._process.stderr.read().decode(errors="replace") if self._process.poll() is not None
                       and self._process.stderr else "did not answer PING")
            self.stop(remove=False)
        raise RuntimeError(f"redis-server did not start: {failure}")

    def stop(self, *, remove: bool = True) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        if remove:
            shutil.rmtree(self.folder, ignore_errors=True)

    def url(self, db: int = 0, *, password: bool = True) -> str:
        from urllib.parse import quote

        secret = f":{quote(self.password, safe='')}@" if password else ""
        return f"redis://{secret}{self.host}:{self.port}/{db}"

    def client(self, db: int = 0) -> Any:
        import redis

        return redis.Redis(host=self.host, port=self.port, db=db, password=self.password, decode_responses=True)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """The server for the whole session; at its end no file the tests left may hold its password."""
    binary, origin = find_binary()
    if binary is None:
        print(f"\nRedis tests skipped: {origin}", file=sys.stderr)
        pytest.skip(f"no redis-server: {origin}")
    pytest.importorskip("redis", reason="the redis client is not installed (pip install -e .)")
    server = RedisServer(binary)
    server.start()
    try:
        yield server
    finally:
        server.stop()
    from helpers.postgres_server import files_holding

    holding = files_holding(tmp_path_factory.getbasetemp(), server.password)
    assert not holding, f"the Redis password was written to {holding}"


@dataclass
class AgentxRedis:
    """AgentX's working memory on the test server: its URL (password in), a client, when it was written."""

    server: RedisServer
    url: str
    client: Any
    written_at: datetime


@pytest.fixture
def agentx_redis(redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AgentxRedis]:
    """A fresh database 0 holding AgentX's working memory; Mnemoscope's data folder (the journal's
    sidecar for the server) in tmp_path."""
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))
    client = redis_server.client()
    client.flushall()
    written_at = write_working_memory(client)
    yield AgentxRedis(redis_server, redis_server.url(), client, written_at)
    client.flushall()
    client.close()


def write_working_memory(r: Any) -> datetime:
    """What AgentX writes: two users' conversations in three channels (turns, thoughts, context keys,
    the active goal), a consolidation job and lock, session-scoped data, and one key that is no
    AgentX's. Returns when it was written."""
    now = datetime.now(UTC)

    def add_turn(session_key: str, index: int, role: str, content: str) -> None:  # WorkingMemory.add_turn
        turns_key = f"{session_key}:turns"
        r.lpush(turns_key, json.dumps({"id": f"turn-{index}", "index": index, "role": role, "content": content,
                                       "timestamp": now.isoformat()}))
        r.ltrim(turns_key, 0, 49)
        r.expire(turns_key, HOUR)

    def set_value(session_key: str, key: str, value: Any, ttl: int = HOUR) -> None:  # WorkingMemory.set
        r.set(f"{session_key}:context:{key}", json.dumps(value), ex=ttl)  # SETEX's SET EX (setex is deprecated)

    def push_thought(session_key: str, thought: str) -> None:  # WorkingMemory.push_thought
        thoughts_key = f"{session_key}:thoughts"
        r.lpush(thoughts_key, json.dumps({"thought": thought, "timestamp": now.isoformat()}))
        r.ltrim(thoughts_key, 0, 49)
        r.expire(thoughts_key, HOUR)

    add_turn(RUST_SESSION, 0, "user", "Why does the parser fail the borrow checker?")
    add_turn(RUST_SESSION, 1, "assistant", "The token iterator outlives the buffer it borrows.")
    set_value(RUST_SESSION, "active_goal", {"id": "goal-7", "description": "Fix the parser's lifetimes",
                                            "set_at": now.isoformat()})
    set_value(RUST_SESSION, "current_file", "src/parser.rs", ttl=600)
    push_thought(RUST_SESSION, "Check where the buffer is dropped")
    add_turn(GLOBAL_SESSION, 0, "user", "Remember that I prefer dark mode")
    add_turn(TRAVEL_SESSION, 0, "user", "Plan three days in Lisbon in May")
    set_value(TRAVEL_SESSION, "budget", {"currency": "EUR", "max": 900}, ttl=2 * 24 * HOUR)
    r.hset("consolidation:job:job-42", mapping={"status": "running", "conversation_id": RUST_CHAT,
                                                 "started_at": now.isoformat()})
    r.expire("consolidation:job:job-42", 24 * HOUR)
    r.set(f"consolidation:lock:{RUST_CHAT}", "worker-3", nx=True, ex=300)
    r.sadd("session:sess-9:tools", "web_search", "calculator")
    r.set("session:sess-9:scratch", "draft itinerary")  # no TTL
    r.set("cache:embedding:abc", "not AgentX's")
    return now
