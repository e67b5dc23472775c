"""What every source shares: pages merged over several sources in the query's order, seeking
after a row as paging by offset does, the filters and counts run in Python agreeing with those run
in SQL, and the change records a curation step journals."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import open_store
from mnemoscope.storage.model import Kind, Layer, Memory, SourceRef
from mnemoscope.storage.query import MemoryQuery, Order
from mnemoscope.storage.source import (
    Change,
    bin_by,
    count_by,
    in_apply_order,
    keyword_rank,
    matches,
    merged_page,
    page_after_by_key,
    page_of,
    revision_of,
    same_content,
    same_record,
    summed,
)

AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def _memory(memory_id: str, content: str, *, days: int = 0, channel: str = "_global") -> Memory:
    at = AT - timedelta(days=days)
    return Memory(memory_id, SourceRef(Kind.MARKDOWN, f"MEMORY.md:{days}"), Layer.SEMANTIC, channel, content, at, at, at)


@pytest.mark.parametrize("order", [Order.RECENT, Order.CREATED, Order.SALIENCE])
def test_a_page_merged_over_the_parts_is_a_slice_of_the_whole_order(demo_path: Path, order: Order) -> None:
    with open_store(demo_path, read_only=True) as store:
        parts = store._workspace.parts
        query = MemoryQuery(order=order)
        whole = merged_page(parts, query, 1000, 0)
        assert len(whole) == sum(p.count(query) for p in parts)
        assert merged_page(parts, query, 25, 40) == whole[40:65]
        assert merged_page(parts, query, 25, 0, after=whole[39]) == whole[40:65]  # a seek, as deep as an offset


def test_seeking_by_key_in_a_source_that_cannot_seek_passes_over_the_rows_before(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        markdown = next(p for p in store._workspace.parts if p.kind is Kind.MARKDOWN)
        query = MemoryQuery()
        rows = markdown.page(query, 300, 0)
        assert len(rows) > 30
        assert page_after_by_key(markdown, query, 10, 5, rows[9]) == rows[15:25]


def test_filters_and_counts_in_python_agree_with_the_sources_own(demo_path: Path) -> None:
    query = MemoryQuery(channels=("webshop",), contains="the")
    with open_store(demo_path, read_only=True) as store:
        for part in store._workspace.parts:
            everything = part.page(MemoryQuery(statuses=()), 1000, 0)
            kept = [m for m in everything if matches(m, query)]
            assert len(kept) == part.count(query), part.kind
            assert count_by(kept, "channel") == part.counts_by("channel", query)
            assert bin_by(kept, "%Y-%m", "channel") == part.bin_counts(query, "%Y-%m", "channel")
            assert page_of(kept, query, 7, 3) == part.page(query, 7, 3)


def test_keyword_rank_puts_the_most_word_hits_first() -> None:
    memories = [_memory("a", "tea"), _memory("b", "Tea and more tea"), _memory("c", "coffee"), _memory("d", "tea, tea")]
    assert [m.id for m in keyword_rank(memories, "TEA!", 3)] == ["b", "d", "a"]
    assert keyword_rank(memories, "  ", 3) == []


def test_counts_of_several_sources_are_summed() -> None:
    assert summed([{"a": 1, "b": 2}, {"b": 3}, {}]) == {"a": 1, "b": 5}
    assert count_by([_memory("a", "x", channel="w"), _memory("b", "y", channel="w")], "kind") == {"markdown": 2}


def test_a_change_round_trips_through_the_journals_json() -> None:
    change = Change("m-1", {"content": "a"}, None, writer=object())
    again = Change.from_json(change.to_json())
    assert again == change and again.writer is None


def test_revisions_ignore_float_noise_and_key_order() -> None:
    a = {"id": "m-1", "embedding": [0.1234567, 0.5], "metadata": {"x": 1, "y": 2}}
    b = {"metadata": {"y": 2, "x": 1}, "embedding": [0.1234571, 0.5], "id": "m-1"}
    assert same_record(a, b) and revision_of(a) == revision_of(b) and len(revision_of(a)) == 12
    assert revision_of(None) == "" and not same_record(a, {**a, "id": "m-2"})
    block = {"path": "MEMORY.md", "line": 3, "text": "- tea"}
    assert same_content(block, {**block, "line": 9}) and not same_record(block, {**block, "line": 9})


def test_markdown_blocks_are_written_bottom_up_within_a_file() -> None:
    def block(path: str, line: int) -> Change:
        return Change(f"md:{path}:{line}", {"path": path, "line": line, "text": "x"}, None)

    row = Change("m-1", {"content": "a"}, None)
    changes = [block("a.md", 2), row, block("a.md", 9), block("b.md", 1)]
    assert [c.record for c in in_apply_order(changes)] == ["md:a.md:9", "m-1", "md:a.md:2", "md:b.md:1"]
