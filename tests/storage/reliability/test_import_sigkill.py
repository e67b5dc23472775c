"""SIGKILL during `mnemoscope import`: the destination opens, holds whole batches only (each one
transaction), its full-text index agrees with its rows, and running the import again finishes it
with every memory once."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.transfer import ALL_STATUSES, IMPORT_BATCH, import_store

pytestmark = pytest.mark.reliability

EXE = str(Path(sys.executable).parent / "mnemoscope")
TOTAL = 3 * IMPORT_BATCH + 123


def _rows_in(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT count(*) FROM memories").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_a_killed_import_leaves_whole_batches_and_a_rerun_finishes_it(tmp_path: Path) -> None:
    src = tmp_path / "source"
    source = SqliteSource.open(src / "memory.db", create=True)
    source.insert_memory_rows([source.memory_row(f"fact {i} about the kill test", channel=("a", "b")[i % 2],
                                                 tags=["kept"] if i % 3 else ()) for i in range(TOTAL)])
    source.close()
    rng = random.Random(27)
    killed_midway = 0
    for trial in range(3):
        dest = tmp_path / f"dest-{trial}"
        dest.mkdir()
        SqliteSource.open(dest / "memory.db", create=True).close()
        env = {**os.environ, "MNEMOSCOPE_HOME": str(tmp_path / "home")}
        importer = subprocess.Popen([EXE, "import", str(src), str(dest)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while _rows_in(dest / "memory.db") < IMPORT_BATCH * (trial % 2 + 1) and importer.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(rng.uniform(0, 0.5))
        os.kill(importer.pid, signal.SIGKILL)
        importer.wait()

        with open_store(dest) as store:
            held = store.count(ALL_STATUSES)
            assert held % IMPORT_BATCH == 0 or held == TOTAL
            killed_midway += held < TOTAL
        con = sqlite3.connect(dest / "memory.db")
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        con.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
        con.close()

        again = import_store(src, dest)
        assert (again.imported, again.already_present) == (TOTAL - held, held)
        with open_store(dest) as store:
            assert store.count(ALL_STATUSES) == TOTAL
            assert store.count(MemoryQuery(statuses=(), contains="fact 1234 about")) == 1
    assert killed_midway  # the kills came while the import was writing


IMPORT_KILLS = int(os.environ.get("MNEMOSCOPE_IMPORT_KILLS", "4"))  # the contract's size: 100


def test_an_import_into_a_new_folder_killed_anywhere_opens_or_resumes(tmp_path: Path) -> None:
    """Killed at any moment, from creating the workspace (memory.db, vectors/, settings) to its
    last batch: the destination is either not made yet or opens, and a re-run finishes it with
    every memory once and each with its vector (check finds nothing)."""
    src = tmp_path / "source"
    source = SqliteSource.open(src / "memory.db", create=True)
    total = 2 * IMPORT_BATCH + 77
    source.insert_memory_rows([source.memory_row(f"note {i} on the resume test", channel=("a", "b")[i % 2])
                               for i in range(total)])
    source.close()
    env = {**os.environ, "MNEMOSCOPE_HOME": str(tmp_path / "home")}
    started = time.monotonic()
    subprocess.run([EXE, "import", str(src), str(tmp_path / "timed")], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    whole = time.monotonic() - started
    rng = random.Random(100)
    unmade, rolled_back, resumed = 0, 0, 0
    for trial in range(IMPORT_KILLS):
        dest = tmp_path / f"dest-{trial}"
        importer = subprocess.Popen([EXE, "import", str(src), str(dest)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(whole * (trial + rng.random()) / IMPORT_KILLS)  # spread over the run: start-up to last batch
        importer.send_signal(signal.SIGKILL)
        importer.wait()
        info = subprocess.run([EXE, "info", str(dest)], env=env, capture_output=True, text=True)
        if info.returncode != 0:  # one line: nothing made yet, or a write killed half-way that a writer rolls back
            assert info.returncode == 2 and len(info.stderr.strip().splitlines()) == 1, info.stderr
            assert not (dest / "memory.db").exists() or "never finished" in info.stderr, info.stderr
            unmade += not (dest / "memory.db").exists()
            rolled_back += (dest / "memory.db").exists()
        again = import_store(src, dest)
        resumed += again.already_present > 0
        assert again.imported + again.already_present == total
        with open_store(dest) as store:
            assert store.count(ALL_STATUSES) == total
        check = subprocess.run([EXE, "check", str(dest)], env=env, capture_output=True, text=True)
        assert check.returncode == 0, (trial, check.stdout, check.stderr)
    assert resumed or IMPORT_KILLS < 4, "no kill came while batches were being written"
    print(f"\nreliability: {IMPORT_KILLS} imports killed, {unmade} before a store was made, {rolled_back} "
          f"read-only refusals of a write to roll back, {resumed} resumed by a re-run, 0 destinations lost")
