"""MemoryStore.revisions: what a window compares with the rows it shows to find the ones another
process changed, read where the data lives, on the real demo workspace."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from helpers.native_backends import native, native_demo  # noqa: F401 (fixtures)
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from mnemoscope.storage import Kind, MemoryQuery, open_store
from mnemoscope.storage.lazy_page import page_revisions


def test_revisions_are_the_revisions_of_the_memories_read(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        shown = store.page(MemoryQuery(), limit=500)
        kinds = {m.source.kind for m in shown}
        assert Kind.SQLITE in kinds and Kind.MARKDOWN in kinds
        found = store.revisions([m.id for m in shown])
        assert found == {m.id: store.get(m.id).revision for m in shown}
        db_rows = [m for m in shown if m.source.kind is Kind.SQLITE]
        assert all(found[m.id] == m.revision for m in db_rows)


def test_a_page_tells_its_revisions_without_building_its_memories(sqlite_only: Path) -> None:
    with open_store(sqlite_only) as store:
        page = store._workspace.db.page(MemoryQuery(), 50)
        assert page_revisions(page) == [m.revision for m in page]


def test_another_process_write_changes_only_its_revision_and_a_purged_memory_has_none(sqlite_only: Path) -> None:
    with open_store(sqlite_only) as store:
        ids = [m.id for m in store.page(MemoryQuery(), limit=20)]
        before = store.revisions(ids)
        con = sqlite3.connect(sqlite_only / "memory.db")
        with con:
            con.execute("UPDATE memories SET salience = 0.123 WHERE id = ?", (ids[3],))
            con.execute("DELETE FROM memories WHERE id = ?", (ids[7],))
        con.close()
        after = store.revisions([*ids, "m-no-such-memory"])
        assert set(after) == set(ids) - {ids[7]}
        assert [i for i in after if after[i] != before[i]] == [ids[3]]
        assert after[ids[3]] == store.get(ids[3]).revision


def test_revisions_agree_with_pages_and_follow_another_programs_write_on_each_database(native_demo: Any) -> None:  # noqa: F811
    with native_demo.open() as store:
        shown = store.page(MemoryQuery(statuses=()), limit=30)
        ids = [m.id for m in shown]
        assert store.revisions(ids) == {m.id: m.revision for m in shown}
        native_demo.execute("UPDATE memories SET content = ? WHERE id = ?", ("another program wrote", ids[5]))
        after = store.revisions(ids)
        assert [i for i in ids if after[i] != shown[ids.index(i)].revision] == [ids[5]]
        assert after[ids[5]] == store.page(MemoryQuery(statuses=(), ids=(ids[5],)), 1)[0].revision
