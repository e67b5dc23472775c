"""MemoryStore, the façade, on the demo workspace: which part holds and writes each record id,
paging and counting over every part, the journal's history and next steps, the store's own
settings, and the search primitives it routes to each part."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from mnemoscope.storage import Curator, MemoryQuery, NotFoundError, ReadOnlyError, open_store
from mnemoscope.storage.findings import RECORD_PREFIX
from mnemoscope.storage.journal.log import Journal
from mnemoscope.storage.model import Kind, Status
from mnemoscope.storage.native.chroma.local import ChromaSource
from mnemoscope.storage.query import Order
from mnemoscope.storage.source import Capabilities
from mnemoscope.storage.store import MemoryStore


def _mirrored(path: Path) -> tuple[str, str]:
    """A memory.db row with a markdown copy: its id and its file."""
    con = sqlite3.connect(path / "memory.db")
    try:
        return con.execute("SELECT id, md_file FROM memories WHERE md_file IS NOT NULL ORDER BY id LIMIT 1").fetchone()
    finally:
        con.close()


def test_each_record_id_is_routed_to_the_part_that_writes_it(demo_path: Path) -> None:
    memory_id, md_file = _mirrored(demo_path)
    with open_store(demo_path) as store:
        db, vectors, markdown = store._workspace.parts
        copies = {c["kind"]: c["record"] for c in store.copies(memory_id)}
        assert copies["chroma"] == f"vec:memories:{memory_id}" and copies["markdown"].startswith(f"md:{md_file}:")
        assert store.writer_for(memory_id) is db
        assert store.writer_for(copies["chroma"]) is vectors
        assert store.writer_for(copies["markdown"]) is markdown
        assert store.writer_for(RECORD_PREFIX + "0123456789abcdef") is store.findings_baseline
        # a bulk step's ids routed at once: the lone workspace, or no one source
        assert store.sole_source([memory_id, copies["chroma"], "m-any"]) is store._workspace
        assert store.sole_source([memory_id, RECORD_PREFIX + "0123456789abcdef"]) is None
        # a copy's id finds its memory, and names it
        assert store.canonical_id(copies["chroma"]) == memory_id == store.canonical_id(copies["markdown"])
        assert store.canonical_id("md:MEMORY.md:nothing-copied") == "md:MEMORY.md:nothing-copied"
        assert store.get(copies["chroma"]).content == store.get(memory_id).content
        assert store.find("m-no-such-memory") is None
        with pytest.raises(NotFoundError, match="No memory m-no-such-memory"):
            store.get("m-no-such-memory")


def test_pages_walk_every_memory_once_by_offset_or_by_seek(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        query = MemoryQuery(order=Order.CREATED)
        by_offset = [m for start in range(0, store.count(query), 50) for m in store.page(query, 50, start)]
        assert len(by_offset) == len({m.id for m in by_offset}) == store.count(query)
        by_seek, last = [], None
        while page := store.page(query, 50, 0, last):
            by_seek += page
            last = page[-1]
        assert [m.id for m in by_seek] == [m.id for m in by_offset]
        assert [m.created_at for m in by_offset] == sorted((m.created_at for m in by_offset), reverse=True)


def test_counts_agree_on_every_axis_and_with_count(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        total = store.count(MemoryQuery(statuses=()))
        counts = store.counts()
        assert counts["total"] == total
        for axis in ("kinds", "channels", "layers", "statuses"):
            assert sum(counts[axis].values()) == total, axis
        assert counts["channels"]["webshop"] == store.count(MemoryQuery(channels=("webshop",)))
        memory = store.page(MemoryQuery(channels=("webshop",), kinds=(Kind.SQLITE,)), 1)[0]
        Curator(store).delete([memory.id])  # a row is kept, marked deleted (a markdown bullet would go)
        after = store.counts()
        assert after["total"] == total and after["statuses"] == {"active": total - 1, "deleted": 1}
        assert store.count() == total - 1  # the default query: active only
        assert store.counts(MemoryQuery(channels=("webshop",), statuses=()))["total"] == counts["channels"]["webshop"]
        assert store.counts(axes=("statuses",)) == {"statuses": after["statuses"], "total": total}
        assert store.counts(axes=("kinds",)) == {"kinds": after["kinds"], "total": total}
        with pytest.raises(ValueError, match="axes"):
            store.counts(axes="statuses")


def test_history_and_next_steps_follow_the_journal(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store.history() == [] and store.next_steps() == (None, None)
        first, second = (m.id for m in store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 2))
        Curator(store).edit(first, content="Dana now prefers green tea")
        Curator(store).edit(second, content="The build runs on Thursdays")
        history = store.history()
        assert [e.operation for e in history] == ["edit", "edit"] and history[0].targets == (second,)
        assert [e.targets for e in store.history(target=first)] == [(first,)]
        assert store.next_steps() == (history[0], None)
        Curator(store).undo()
        to_undo, to_redo = store.next_steps()
        assert to_undo.seq == history[1].seq and to_redo.seq == history[0].seq
    with open_store(demo_path, read_only=True) as store:  # the journal is on disk
        assert [e.state for e in store.history() if e.operation == "edit"] == ["undone", "done"]


def test_settings_mnemoscope_keeps_about_the_store_are_read_and_refused_read_only(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store.read_setting("test-layout") is None
        store.write_setting("test-layout", {"columns": ["content", "channel"]})
        assert store.read_setting("test-layout") == {"columns": ["content", "channel"]}
    with open_store(demo_path, read_only=True) as store:
        assert store.read_setting("test-layout") == {"columns": ["content", "channel"]}
        with pytest.raises(ReadOnlyError):
            store.write_setting("test-layout", None)


def test_keyword_lists_are_one_ranked_list_per_part(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        lists = store.keyword_lists("release", MemoryQuery(), 5)
        assert list(lists) == ["Mnemoscope memory.db", "Chroma directory", "workspace markdown"]
        assert lists["workspace markdown"] and lists["Mnemoscope memory.db"]
        for ranked in lists.values():
            assert len(ranked) <= 5 and all("release" in m.content.lower() for m in ranked)
        webshop = store.keyword_lists("release", MemoryQuery(channels=("webshop",)), 50)
        assert {m.channel for ranked in webshop.values() for m in ranked} <= {"webshop"}


def test_document_frequencies_count_memories_once_over_the_parts(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        total, found = store.document_frequencies(["release", "whiskerino", "zzzunheardof"], MemoryQuery())
        assert total == store.count()  # the vector copies are not counted again
        assert found["zzzunheardof"] == 0
        assert 0 < found["whiskerino"] <= store.count(MemoryQuery(contains="whiskerino"))
        assert 0 < found["release"] <= store.count(MemoryQuery(contains="release"))
        # memory.db's full-text index keeps its statistics index-wide, whatever the filters (as
        # search engines do); the markdown files are counted under them
        in_webshop, _ = store.document_frequencies(["release"], MemoryQuery(channels=("webshop",)))
        con = sqlite3.connect(demo_path / "memory.db")
        (rows,) = con.execute("SELECT count(*) FROM memories").fetchone()
        con.close()
        assert in_webshop == rows + store.count(MemoryQuery(channels=("webshop",), kinds=(Kind.MARKDOWN,)))


def test_bin_counts_cover_the_memories_the_query_keeps(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        bins = store.bin_counts(MemoryQuery(), "%Y-%m", "channel")
        assert sum(bins.values()) == store.count()
        per_channel: dict[str, int] = {}
        for (_month, channel), n in bins.items():
            per_channel[channel] = per_channel.get(channel, 0) + n
        assert per_channel == store.counts(MemoryQuery())["channels"]
        only_db = store.bin_counts(MemoryQuery(kinds=(Kind.SQLITE,)), "%Y-%m", "kind")
        assert {kind for _month, kind in only_db} == {"sqlite"}
        assert sum(only_db.values()) == store.count(MemoryQuery(kinds=(Kind.SQLITE,)))
        archived = store.bin_counts(MemoryQuery(statuses=(Status.ARCHIVED,)), "%Y-%m", "channel")
        assert archived == {}



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
        store._workspace.vectors.collection("memories").update(ids=[store._workspace.db.page(MemoryQuery(), 1)[0].id], metadatas=[{"x": 1}])
        assert store.change_token() != after_sql


class _UnmappedVectors:
    """A vector source whose vectors cannot be read a batch at a time (as sqlite-vec's, pgvector's)."""

    format = "facts-db"
    label = "facts.db vectors"
    kind = Kind.SQLITE

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(vector_search=True)

    def close(self) -> None:
        pass


def test_vector_collections_mark_the_workspaces_own_native_and_note_what_cannot_be_read(
    demo_path: Path, tmp_path: Path
) -> None:
    with open_store(demo_path, read_only=True) as store:
        found, notes = store.vector_collections()
        assert notes == []
        [native] = found
        assert (native.name, native.kind, native.mirror_kind) == ("memories", Kind.CHROMA, Kind.SQLITE) and native.native
        assert sum(len(ids) for ids, _v in native.batches(50)) == native.count > 0
        assert native.record_index().mirror.any()  # the vector copies of memory.db's memories
    # The same directory beside no memory.db: its mirrors stand for nothing here, so it is not native;
    # a vector source whose vectors cannot be read so is named in a note.
    sidecar = tmp_path / "sidecar"
    sidecar.mkdir()
    sources: list[Any] = [ChromaSource.open(demo_path / "vectors", read_only=True), _UnmappedVectors()]
    with MemoryStore(sidecar, sources, Journal.sidecar(sidecar), read_only=True) as store:
        assert store.sole_source(["vec:memories:m-1", "vec:memories:m-2"]) is sources[0]
        found, notes = store.vector_collections()
        assert [(c.name, c.native, c.count) for c in found] == [("memories", False, native.count)]
        assert notes == ["facts.db vectors: its vectors cannot be mapped yet"]
