"""A page decodes a row only when it is read, and otherwise behaves like the list it stands for."""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery, Order, open_store
from mnemoscope.storage.lazy_page import LazyPage, changed_positions, page_texts
from mnemoscope.storage.native.db.sqlite_source import SqliteSource


def _store(root: Path, n: int) -> None:
    source = SqliteSource.open(root / "memory.db", create=True)
    source.insert_memory_rows([source.memory_row(f"fact number {i}", memory_id=f"m-{i:03d}") for i in range(n)])
    source.close()


def test_only_the_rows_read_are_decoded(tmp_path: Path) -> None:
    _store(tmp_path, 30)
    with open_store(tmp_path, read_only=True) as store:
        whole = list(store.page(MemoryQuery(), 30))
        decoded: list[str] = []
        rows = [(m.id, m) for m in whole]

        def decode(row: tuple[str, object]) -> object:
            decoded.append(row[0])
            return row[1]

        page = LazyPage(rows, decode)  # type: ignore[arg-type]
        assert len(page) == 30 and decoded == []
        assert page[4].id == whole[4].id and page[-1].id == whole[-1].id
        assert page[4] is page[4]  # decoded once, kept
        assert decoded == [whole[4].id, whole[-1].id]
        assert [m.id for m in page[2:6:2]] == [whole[2].id, whole[4].id]
        assert page == whole and whole == page and page != whole[:-1]
        assert [m.id for m in reversed(page)] == [m.id for m in reversed(whole)]
        with pytest.raises(IndexError):
            page[30]


def test_a_native_page_reads_like_a_list_of_memories(tmp_path: Path) -> None:
    _store(tmp_path, 12)
    with open_store(tmp_path, read_only=True) as store:
        page = store.page(MemoryQuery(), 5, 3)
        again = store.page(MemoryQuery(), 5, 3)
        assert len(page) == 5
        assert page == again  # equal memories, decoded separately
        assert [m.content for m in page] == [m.content for m in again]
        assert all(m.revision and m.created_at.tzinfo for m in page)
        assert store.get(page[0].id) == page[0]


def test_two_reads_of_a_page_compare_row_by_row_without_decoding(tmp_path: Path) -> None:
    _store(tmp_path, 12)
    with open_store(tmp_path) as store:
        query = MemoryQuery(order=Order.CREATED)
        first = store.page(query, 10)
        assert isinstance(first, LazyPage)
        store.touch(first[3].id)  # one more access: another version of the same memory
        second = store.page(query, 10)
        assert changed_positions(first, second) == [3]
        assert changed_positions(second, second[:7]) == [7, 8, 9]  # a shorter page: its missing rows
        assert changed_positions(list(first), list(first)) == []


def test_a_native_page_gives_ids_and_contents_without_decoding(tmp_path: Path) -> None:
    _store(tmp_path, 12)
    with open_store(tmp_path, read_only=True) as store:
        page = store.page(MemoryQuery(), 12)
        assert isinstance(page, LazyPage)
        assert sorted(page_texts(page)) == [(f"m-{i:03d}", f"fact number {i}") for i in range(12)]
        assert page._decoded == [None] * 12  # nothing was decoded
        assert page_texts(list(page)) == page_texts(page)
