"""Chroma directories read from their files: what chromadb's client returns, without its writes."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers.chroma_dirs import chroma_client, written
from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.native.chroma.files import ChromaFiles
from mnemoscope.storage.native.chroma.local import ChromaSource

DIM = 16


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _client_view(path: Path, tmp_path: Path) -> dict[str, tuple]:
    """What chromadb's client returns, read on a copy (the client writes)."""
    copy = tmp_path / "client-copy"
    shutil.copytree(path, copy)
    got = chroma_client(copy).get_collection("facts").get(include=["documents", "metadatas", "embeddings"])
    return {i: (d, m, np.asarray(e)) for i, d, m, e in
            zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True)}


@pytest.mark.parametrize("n,space", [(2600, "cosine"), (700, "l2")])
def test_files_read_what_chromas_client_returns(tmp_path: Path, n: int, space: str) -> None:
    path = tmp_path / "chroma"
    written(path, n, space)
    expected = _client_view(path, tmp_path)
    files = ChromaFiles(path)
    col = files.collections()[0]
    assert (col.name, col.space, files.count(col)) == ("facts", space, len(expected))
    metadata = dict(files.metadata(col))
    records = files.records(col, list(expected))
    vectors = files.vectors(col)
    by_id = dict(zip(vectors.ids, vectors.matrix(), strict=True))
    assert set(metadata) == set(records) == set(by_id) == set(expected)
    for record_id, (document, meta, embedding) in expected.items():
        assert records[record_id] == (document, meta)
        assert metadata[record_id] == meta
        assert np.allclose(by_id[record_id], embedding, atol=1e-5)
        assert np.allclose(files.vector(col, record_id), embedding, atol=1e-5)
    assert files.vector(col, "f3") is None
    assert files.ids_containing(col, "caché", []) == {i for i, (d, _, _) in expected.items() if "Caché" in (d or "")}


def test_reading_a_chroma_directory_changes_no_byte_of_it(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    vectors = written(path, 1200)
    before = _hashes(path)
    source = ChromaSource.open(path)
    query = MemoryQuery(statuses=())
    assert source.count(query) == 1198
    page = source.page(query, 20, 10)
    assert len(page) == 20 and all(m.content for m in page)
    assert source.get("vec:facts:f10").content == "Fact 10 about Caché and Redis"
    assert np.allclose(source.embedding_of("vec:facts:f10"), vectors[10], atol=1e-5)
    assert source.keyword_search("redis", query, 5)
    nearest = source.vector_search(vectors[42].tolist(), None, query, 3)
    assert nearest[0][0].id == "vec:facts:f42"
    source.close()
    assert _hashes(path) == before
    assert source._client is None


def test_a_long_lived_store_reads_a_vector_another_process_added(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    written(path, 50)
    source = ChromaSource.open(path)
    assert source.read_record("vec:facts:agent-1") is None
    agent = (
        "import chromadb\nfrom chromadb.config import Settings\n"
        f"c = chromadb.PersistentClient(path={str(path)!r}, settings=Settings(anonymized_telemetry=False))\n"
        f"c.get_collection('facts').add(ids=['agent-1'], embeddings=[[0.5] * {DIM}], documents=['from the agent'])\n"
    )
    subprocess.run([sys.executable, "-c", agent], check=True, timeout=120)
    snap = source.read_record("vec:facts:agent-1")
    assert snap is not None and snap["document"] == "from the agent"
    assert np.allclose(snap["embedding"], [0.5] * DIM)
    assert source.count(MemoryQuery(statuses=())) == 49


_KILLED_WRITER = """
import sys, chromadb
from chromadb.config import Settings
col = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False)) \\
    .get_or_create_collection("facts", embedding_function=None, metadata={"hnsw:space": "cosine"})
print("ready", flush=True)
i = 0
while True:
    i += 1
    op = col.delete if i % 7 == 0 else col.upsert
    if op is col.delete:
        col.delete(ids=[f"r{i % 40}"])
    else:
        col.upsert(ids=[f"r{i % 40}"], embeddings=[[float(i % 13), 1.0] + [0.5] * 14],
                   documents=[f"doc {i}"], metadatas=[{"n": i, "gone": None} if i % 2 else {"n": i, "tag": "x"}])
"""


def _metadata_lags_log(path: Path) -> bool:
    con = sqlite3.connect(f"file:{path / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        queued = con.execute("SELECT max(seq_id) FROM embeddings_queue").fetchone()[0]
        applied = con.execute(
            "SELECT m.seq_id FROM max_seq_id m JOIN segments s ON s.id = m.segment_id WHERE s.scope = 'METADATA'"
        ).fetchone()
    except sqlite3.Error:  # killed mid-transaction: the journal is hot, a read-only reader cannot roll it back
        return False
    finally:
        con.close()
    return bool(queued and applied and applied[0] < queued)


def test_a_writer_killed_between_chromas_log_and_its_metadata_reads_as_the_client_reads_it(tmp_path: Path) -> None:
    """Chroma commits an operation to its log, then applies it to the metadata segment in a
    second transaction; a writer killed in between leaves the log ahead, and the client applies
    the rest on open. The files must read the same."""
    rng = random.Random(5)
    for attempt in range(80):
        path = tmp_path / f"killed-{attempt}"
        writer = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(path)], stdout=subprocess.PIPE)
        assert writer.stdout is not None and writer.stdout.readline().strip() == b"ready"
        time.sleep(rng.uniform(0.05, 0.4))
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        if _metadata_lags_log(path):
            break
        shutil.rmtree(path)
    else:
        pytest.fail("no kill in 80 left Chroma's metadata behind its log")
    before = _hashes(path)
    files = ChromaFiles(path)
    col = files.collections()[0]
    metadata, records, vectors = dict(files.metadata(col)), files.records(col, [f"r{i}" for i in range(40)]), files.vectors(col)
    stored = files.stored_times(col)
    count, containing = files.count(col), files.ids_containing(col, "DOC", [])
    assert _hashes(path) == before
    expected = _client_view(path, tmp_path)
    assert count == len(expected) and set(metadata) == set(records) == set(vectors.ids) == set(expected)
    assert set(expected) <= set(stored), "a record still queued has a time too (its queued write's, for now)"
    assert containing == {i for i, (document, _m, _e) in expected.items() if "doc" in (document or "")}
    for record_id, (document, meta, embedding) in expected.items():
        assert records[record_id] == (document, meta) and metadata[record_id] == meta
        assert np.allclose(files.vector(col, record_id), embedding, atol=1e-5)
