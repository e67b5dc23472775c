"""Running the command line in-process, as the CLI tests do: its exit code and what it printed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mnemoscope.app.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: object) -> Any:
    """The command's --json output, once it exited 0."""
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)
