"""A collection's vectors as the embedding map takes them (vector_collection.py): batches sliced
from one array already read, or fetched a page at a time until a page comes back short; its
record index as its source reads it; native once the store says its mirrors copy memory.db's."""

from __future__ import annotations

from typing import Any

import numpy as np
from mnemoscope.storage.model import Kind
from mnemoscope.storage.native.chroma.index import RecordIndexBuilder
from mnemoscope.storage.native.chroma.vector_collection import VectorCollection, paged, sliced


def _collection(ids: list[str], matrix: Any) -> VectorCollection:
    builder = RecordIndexBuilder("t")
    for record_id in ids:
        builder.add(record_id, {"channel": "c"}, None)
    index = builder.index()
    return VectorCollection("facts", len(ids), matrix.shape[1], "cosine", Kind.CHROMA, sliced(ids, matrix), lambda: index)


def test_batches_are_slices_of_the_array_read_in_order_and_the_index_is_the_sources() -> None:
    ids = [f"r{i}" for i in range(7)]
    matrix = np.arange(14, dtype=np.float32).reshape(7, 2)
    c = _collection(ids, matrix)
    got = list(c.batches(3))
    assert [b for b, _v in got] == [ids[0:3], ids[3:6], ids[6:7]]
    assert np.array_equal(np.vstack([v for _b, v in got]), matrix)
    assert all(np.shares_memory(v, matrix) for _b, v in got)  # views: the array is not copied
    assert list(c.batches(10))[0][0] == ids
    assert c.record_index().ids_at(np.arange(7)) == ids
    assert (c.count, c.dimension, c.space, c.kind) == (7, 2, "cosine", Kind.CHROMA)


def test_a_collection_is_native_once_the_store_names_the_kind_its_mirrors_copy() -> None:
    c = _collection(["a"], np.ones((1, 3), dtype=np.float32))
    assert not c.native and c.mirror_kind is None
    native = c.as_native(Kind.SQLITE)
    assert native.native and native.mirror_kind is Kind.SQLITE
    assert (native.name, native.count, native.dimension) == (c.name, c.count, c.dimension)
    assert not c.native  # the collection asked is left as it was


def test_pages_are_fetched_by_offset_until_one_comes_back_short() -> None:
    records = [(f"r{i}", [float(i), 1.0]) for i in range(7)]
    asked: list[tuple[int, int]] = []

    def read_page(limit: int, offset: int) -> tuple[list[str], Any]:
        asked.append((limit, offset))
        page = records[offset : offset + limit]
        return [r for r, _v in page], [v for _r, v in page]

    got = list(paged(read_page)(3))
    assert asked == [(3, 0), (3, 3), (3, 6)]
    assert [b for b, _v in got] == [["r0", "r1", "r2"], ["r3", "r4", "r5"], ["r6"]]
    assert all(v.dtype == np.float32 and v.shape == (len(b), 2) for b, v in got)
    asked.clear()
    assert [b for b, _v in paged(read_page)(7)] == [[r for r, _v in records]]
    assert asked == [(7, 0), (7, 7)]  # a full last page: one more request, which comes back empty
