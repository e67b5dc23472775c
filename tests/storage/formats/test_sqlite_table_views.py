"""A mapped SQLite table in every view the app reads on opening it: one table of memories has no
sessions, turns or scratchpad, and says so instead of failing (the window showed an internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from formats.test_sqlite_table import bot_db
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.opening import remember_mapping
from mnemoscope.storage.detect.table_mapping import propose_mapping
from mnemoscope.storage.views.timeline import timeline


def test_a_mapped_table_has_no_sessions_scratchpad_or_turns_and_its_memories_are_all_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    db = bot_db(tmp_path / "bot.db")
    remember_mapping(db, propose_mapping(db))
    with open_store(db, read_only=True) as store:
        assert store.sessions() == [] and store.scratch_entries() == []
        assert store.turn_bin_counts("%Y-%m", None, None) == {}
        caps = store._sources[0].capabilities()
        assert not caps.sessions and not caps.scratchpad
        assert {m.content for m in store.page(MemoryQuery(), limit=10)} == {
            "Ana prefers tea over coffee", "Ben is learning Rust", "Ana's birthday is on May 4"}
        bins = timeline(store, bin="month", query=MemoryQuery())["bins"]
        assert sum(b["memories"] for b in bins) == 3 and sum(b["turns"] for b in bins) == 0
