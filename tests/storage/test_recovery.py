"""Steps a killed process never finished, and steps another process is still writing
(recovery.py, step_lock.py): a read-only open never shows a crashed step's half (it refuses,
naming the step; `check` reports it and exits 1; nothing is written), the next writable open
undoes it, and neither a reader nor a writable open's recovery mistakes a live step in another
process for a crashed one: they wait for it."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from helpers.cli_runs import run
from mnemoscope.storage import Curator, UnfinishedStepError, open_store

# A curator process whose edit stops after its first copy is written: killed there (SIGKILL), or
# held there until a file appears (a live step).
_CURATOR = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from mnemoscope.storage import Curator, open_store
    from mnemoscope.storage.curation import Curator as C
    from mnemoscope.storage.source import Change

    root, memory_id, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]

    def first_copy_then_stop(self, changes):
        first = changes[0]
        written = first.writer.write_record(first.record, first.before, first.after)
        (root.parent / "mid-step").touch()
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        while not (root.parent / "go-on").exists():
            time.sleep(0.01)
        return [Change(first.record, first.before, written, first.writer), *original(self, changes[1:])]

    original = C._apply
    C._apply = first_copy_then_stop
    with open_store(root) as store:
        Curator(store).edit(memory_id, content="the webshop ships on Tuesdays")
""")


def _first_row(root: Path) -> tuple[str, str]:
    con = sqlite3.connect(root / "memory.db")
    try:
        return con.execute("SELECT id, content FROM memories WHERE status = 'active' ORDER BY id LIMIT 1").fetchone()
    finally:
        con.close()


def _hashes(root: Path) -> dict[str, str]:
    """Every file's hash but SQLite's -shm (its readers' shared index, which any reader updates)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and not p.name.endswith("-shm")}


def _curator(root: Path, memory_id: str, mode: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", _CURATOR, str(root), memory_id, mode], stderr=subprocess.PIPE)


def _wait_for(path: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert process.poll() is None or path.exists(), process.stderr.read().decode() if process.stderr else ""
        assert time.monotonic() < deadline, "the curator never reached its step"
        time.sleep(0.02)


def _killed_mid_step(root: Path) -> str:
    memory_id, _content = _first_row(root)
    curator = _curator(root, memory_id, "kill")
    curator.wait(timeout=120)
    assert curator.returncode == -9 and (root.parent / "mid-step").exists()
    return memory_id


def test_a_read_only_open_refuses_a_crashed_step_and_check_names_it(demo_path: Path, capsys) -> None:
    memory_id = _killed_mid_step(demo_path)
    before = _hashes(demo_path)
    with pytest.raises(UnfinishedStepError, match=r"step #\d+ \(edit\) was interrupted") as refused:
        open_store(demo_path, read_only=True)
    assert "--repair-all" in str(refused.value)
    for argv in (("ls", demo_path), ("show", demo_path, memory_id), ("search", demo_path, "webshop"),
                 ("export", demo_path, demo_path.parent / "out.jsonl", "--format", "jsonl")):
        code, out, err = run(capsys, *argv, "--read-only")
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (argv, code, err)
        assert "(edit) was interrupted" in err, argv
    code, out, err = run(capsys, "check", demo_path)
    assert code == 1 and "interrupted and not yet undone" in out and "never finished" in out, (code, out, err)
    code, out, _err = run(capsys, "info", demo_path)
    assert code == 0 and "(edit) was interrupted" in out
    assert _hashes(demo_path) == before  # nothing read-only wrote anything
    with open_store(demo_path) as store:  # the writable open undoes it
        assert any("what it had written was undone" in note for note in store.recovered)
        assert store.get(memory_id).content == _first_row(demo_path)[1] != "the webshop ships on Tuesdays"
    code, out, _err = run(capsys, "check", demo_path)
    assert code == 0, out
    with open_store(demo_path, read_only=True) as store:
        assert store.get(memory_id).content != "the webshop ships on Tuesdays"


def test_a_live_step_in_another_process_is_waited_for_not_undone(demo_path: Path) -> None:
    memory_id, _content = _first_row(demo_path)
    curator = _curator(demo_path, memory_id, "hold")
    try:
        _wait_for(demo_path.parent / "mid-step", curator)
        opened: dict[str, object] = {}

        def open_writable() -> None:
            with open_store(demo_path) as store:
                opened["recovered"] = list(store.recovered)
                opened["content"] = store.get(memory_id).content

        def open_read_only() -> None:
            with open_store(demo_path, read_only=True) as store:
                opened["read"] = store.get(memory_id).content

        openers = [threading.Thread(target=open_writable), threading.Thread(target=open_read_only)]
        for opener in openers:
            opener.start()
        time.sleep(0.5)
        assert all(o.is_alive() for o in openers), "an open did not wait for the live step"
        (demo_path.parent / "go-on").touch()
        for opener in openers:
            opener.join(60)
        assert curator.wait(timeout=60) == 0, curator.stderr.read().decode() if curator.stderr else ""
    finally:
        (demo_path.parent / "go-on").touch()
        curator.wait(timeout=60)
    assert opened == {"recovered": [], "content": "the webshop ships on Tuesdays", "read": "the webshop ships on Tuesdays"}
    with open_store(demo_path, read_only=True) as store:
        assert store.get(memory_id).content == "the webshop ships on Tuesdays"
    with open_store(demo_path) as store:
        Curator(store).undo()
        assert store.get(memory_id).content == _content


def test_a_store_held_open_sees_a_step_another_process_left_unfinished_since(demo_path: Path) -> None:
    """A long-lived open (a window) asks about the file as it is when asked, not as it was opened."""
    from mnemoscope.storage.consistency import check

    with open_store(demo_path, read_only=True) as held:
        assert check(held).counts().get("unfinished-step") is None
        _killed_mid_step(demo_path)
        assert check(held).counts().get("unfinished-step") == 1


def test_an_interrupted_step_the_agent_used_since_is_still_undone(demo_path: Path) -> None:
    """The agent bumped the half-edited row's access count before the next open: recovery puts
    the step's text back and keeps the agent's count, and the step is no longer pending."""
    memory_id = _killed_mid_step(demo_path)
    con = sqlite3.connect(demo_path / "memory.db")
    con.execute("UPDATE memories SET access_count = coalesce(access_count, 0) + 1 WHERE id = ?", (memory_id,))
    count = con.execute("SELECT access_count FROM memories WHERE id = ?", (memory_id,)).fetchone()[0]
    con.commit()
    con.close()
    with open_store(demo_path) as store:
        assert any("what it had written was undone" in note for note in store.recovered), store.recovered
        memory = store.get(memory_id)
        assert memory.content != "the webshop ships on Tuesdays" and memory.access_count == count
    with open_store(demo_path, read_only=True) as store:
        assert store.get(memory_id).access_count == count
