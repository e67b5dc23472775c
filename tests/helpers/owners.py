"""Run another tool's own library in a child process, the way an agent would.

Stores are written (and read back) by the real libraries — mem0, LangGraph, the
OpenAI Agents SDK — in a separate Python process: that is how an agent and
Mnemoscope meet on disk, and it keeps each library's process-wide state (Chroma
client caches, telemetry) out of the test process. The child prints one JSON
document on stdout, which is returned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]

OFFLINE_ENV = {
    "MEM0_TELEMETRY": "False",
    "ANONYMIZED_TELEMETRY": "False",
    "OPENAI_API_KEY": "sk-offline-test-key",
    "OPENAI_AGENTS_DISABLE_TRACING": "1",
    "HF_HUB_OFFLINE": "1",
    "NO_PROXY": "*",
}


def require(module: str) -> None:
    """The owning library is in the test extra; say so plainly if it is missing."""
    pytest.importorskip(module, reason=f"{module} is in the [test] extra: pip install -e '.[test]'")


def run_owner(code: str, **params: Any) -> Any:
    """Run ``code`` in a child Python with ``params`` bound as JSON-decoded globals."""
    prelude = "import json, sys\n" + "".join(
        f"{name} = json.loads({json.dumps(json.dumps(value, default=str))})\n" for name, value in params.items()
    )
    env = {**os.environ, **OFFLINE_ENV, "PYTHONPATH": str(REPO)}
    if "mem0_dir" in params:
        env["MEM0_DIR"] = str(params["mem0_dir"])
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True, text=True, env=env, timeout=180,
    )
    if done.returncode != 0:
        raise AssertionError(f"owner library failed:\n{done.stderr[-4000:]}")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return json.loads(lines[-1]) if lines else None
