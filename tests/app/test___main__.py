"""app/__main__.py: `python -m mnemoscope.app` is the mnemoscope command, its exit code passed on.
Each run is its own process, MNEMOSCOPE_HOME in a folder of the test's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest


def run_module(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mnemoscope.app", *args], capture_output=True, text=True,
                          env={**os.environ, "MNEMOSCOPE_HOME": str(home), **env}, timeout=300)


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    done = run_module(tmp_path / "home", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"mnemoscope {version('mnemoscope')}\n"
    assert done.stderr == ""


def test_help_is_the_mnemoscope_commands_help(tmp_path: Path) -> None:
    done = run_module(tmp_path / "home", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: mnemoscope ")  # named as the command, not as __main__.py
    assert "__main__" not in done.stdout
    for command in ("ls", "show", "search", "rm", "import", "export"):
        assert f"\n    {command} " in done.stdout, command  # each command listed with its summary
    assert "--screenshot FILE.png" in done.stdout  # the app's own flags are listed too


def test_a_command_runs_on_a_real_store(tmp_path: Path, demo_path: Path) -> None:
    done = run_module(tmp_path / "home", "ls", str(demo_path), "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert listed["total"] > listed["limit"] == len(listed["memories"])  # the demo's first page
    assert all(memory["id"] and memory["content"] for memory in listed["memories"])


@pytest.mark.parametrize("what", ["missing", "garbage"])
def test_the_commands_exit_code_is_the_processs(tmp_path: Path, what: str) -> None:
    target = tmp_path / "memory.db"
    if what == "garbage":
        target.write_bytes(bytes(range(256)) * 16)
    done = run_module(tmp_path / "home", "ls", str(target))
    assert done.returncode == 2  # the store cannot be read: sys.exit(main()) passes main's 2 on
    assert done.stdout == ""
    assert done.stderr.startswith("mnemoscope: ") and "Traceback" not in done.stderr


def test_the_app_renders_a_store_offscreen_and_exits_0(tmp_path: Path, demo_path: Path) -> None:
    pytest.importorskip("PySide6")
    shot = tmp_path / "shot.png"
    done = run_module(tmp_path / "home", "--screenshot", str(shot), str(demo_path), QT_QPA_PLATFORM="offscreen")
    assert done.returncode == 0, done.stderr
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "home").is_dir()  # its settings kept where MNEMOSCOPE_HOME says, not the user's
