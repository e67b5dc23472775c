"""The memory rows a check reads: page by page in id order (every row once, each as read_record
reads it), one file's copies alone, which ids are rows, how many rows, which files hold copies."""

from __future__ import annotations

from pathlib import Path

from helpers.consistency_damage import rows
from mnemoscope.storage.native.copies.rows import existing_ids, markdown_files, row_count, row_pages
from mnemoscope.storage.native.db.sqlite_source import SqliteSource


def test_rows_are_read_page_by_page_in_id_order(demo_path: Path) -> None:
    db = SqliteSource(demo_path / "memory.db", read_only=True)
    try:
        pages = list(row_pages(db, page=7))
        ids = [row["id"] for page in pages for row in page]
        assert ids == [r[0] for r in rows(demo_path, "SELECT id FROM memories ORDER BY id")]
        assert all(len(page) == 7 for page in pages[:-1]) and 0 < len(pages[-1]) <= 7
        assert row_count(db) == len(ids)
        first = pages[0][0]
        assert {"id", "content", "status", "md_file", "vector_state"} <= set(first)
        assert first == db.read_record(first["id"])
    finally:
        db.close()


def test_one_files_copies_and_the_files_that_hold_copies(demo_path: Path) -> None:
    db = SqliteSource(demo_path / "memory.db", read_only=True)
    try:
        files = markdown_files(db)
        assert files == [r[0] for r in rows(demo_path, "SELECT DISTINCT md_file FROM memories "
                                                        "WHERE md_file IS NOT NULL ORDER BY md_file")]
        of_first = [row for page in row_pages(db, md_file=files[0]) for row in page]
        assert of_first and {row["md_file"] for row in of_first} == {files[0]}
        some = [row["id"] for row in of_first[:2]]
        assert existing_ids(db, [*some, "m-no-such-row"]) == set(some)
        assert existing_ids(db, []) == set()
    finally:
        db.close()
