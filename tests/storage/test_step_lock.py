"""The step lock (step_lock.py): one holder at a time across processes and threads, re-entrant in
its thread, a holder named by its process when a step gives up waiting, and nothing left behind."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mnemoscope.storage.errors import LockedError
from mnemoscope.storage.step_lock import between_steps, step_lock


def test_a_step_waiting_for_another_process_names_it(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from mnemoscope.storage.step_lock import step_lock\n"
         "with step_lock(Path(sys.argv[1])):\n    Path(sys.argv[2]).touch(); time.sleep(60)",
         str(tmp_path), str(tmp_path / "held")],
    )
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "held").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        started = time.monotonic()
        with pytest.raises(LockedError, match=rf"process {holder.pid} \(python") as refused, \
                step_lock(tmp_path, timeout=0.3, label="the workspace"):
            pass
        assert 0.3 <= time.monotonic() - started < 3
        assert "the workspace is busy" in str(refused.value) and "nothing was written" in str(refused.value)
    finally:
        holder.kill()
        holder.wait()
    with step_lock(tmp_path, timeout=5):  # the kernel let go of it with the process
        pass


def test_the_step_lock_is_reentrant_in_its_thread_and_serialises_threads(tmp_path: Path) -> None:
    order: list[str] = []
    with step_lock(tmp_path):
        with step_lock(tmp_path):  # the same thread again: no wait
            order.append("nested")

        def other() -> None:
            with step_lock(tmp_path):
                order.append("other thread")

        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.2)
        order.append("first done")
    thread.join(10)
    assert order == ["nested", "first done", "other thread"]
    assert os.listdir(tmp_path) == []  # no lock file left behind


def test_a_reader_between_steps_waits_for_a_step_and_holds_off_the_next(tmp_path: Path) -> None:
    order: list[str] = []

    def step() -> None:
        with step_lock(tmp_path):
            order.append("step")

    with between_steps(tmp_path):
        thread = threading.Thread(target=step)
        thread.start()
        time.sleep(0.2)
        order.append("read")
    thread.join(10)
    assert order == ["read", "step"]
