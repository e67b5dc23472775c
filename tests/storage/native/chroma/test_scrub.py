"""What Chroma keeps of a deleted record, cleared by a purge (scrub.py): the queued operations'
metadata, the full-text index's older segments, chroma.sqlite3's free space and the HNSW files'
unused bytes; chromadb's client reads the directory as before."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from helpers.chroma_dirs import chroma_client, written
from mnemoscope.storage.native.chroma.client import close_client
from mnemoscope.storage.native.chroma.files import ChromaFiles
from mnemoscope.storage.native.chroma.hnsw import HnswHeader, HnswIndex
from mnemoscope.storage.native.chroma.scrub import clear_hnsw, scrub

SECRET = b"plum-vortex-5521"


def _holders(folder: Path, needle: bytes) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes())


def test_scrub_leaves_no_text_of_the_removed_records_and_chromadb_reads_the_rest(tmp_path: Path) -> None:
    client = chroma_client(tmp_path)
    col = client.get_or_create_collection("facts", embedding_function=None)
    col.add(ids=["a", "b"], embeddings=[[1.0, 0.0], [0.0, 1.0]],
            documents=[f"the {SECRET.decode()} text", "kept text"], metadatas=[{"n": 1}, {"n": 2}])
    col.update(ids=["a"], embeddings=[[0.5, 0.5]], documents=[f"the {SECRET.decode()} text, edited"])
    col.delete(ids=["a"])
    close_client(client)
    assert _holders(tmp_path, SECRET) == ["chroma.sqlite3"]

    files = ChromaFiles(tmp_path)
    [facts] = files.collections()
    assert scrub(files, [(facts, ["a"])]) == []

    assert _holders(tmp_path, SECRET) == []
    assert files.rows("SELECT count(*) FROM embeddings_queue")[0][0] == 4  # every operation stays
    kept = files.rows("SELECT metadata FROM embeddings_queue WHERE id = 'b'")
    assert "kept text" in kept[0][0]
    assert files.rows("SELECT operation FROM maintenance_log ORDER BY rowid DESC LIMIT 1") == [("vacuum",)]
    client = chroma_client(tmp_path)
    try:
        got = client.get_collection("facts").get(include=["documents", "embeddings"])
        assert got["ids"] == ["b"] and got["documents"] == ["kept text"]
        found = client.get_collection("facts").query(query_embeddings=[[0.0, 1.0]], n_results=1)
        assert found["ids"] == [["b"]]
    finally:
        close_client(client)


def _plant(folder: Path, header: HnswHeader) -> None:
    """Text where hnswlib leaves bytes unset: a level-0 link slot past an element's link count,
    the room past the last element, and past the last length."""
    data = bytearray((folder / "data_level0.bin").read_bytes())
    links, at = min((struct.unpack_from("<H", data, i * header.size)[0], i * header.size) for i in range(header.count))
    assert 4 + 4 * links + len(SECRET) <= header.data_at
    data[at + 4 + 4 * links : at + 4 + 4 * links + len(SECRET)] = SECRET
    if header.capacity > header.count:
        at = header.count * header.size
        data[at : at + len(SECRET)] = SECRET
    (folder / "data_level0.bin").write_bytes(bytes(data))
    lengths = bytearray((folder / "length.bin").read_bytes())
    if len(lengths) >= 4 * header.count + len(SECRET):
        lengths[4 * header.count : 4 * header.count + len(SECRET)] = SECRET
        (folder / "length.bin").write_bytes(bytes(lengths))


def test_clear_hnsw_zeroes_only_the_bytes_hnswlib_never_reads(tmp_path: Path) -> None:
    written(tmp_path, 1200)
    [col] = ChromaFiles(tmp_path).collections()
    folder = tmp_path / str(col.vector_segment)
    header = HnswHeader.read(folder)
    assert header.count > 0
    _plant(folder, header)
    before = HnswIndex(folder, normalized=True)
    ids, vectors = before.every()
    graph = before.graph("cosine")
    assert graph is not None
    links0, upper = graph.links0.copy(), {k: v.copy() for k, v in graph.upper.items()}
    assert _holders(folder, SECRET) != []

    assert clear_hnsw(folder) == []

    assert _holders(folder, SECRET) == []
    after = HnswIndex(folder, normalized=True)
    again_ids, again = after.every()
    assert again_ids == ids and np.array_equal(again, vectors)
    again_graph = after.graph("cosine")
    assert again_graph is not None and np.array_equal(again_graph.links0, links0)
    assert upper.keys() == again_graph.upper.keys()
    assert all(np.array_equal(upper[k], again_graph.upper[k]) for k in upper)
