"""SIGKILL at random points of every curation path; after reopening, the copies agree and the
journal holds every applied step.

A curator process runs random steps (edit, markdown edit, promote, delete, several deletes,
restore, reinforce, undo, redo) over a workspace holding memory.db rows with vector and
markdown copies, standalone vectors and markdown blocks, and is killed with SIGKILL after a
random delay. A checker process first runs read-only commands (ls, show, check) on what the
kill left: with a step pending they refuse it, naming it (check: exit 1), with none check finds
every copy in agreement, and none of them writes a byte. Then it reopens the store writable
(recovery undoes an unfinished step) and undoes every step in the journal: the store must be
back, byte for byte, where it was before the curator started; then it redoes them all. A torn step or a step missing from the
journal would make that impossible. MNEMOSCOPE_KILLS sets the number of kills (default 150 in CI;
the done-when size is 300).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import signal
from pathlib import Path

import pytest
from helpers.curation_load import check_after_kill, curate_forever
from helpers.store_state import state_of

from mnemoscope.storage import open_store
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION

KILLS = int(os.environ.get("MNEMOSCOPE_KILLS", "150"))  # the contract's size: 300

pytestmark = pytest.mark.reliability


@pytest.fixture(scope="module")
def processes() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["helpers.curation_load", "chromadb", "mnemoscope.app.cli"])
    return ctx


def _template(demo: Path, target: Path) -> Path:
    shutil.copytree(demo, target)
    with open_store(target) as store:
        texts = [f"standalone vector fact {i} about the webshop" for i in range(5)]
        metas = [{"channel": "webshop", "layer": "semantic", "status": "active"} for _ in texts]
        store._workspace.vectors.add_records(
            NATIVE_COLLECTION, [f"solo-{i}" for i in range(5)], texts, metas, store.embedder().embed(texts)
        )
    return target


def test_sigkill_during_curation_never_leaves_a_torn_store(processes, demo_path: Path, tmp_path: Path, capsys) -> None:
    template = _template(demo_path, tmp_path / "template")
    initial = state_of(template)
    rng = random.Random(20261123)
    torn, steps, recovered, seen_torn, failures = 0, 0, 0, 0, []
    for trial in range(KILLS):
        root = tmp_path / f"trial-{trial}"
        shutil.copytree(template, root)
        started = processes.Event()
        curator = processes.Process(target=curate_forever, args=(str(root), trial, started))
        curator.start()
        assert started.wait(60), "the curator process did not start"
        curator.join(rng.uniform(0.005, 0.4))
        os.kill(curator.pid, signal.SIGKILL)
        curator.join()
        results = processes.Queue()
        checker = processes.Process(target=check_after_kill, args=(str(root), initial, results))
        checker.start()
        outcome = results.get(timeout=120)
        checker.join()
        steps += outcome.get("undone", 0)
        recovered += bool(outcome.get("recovered"))
        seen_torn += outcome.get("read_only") is not None
        if not outcome["ok"]:
            torn += 1
            failures.append((trial, outcome))
        shutil.rmtree(root)
    with capsys.disabled():
        print(
            f"\nreliability: {KILLS} kills, {steps} journaled steps undone and redone, "
            f"{recovered} unfinished steps undone on open (read-only commands before it refused them), "
            f"{seen_torn} torn states seen read-only, {torn} torn stores"
        )
        for trial, outcome in failures[:5]:
            print(f"trial {trial}: read-only {outcome.get('read_only')}; error {outcome.get('error')}; "
                  f"recovered {outcome.get('recovered')}")
    assert torn == 0, failures[:3]
