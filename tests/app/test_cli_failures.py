"""Inputs the command line cannot use get one line on stderr and exit 2: a memory.db another
program holds locked (at once: one busy timeout, not one per probe, naming the program where the
OS tells), a native library's panic, a file the OS refuses."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

HOLD = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
for statement in sys.argv[2:]:
    con.execute(statement)
print("held", flush=True)
sys.stdin.read()
"""
LOCKS = {
    # readers are locked out: every command fails
    "rollback journal": ("info", ["PRAGMA journal_mode = DELETE", "BEGIN EXCLUSIVE"]),
    "WAL, exclusive locking mode": ("info", ["PRAGMA locking_mode = EXCLUSIVE", "BEGIN EXCLUSIVE"]),
    # WAL readers go on reading; a write waits one busy timeout
    "WAL": ("rm", ["BEGIN EXCLUSIVE"]),
}


@pytest.mark.parametrize("lock", list(LOCKS))
def test_a_locked_memory_db_is_reported_in_one_line_within_6_s(demo_path: Path, lock: str) -> None:
    command, statements = LOCKS[lock]
    con = sqlite3.connect(demo_path / "memory.db")
    memory_id = con.execute("SELECT id FROM memories ORDER BY id LIMIT 1").fetchone()[0]
    con.close()
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(demo_path / "memory.db"), *statements],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        argv = [exe, command, str(demo_path)] + ([memory_id] if command == "rm" else [])
        started = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        seconds = time.monotonic() - started
    finally:
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(10)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and "is locked by another program" in lines[0], done.stderr
    if sys.platform.startswith("linux"):
        assert f"pid {holder.pid}" in lines[0]
    assert seconds < 6.0, f"{seconds:.1f} s"


class PanicException(BaseException):
    """What pyo3 raises when Rust code (Chroma's core) panics: not an Exception."""


@pytest.mark.parametrize("error", [PanicException("called `Option::unwrap()` on a `None` value\nat src/x.rs:1"),
                                   PermissionError(13, "Permission denied", "/store/MEMORY.md")])
def test_a_panic_or_an_os_error_is_one_line_and_exit_2(monkeypatch, capsys, demo_path: Path, error) -> None:
    from mnemoscope.app import cli
    from mnemoscope.app.commands import read

    def fail(_args: object) -> int:
        raise error

    monkeypatch.setattr(read, "cmd_info", fail)
    assert cli.main(["info", str(demo_path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mnemoscope: "), lines


def _hashes(folder: Path) -> dict[str, str]:
    import hashlib

    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.name.endswith("-shm")}


def test_a_write_a_trigger_refuses_is_one_line_and_writes_nothing(capsys, demo_path: Path) -> None:
    """Another program's trigger refuses the update: rm says so, and neither memory.db (whose
    journal would otherwise hold the failed step) nor the vectors or markdown change."""
    from mnemoscope.app import cli

    con = sqlite3.connect(demo_path / "memory.db")
    con.execute("CREATE TRIGGER no_update BEFORE UPDATE ON memories BEGIN SELECT RAISE(ABORT, 'memories are frozen'); END")
    con.commit()
    with_copies = [r[0] for r in con.execute(
        "SELECT id FROM memories WHERE md_file IS NOT NULL AND vector_state = 'fresh' ORDER BY id LIMIT 2")]
    con.close()
    assert len(with_copies) == 2
    before = _hashes(demo_path)
    assert cli.main(["rm", str(demo_path), *with_copies]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "memories are frozen" in lines[0], lines
    assert _hashes(demo_path) == before


KILLED_AGENT = """
import os, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA wal_autocheckpoint = 0")
for statement in sys.argv[2:]:
    con.execute(statement)
os._exit(0)  # killed: its last connection never closes, so its -wal is never checkpointed
"""


@pytest.mark.parametrize("case", ["a trigger refuses it", "the id is not there"])
def test_a_failed_write_leaves_a_killed_agents_wal_as_it_was(capsys, demo_path: Path, case: str) -> None:
    """The agent's committed writes stay in its -wal: a write of ours that fails or finds
    nothing to do does not fold them into memory.db when it closes (SQLite's last close does)."""
    from mnemoscope.app import cli

    db = demo_path / "memory.db"
    with contextlib.closing(sqlite3.connect(db)) as con:  # closed: an open one would hold off any checkpoint
        target = con.execute("SELECT id FROM memories WHERE status = 'active' ORDER BY id LIMIT 1").fetchone()[0]
    agent_writes = ["UPDATE memories SET access_count = access_count + 1 WHERE rowid % 2 = 0"]
    if case == "a trigger refuses it":
        agent_writes.append("CREATE TRIGGER no_update BEFORE UPDATE ON memories BEGIN SELECT RAISE(ABORT, 'frozen'); END")
    else:
        target = "m-000000000000"
    subprocess.run([sys.executable, "-c", KILLED_AGENT, str(db), *agent_writes], check=True)
    assert (demo_path / "memory.db-wal").stat().st_size > 0
    before = _hashes(demo_path)
    assert cli.main(["rm", str(demo_path), target]) == (2 if case == "a trigger refuses it" else 1)
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
    assert _hashes(demo_path) == before
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:  # the agent's writes stay
        assert con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'no_update'").fetchone()[0] == (
            case == "a trigger refuses it")
