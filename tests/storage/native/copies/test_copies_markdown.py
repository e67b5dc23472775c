"""The markdown copies against the memory rows: a lost bullet, a bullet edited apart from its row,
a bullet whose memory is gone, and a file that is gone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers.consistency_damage import plant_damage, rows
from mnemoscope.storage import open_store
from mnemoscope.storage.native.copies.markdown import MarkdownCheck, folded


def test_the_markdown_check_finds_lost_and_edited_bullets(demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    with open_store(demo_path) as store:
        check = MarkdownCheck(store._workspace.db, store._workspace.markdown, demo_path)
        found = list(check.rows())
    assert {(f.kind, f.record) for f in found} == {
        ("missing-bullet", planted["missing-bullet"]), ("text-mismatch", planted["text-mismatch"])}
    mismatch = next(f for f in found if f.kind == "text-mismatch")
    assert "frozen" in mismatch.detail and "the row says" in mismatch.detail and mismatch.source == "markdown"
    assert check.checked_blocks > 0


def test_a_bullet_saying_what_a_gone_memory_said_is_an_orphan(demo_path: Path) -> None:
    (memory_id, rel, text), = rows(demo_path, "SELECT id, md_file, content FROM memories WHERE md_file IS NOT NULL "
                                               "ORDER BY id LIMIT 1")
    with open_store(demo_path) as store:
        check = MarkdownCheck(store._workspace.db, store._workspace.markdown, demo_path)
        assert list(check.orphans_of([text, "  "])) == []  # its row is still there
    con = sqlite3.connect(demo_path / "memory.db")
    with con:
        con.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
    con.close()
    with open_store(demo_path) as store:
        check = MarkdownCheck(store._workspace.db, store._workspace.markdown, demo_path)
        orphans = list(check.orphans_of([text]))
    assert [(f.kind, f.memory_id) for f in orphans] == [("orphan-bullet", None)]
    assert orphans[0].detail.startswith(f"{rel}:")


def test_a_gone_file_loses_every_bullet_it_held(demo_path: Path) -> None:
    (rel, count), = rows(demo_path, "SELECT md_file, count(*) FROM memories WHERE md_file IS NOT NULL "
                                    "AND status != 'deleted' GROUP BY md_file ORDER BY md_file LIMIT 1")
    (demo_path / rel).unlink()
    with open_store(demo_path) as store:
        found = list(MarkdownCheck(store._workspace.db, store._workspace.markdown, demo_path).rows())
    gone = [f for f in found if f.detail == f"{rel} is gone"]
    assert len(gone) == count and {f.kind for f in gone} == {"missing-bullet"}


def test_folding_ignores_case_and_spacing() -> None:
    assert folded("  Keep the  API\n stable ") == folded("keep the api stable") == "keep the api stable"
