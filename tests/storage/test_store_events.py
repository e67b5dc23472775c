"""The store tells its listeners what changed: its own steps by id, other processes' writes by polling."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from mnemoscope.storage import Curator, MemoryQuery, open_store


def test_curation_and_agent_writes_name_the_ids_they_changed(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        events = []
        unsubscribe = store.subscribe(events.append)
        new_id = store.add_memory("Dana switched to decaf", channel="webshop")
        assert events[-1].ids == (new_id,) and not events[-1].journal
        Curator(store).edit(new_id, content="Dana switched to decaf in November")
        assert new_id in events[-1].ids and events[-1].journal
        Curator(store).undo()
        assert new_id in events[-1].ids and events[-1].journal
        unsubscribe()
        store.add_memory("not heard")
        assert len(events) == 3


def test_poll_reports_another_processs_write_once(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        events = []
        store.subscribe(events.append)
        assert store.poll() is False  # first look: nothing to report
        code = (
            "from mnemoscope.storage import open_store\n"
            f"s = open_store({str(demo_path)!r}); s.add_memory('written by the agent'); s.close()\n"
        )
        subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
        assert store.poll() is True
        assert events[-1].everything and events[-1].journal
        assert store.poll() is False
        assert store.count(MemoryQuery(contains="written by the agent")) == 1
