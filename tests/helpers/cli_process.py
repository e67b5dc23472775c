"""mnemoscope as its own process, as a person runs it: MNEMOSCOPE_HOME in a folder of the test's,
the exit code checked, and everything it printed kept (to search for what must never show)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

EXE = str(Path(sys.executable).parent / "mnemoscope")


class Cli:
    def __init__(self, home: Path) -> None:
        self.env = {**os.environ, "MNEMOSCOPE_HOME": str(home)}
        self.printed: list[str] = []

    def __call__(self, *args: str, stdin: str | None = None, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([EXE, *args], capture_output=True, text=True, env=self.env, input=stdin, timeout=300)
        self.printed.append(done.stdout + done.stderr)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self(*args, "--json").stdout)
