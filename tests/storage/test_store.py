"""The store (storage/store.py): its change token moves whatever an agent writes."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage import MemoryQuery, open_store


def test_change_token_moves_when_an_agent_writes_any_kind(demo_path: Path) -> None:
    import sqlite3
    import time

    with open_store(demo_path) as store:
        token = store.change_token()
        time.sleep(0.01)
        with (demo_path / "MEMORY.md").open("a") as handle:
            handle.write("- an agent appended this\n")
        after_md = store.change_token()
        assert after_md != token
        con = sqlite3.connect(demo_path / "memory.db")
        con.execute("UPDATE memories SET access_count = access_count + 1")
        con.commit()
        con.close()
        after_sql = store.change_token()
        assert after_sql != after_md
        store.workspace.vectors.collection("memories").update(ids=[store.workspace.db.page(MemoryQuery(), 1)[0].id], metadatas=[{"x": 1}])
        assert store.change_token() != after_sql
