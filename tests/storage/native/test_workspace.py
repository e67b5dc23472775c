"""The native workspace owns a memory's copies: listed once, found by any copy's id, curated together."""

from __future__ import annotations

from pathlib import Path

from helpers.store_state import sql_rows

from mnemoscope.storage import Kind, MemoryQuery, open_store
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION, record_id_for


def _with_copies(root: Path) -> str:
    return sql_rows(root, "SELECT id FROM memories WHERE md_file LIKE 'memory/%' ORDER BY id LIMIT 1")[0][0]


def test_a_memory_with_copies_is_listed_and_counted_once(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        memory_id = _with_copies(demo_path)
        everything = MemoryQuery(statuses=())
        listed = [m.id for m in store.page(everything, limit=store.count(everything))]
        assert listed.count(memory_id) == 1
        rows = sql_rows(demo_path, "SELECT count(*) FROM memories")[0][0]
        counts = store.counts()
        assert counts["kinds"]["sqlite"] == rows
        assert counts["kinds"].get("chroma", 0) == 0  # every vector in the demo copies a row
        assert counts["total"] == len(listed) == sum(counts["channels"].values())


def test_every_copy_id_finds_its_memory(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        memory_id = _with_copies(demo_path)
        copies = {c["kind"]: c for c in store.copies(memory_id)}
        assert set(copies) == {"chroma", "markdown"}
        assert copies["chroma"]["record"] == record_id_for(NATIVE_COLLECTION, memory_id)
        for copy in copies.values():
            assert store.get(copy["record"]).id == memory_id
        markdown = store.page(MemoryQuery(kinds=(Kind.MARKDOWN,)), limit=1000)
        assert copies["markdown"]["record"] not in {m.id for m in markdown}  # hidden as a copy


def test_a_missing_markdown_copy_is_reported(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        memory_id = _with_copies(demo_path)
        md_file = store.get(memory_id).metadata["md_file"]
        (demo_path / md_file).write_text("# emptied by hand\n")
        copies = {c["kind"]: c for c in store.copies(memory_id)}
        assert copies["markdown"] == {"kind": "markdown", "record": None, "file": md_file, "state": "missing"}
