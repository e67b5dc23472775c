"""Chroma's persisted HNSW index read from its files (hnsw.py): the header, every element's
vector and record id, one record's vector, the graph walked as hnswlib walks it; an index map
that would build anything but plain containers, and a header its files do not fit, are refused."""

from __future__ import annotations

import os
import pickle
import shutil
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.chroma_dirs import chroma_client
from mnemoscope.storage import UnreadableStoreError
from mnemoscope.storage.native.chroma.files import ChromaFiles
from mnemoscope.storage.native.chroma.hnsw import Graph, HnswHeader, HnswIndex, segment_fault, segment_stamp

DIM = 16
N = 1100  # past Chroma's persist threshold (1000 records): the HNSW files hold most of them


@pytest.fixture(scope="module")
def persisted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection in l2 space whose vectors chromadb persisted in its HNSW files."""
    path = tmp_path_factory.mktemp("hnsw") / "chroma"
    col = chroma_client(path).get_or_create_collection("facts", embedding_function=None, metadata={"hnsw:space": "l2"})
    vectors = np.random.default_rng(3).normal(size=(N, DIM)).astype(np.float32)
    for start in range(0, N, 500):
        ids = range(start, min(N, start + 500))
        col.add(ids=[f"f{i}" for i in ids], embeddings=vectors[start : start + 500].tolist())
    np.save(path.parent / "vectors.npy", vectors)
    return path


def _segment(path: Path) -> Path:
    [header] = path.glob("*/header.bin")
    return header.parent


def _added(persisted: Path) -> dict[str, np.ndarray]:
    vectors = np.load(persisted.parent / "vectors.npy")
    return {f"f{i}": vectors[i] for i in range(N)}


def test_the_header_says_where_each_elements_vector_and_label_are(persisted: Path) -> None:
    header = HnswHeader.read(_segment(persisted))
    assert header.dimension == DIM and 0 < header.count <= header.capacity and header.count <= N
    assert header.consistent() and header.label_at + 8 == header.size and header.max_m0 > 0


def test_every_element_reads_as_the_vector_chromadb_was_given(persisted: Path) -> None:
    added = _added(persisted)
    index = HnswIndex(_segment(persisted), normalized=False)
    ids, matrix = index.every()
    assert len(ids) == index.header.count == len(set(ids)) and matrix.shape == (len(ids), DIM)
    for record_id, row in zip(ids, matrix, strict=True):
        assert np.allclose(row, added[record_id])
    assert dict(index.items()).keys() == set(ids)
    assert np.allclose(index.vector(ids[7]), added[ids[7]]) and index.vector("nobody") is None
    assert index.element_ids() == ids  # nothing deleted: each element holds its record


def test_the_graph_walk_finds_the_nearest_elements(persisted: Path) -> None:
    index = HnswIndex(_segment(persisted), normalized=False)
    graph = index.graph("l2")
    assert isinstance(graph, Graph) and index.graph("l2") is graph
    ids, matrix = index.every()
    eligible = np.ones(len(ids), dtype=bool)
    for row in (0, 17, len(ids) - 1):
        elements, distances = graph.search(matrix[row], 100, eligible, 5)
        exact = ((matrix - matrix[row]) ** 2).sum(axis=1)
        assert ids[int(elements[0])] == ids[row] and distances[0] == pytest.approx(0.0, abs=1e-5)
        assert set(elements.tolist()) <= set(np.argsort(exact)[:10].tolist())
        assert list(distances) == sorted(distances)
    eligible[17] = False
    elements, _distances = graph.search(matrix[17], 100, eligible, 5)
    assert 17 not in elements.tolist(), "an element the filters leave out is not returned"


def test_the_stamp_moves_when_a_file_of_the_segment_changes(persisted: Path, tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    shutil.copytree(persisted, path)
    segment = _segment(path)
    before = segment_stamp(segment)
    assert before == segment_stamp(segment)
    (segment / "length.bin").write_bytes((segment / "length.bin").read_bytes() + b"\0\0\0\0")
    assert segment_stamp(segment) != before


def test_a_header_that_is_no_header_is_one_clear_error(persisted: Path, tmp_path: Path) -> None:
    segment = tmp_path / "segment"
    shutil.copytree(_segment(persisted), segment)
    data = bytearray((segment / "header.bin").read_bytes())
    struct.pack_into("<i", data, 0, 2)  # a format version chroma-hnswlib has not written
    (segment / "header.bin").write_bytes(bytes(data))
    with pytest.raises(UnreadableStoreError, match="format 2"):
        HnswHeader.read(segment)
    (segment / "header.bin").write_bytes(b"short")
    with pytest.raises(UnreadableStoreError, match="is not an HNSW header"):
        HnswIndex(segment, normalized=False)


def test_an_index_map_that_would_run_code_is_refused(persisted: Path, tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    shutil.copytree(persisted, path)
    marker = tmp_path / "pwned"
    [index_map] = path.glob("*/index_metadata.pickle")

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    index_map.write_bytes(pickle.dumps({"label_to_id": Payload()}))
    files = ChromaFiles(path)
    with pytest.raises(UnreadableStoreError, match="index map"):
        files.vectors(files.collections()[0])
    assert not marker.exists()


def test_a_header_read_while_another_process_rewrites_it_is_read_again(persisted: Path, tmp_path: Path) -> None:
    """chromadb persisting truncates header.bin, then writes it: a reader in between waits it out."""
    path = tmp_path / "chroma"
    shutil.copytree(persisted, path)
    header = _segment(path) / "header.bin"
    whole = header.read_bytes()
    files = ChromaFiles(path)
    header.write_bytes(b"")  # the writer has truncated it
    rewrite = threading.Timer(0.3, header.write_bytes, (whole,))
    rewrite.start()
    try:
        vectors = files.vectors(files.collections()[0])
    finally:
        rewrite.join()
    assert len(vectors.ids) == N and vectors.matrix().shape == (N, DIM)


def test_a_header_damaged_at_rest_fails_at_once(persisted: Path, tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    shutil.copytree(persisted, path)
    header = _segment(path) / "header.bin"
    header.write_bytes(b"short")
    old = time.time() - 60
    os.utime(header, (old, old))
    files = ChromaFiles(path)
    started = time.monotonic()
    with pytest.raises(UnreadableStoreError, match="is not an HNSW header"):
        files.vectors(files.collections()[0])
    assert time.monotonic() - started < 0.5


def _damaged_copy(persisted: Path, tmp_path: Path, name: str, damage) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(persisted, copy)
    path = _segment(copy) / name
    path.write_bytes(damage(bytearray(path.read_bytes())))
    return _segment(copy)


def _packed(at: int, fmt: str, value) -> object:
    def damage(data: bytearray) -> bytes:
        struct.pack_into(fmt, data, at, value)
        return bytes(data)

    return damage


FAULTS = {  # what chromadb's client failed on (after writing chroma.sqlite3), or crashed over
    "a level-0 link past the last element": ("data_level0.bin", _packed(4, "<I", 2**31), "level-0 link points past"),
    "more level-0 links than room": ("data_level0.bin", _packed(0, "<H", 999), "more level-0 links"),
    "level 0 not at offset 0": ("header.bin", _packed(4, "<Q", 2**40), "places level 0 at offset"),
    "an M hnswlib would not write": ("header.bin", _packed(76, "<Q", 17), "link sizes hnswlib would not write"),
    "room for 2**31 elements": ("header.bin", _packed(12, "<Q", 2**31 - 1), "has room for 2,147,483,647"),
    "no element left": ("header.bin", _packed(20, "<Q", 0), "onto an index of 0 elements"),
    "bytes past the label map": ("index_metadata.pickle", lambda d: bytes(d) + b"\x00", "1 bytes past its end"),
    "a cut link list": ("link_lists.bin", lambda d: bytes(d[: len(d) // 2]), "index files are damaged"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_what_chromadb_would_fail_or_crash_on_is_found_before_it_starts(persisted: Path, tmp_path: Path,
                                                                         fault: str) -> None:
    assert segment_fault(_segment(persisted), normalized=False) is None
    name, damage, said = FAULTS[fault]
    found = segment_fault(_damaged_copy(persisted, tmp_path, name, damage), normalized=False)
    assert found is not None and said in found, found


def test_a_segment_with_no_header_beside_its_other_files_is_a_fault(persisted: Path, tmp_path: Path) -> None:
    folder = _damaged_copy(persisted, tmp_path, "header.bin", bytes)
    (folder / "header.bin").unlink()
    assert "header.bin is missing beside data_level0.bin" in segment_fault(folder, normalized=False)
    assert segment_fault(tmp_path, normalized=False) is None  # no index at all yet: nothing to load
