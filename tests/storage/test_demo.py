"""The demo workspace: all three store kinds, sessions, entities, a spread of salience and some
memories ready to promote, the same for the same moment and seed, and never written over a store."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, StoreError, open_store
from mnemoscope.storage.consistency import check
from mnemoscope.storage.demo import CHANNELS, write_demo
from mnemoscope.storage.model import Kind

DEMO_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)  # the moment tests/conftest.py writes the demo at


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*.md"))}


def test_the_demo_holds_every_kind_and_what_each_view_shows(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        assert store.kinds == [Kind.SQLITE, Kind.CHROMA, Kind.MARKDOWN]
        counts = store.counts()
        assert set(counts["channels"]) == set(CHANNELS) and counts["total"] > 200
        assert len(counts["layers"]) == 6
        assert store.sessions() and store.turns(store.sessions()[0].id)
        assert {e.pattern for e in store.scratch_entries()} >= {"subagent_result", "session_facts", None}
        assert store.entities() and store.relations()
        assert store.promotion_candidates()  # some facts are ready to promote
        saliences = [m.salience for m in store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 500)]
        assert min(saliences) < 0.3 < 0.7 < max(saliences)
        assert store.embedder().name == "wordllama-l2_supercat" and store.embedder().dimensions == 256  # semantic
        newest = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1)[0]  # markdown's times are its files' own
        assert DEMO_NOW - timedelta(days=61) < newest.created_at <= DEMO_NOW


def test_the_demo_is_consistent_in_every_copy(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert check(store).clean


def test_the_same_moment_and_seed_write_the_same_demo(tmp_path: Path) -> None:
    said: list[str] = []
    write_demo(tmp_path / "first", now=DEMO_NOW).close()
    with write_demo(tmp_path / "again", now=DEMO_NOW, progress=said.append) as store:
        texts = sorted(m.content for m in store.page(MemoryQuery(statuses=()), 1000))
    assert said[:2] == ["markdown files", "sessions, turns and scratchpad"] and "vectors" in said
    with open_store(tmp_path / "first", read_only=True) as original:
        assert sorted(m.content for m in original.page(MemoryQuery(statuses=()), 1000)) == texts
    assert _files(tmp_path / "again") == _files(tmp_path / "first")
    with write_demo(tmp_path / "other-seed", now=DEMO_NOW, seed=8) as other:
        assert sorted(m.content for m in other.page(MemoryQuery(statuses=()), 1000)) != texts


def test_the_demo_is_never_written_over_a_store(demo_path: Path) -> None:
    before = _files(demo_path)
    with pytest.raises(StoreError, match="already holds a memory store"):
        write_demo(demo_path, now=DEMO_NOW)
    assert _files(demo_path) == before
