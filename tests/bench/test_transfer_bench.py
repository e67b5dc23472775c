"""Import and export at size, against what a person would write with sqlite3 for the same answer.

Import: `import_store` of the cached native store into a new memory.db, against reading the same
source with sqlite3, preparing the same rows (import key, provenance, metadata) and one
executemany into the same schema; reading and preparing inside the timer for both, and the two
destinations compared row for row. The default import into a new folder (memory.db and vectors/,
embedded) against the same executemany plus chromadb's add of the same embeddings and fields. Export: `mnemoscope export ... --format jsonl` against a
sqlite3 + json.dumps loop writing the same lines (the files compared byte for byte); and the
export's peak memory, in a subprocess, flat across sizes.
Sizes: 1M with MNEMOSCOPE_BENCH_SCALE=full (100k with vectors); 20k (5k) otherwise."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench import native_store
from bench.harness import FULL, Row, cached_store, label, paired_times_s, record, sizes
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.transfer import import_store

pytestmark = pytest.mark.bench

SIZES = sizes(full=[1_000_000], ci=[20_000])
MEMORY_COLUMNS = ("id", "layer", "channel", "content", "created_at", "updated_at", "last_accessed", "access_count",
                  "salience", "confidence", "conversations", "tags", "metadata", "status", "promoted_from",
                  "derived_from", "imported_from", "import_key", "md_file", "vector_state")


def _source(size: int) -> Path:
    return cached_store("native", size, native_store.VERSION, native_store.build)


def _alternating(project: Callable[[], object], baseline: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The smallest of repeat runs of each, taken in turns so a change of load meets both."""
    project_times, baseline_times = paired_times_s(project, baseline, repeat)
    return min(project_times), min(baseline_times)


# -- import --------------------------------------------------------------------------------------

def _baseline_import(source_root: Path, dest_db: Path) -> int:
    """What a person writes: the source's rows read with sqlite3, each prepared as the import keeps
    it (its key and provenance, the import's metadata), one executemany in one transaction."""
    origin = str(source_root)
    source = sqlite3.connect(f"file:{source_root / 'memory.db'}?mode=ro", uri=True)
    dest = sqlite3.connect(dest_db)
    read = ("SELECT id, layer, channel, content, created_at, updated_at, last_accessed, access_count, salience, "
            "confidence, conversations, tags, metadata, status, promoted_from, derived_from FROM memories "
            "ORDER BY created_at DESC, id DESC")

    def prepared() -> Iterator[tuple]:
        for (memory_id, layer, channel, content, created, updated, accessed, access_count, salience, confidence,
             conversations, tags, metadata, status, promoted_from, derived_from) in source.execute(read):
            key = f"sqlite:{origin}#{memory_id}"
            meta = json.loads(metadata)
            meta["import"] = {"format": "sqlite", "path": origin, "original_id": memory_id,
                              "location": f"memory.db:memories/{memory_id}"}
            yield (memory_id, layer, channel, content, created, updated, accessed, access_count, salience,
                   confidence, conversations, tags, json.dumps(meta, ensure_ascii=False, sort_keys=True), status,
                   promoted_from, derived_from, key, key, None, "none")

    with dest:
        dest.executemany(f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})", prepared())
    (n,) = dest.execute("SELECT count(*) FROM memories").fetchone()
    dest.close()
    source.close()
    return int(n)


def _rows_of(db: Path) -> Iterator[tuple]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        yield from con.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories ORDER BY id")
    finally:
        con.close()


@pytest.mark.parametrize("size", SIZES, ids=label)
def test_import_against_executemany(tmp_path: Path, size: int) -> None:
    source = tmp_path / "source"  # a copy: other benchmarks running meanwhile may open the cached one writable
    source.mkdir()
    shutil.copy(_source(size) / "memory.db", source / "memory.db")
    empty = tmp_path / "empty.db"
    SqliteSource.open(empty, create=True).close()
    runs = iter(range(100))

    def fresh(kind: str) -> Path:
        folder = tmp_path / f"{kind}-{next(runs)}"
        folder.mkdir()
        shutil.copy(empty, folder / "memory.db")
        return folder

    project_dest: list[Path] = []
    baseline_dest: list[Path] = []
    reported: list[tuple[int, int]] = []
    project_folders = [fresh("project") for _ in range(2)]
    baseline_folders = [fresh("baseline") for _ in range(2)]

    def project() -> None:
        folder = project_folders[len(project_dest)]
        summary = import_store(source, folder, progress=lambda done, total: reported.append((done, total)))
        assert summary.imported == size
        project_dest.append(folder)

    def baseline() -> None:
        folder = baseline_folders[len(baseline_dest)]
        assert _baseline_import(source.resolve(), folder / "memory.db") == size
        baseline_dest.append(folder)

    project_s, baseline_s = _alternating(project, baseline, repeat=1)
    assert reported[-1] == (size, size)
    for mine, theirs in zip(_rows_of(project_dest[0] / "memory.db"), _rows_of(baseline_dest[0] / "memory.db"),
                            strict=True):
        assert mine == theirs
    # A rate >= 0.5x executemany's is a time <= 2x its.
    row = record(Row("transfer", f"import {label(size)} into memory.db ({size / project_s:,.0f} rows/s)", size,
                     project_s, f"sqlite3 read + executemany ({size / baseline_s:,.0f} rows/s)", baseline_s, 2.0))
    assert row.bounded


WITH_VECTORS = sizes(full=[100_000], ci=[5_000])


def _baseline_import_with_vectors(source_root: Path, dest: Path) -> int:
    """The person's import into a new workspace: the executemany above, then the same texts
    embedded with the same embedder and added to a Chroma collection with the row's fields as
    metadata (what a filtered vector search needs), in batches of 1,000."""
    import chromadb
    from mnemoscope.storage.embedders.choice import default_embedder

    dest.mkdir()
    SqliteSource.open(dest / "memory.db", create=True).close()
    n = _baseline_import(source_root, dest / "memory.db")
    embedder = default_embedder()  # the one a new workspace embeds with (the local model)
    con = sqlite3.connect(f"file:{dest / 'memory.db'}?mode=ro", uri=True)
    client = chromadb.PersistentClient(path=str(dest / "vectors"))
    collection = client.get_or_create_collection("memories", embedding_function=None,
                                                 metadata={"hnsw:space": "cosine"})
    fields = ("layer", "channel", "status", "salience", "confidence", "access_count", "conversations", "created_at",
              "updated_at", "last_accessed", "tags")
    cursor = con.execute(f"SELECT id, content, {', '.join(fields)} FROM memories")
    while chunk := cursor.fetchmany(1000):
        texts = [row[1] for row in chunk]
        collection.add(ids=[row[0] for row in chunk], documents=texts, embeddings=embedder.embed(texts),
                       metadatas=[{**dict(zip(fields, row[2:], strict=True)), "mirror": True} for row in chunk])
    con.close()
    return n


@pytest.mark.parametrize("size", WITH_VECTORS, ids=label)
def test_import_into_a_new_workspace_with_vectors(tmp_path: Path, size: int) -> None:
    """What `mnemoscope import SRC NEW` does by default: memory.db and vectors/ (the local model a
    new workspace embeds with), against executemany plus chromadb's add of the same embeddings."""
    import chromadb  # noqa: F401  (imported once for both sides: the first to run would pay it)

    source = tmp_path / "source"  # a copy: other benchmarks running meanwhile may open the cached one writable
    source.mkdir()
    shutil.copy(_source(size) / "memory.db", source / "memory.db")
    runs = iter(range(100))

    def project() -> None:
        summary = import_store(source, tmp_path / f"project-{next(runs)}")
        assert summary.imported == size

    def baseline() -> None:
        assert _baseline_import_with_vectors(source.resolve(), tmp_path / f"baseline-{next(runs)}") == size

    project_s, baseline_s = _alternating(project, baseline, repeat=1)
    vectors = list((tmp_path).glob("project-*/vectors"))
    assert vectors, "the default import makes the workspace's vectors"
    row = record(Row("transfer", f"import {label(size)} into a new workspace, vectors embedded", size, project_s,
                     "executemany + chromadb add, same embeddings and fields", baseline_s, 1.5))
    assert row.bounded


# -- export --------------------------------------------------------------------------------------

def _baseline_export(db: Path, out: Path) -> int:
    """What a person writes: every row read with sqlite3 and written as the export's line (the
    same keys, values and revision: a hash of the row as stored), newest first."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    n = 0
    with out.open("w", encoding="utf-8") as handle:
        for row in con.execute("SELECT * FROM memories ORDER BY created_at DESC, id DESC"):
            (memory_id, layer, channel, content, created, updated, accessed, access_count, salience, confidence,
             conversations, tags, metadata, status, promoted_from, derived_from, imported_from, _key, md_file,
             vector_state) = row
            meta = json.loads(metadata)
            if md_file:
                meta["md_file"] = md_file
            meta["vector_state"] = vector_state
            handle.write(dumps({
                "id": memory_id, "content": content, "layer": layer, "channel": channel,
                "source": {"kind": "sqlite", "location": f"memory.db:memories/{memory_id}", "path": "memory.db"},
                "created_at": created, "updated_at": updated, "last_accessed": accessed,
                "access_count": access_count, "salience": round(salience, 6), "confidence": round(confidence, 6),
                "conversations": conversations, "tags": json.loads(tags), "status": status,
                "provenance": {"promoted_from": promoted_from, "derived_from": json.loads(derived_from),
                               "imported_from": imported_from},
                "metadata": meta, "revision": hashlib.sha1(repr(row).encode("utf-8")).hexdigest()[:12],
            }) + "\n")
            n += 1
    con.close()
    return n


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@pytest.mark.parametrize("size", SIZES, ids=label)
def test_export_jsonl_against_a_sqlite3_and_json_loop(tmp_path: Path, size: int) -> None:
    from mnemoscope.app.cli import main

    source = _source(size)
    mine, theirs = tmp_path / "export.jsonl", tmp_path / "baseline.jsonl"

    def project() -> None:
        assert main(["export", str(source), str(mine), "--format", "jsonl", "--json"]) == 0

    def baseline() -> None:
        assert _baseline_export(source / "memory.db", theirs) == size

    project_s, baseline_s = _alternating(project, baseline, repeat=1 if FULL else 3)
    assert _digest(mine) == _digest(theirs)
    row = record(Row("transfer", f"export {label(size)} as JSONL to a file", size, project_s,
                     "sqlite3 + json.dumps loop", baseline_s, 1.5, guard=3.0))
    assert row.bounded


_PEAK_RSS = """
import resource, sys
from mnemoscope.app.cli import main
code = main([sys.argv[1], sys.argv[2], sys.argv[3], "--format", "jsonl", "--json"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)
sys.exit(code)
"""


def _export_peak_mib(source: Path, out: Path) -> int:
    done = subprocess.run([sys.executable, "-c", _PEAK_RSS, "export", str(source), str(out)], capture_output=True,
                          text=True, check=True)
    return int(done.stderr.strip().splitlines()[-1])


def test_the_export_runs_in_flat_memory(tmp_path: Path) -> None:
    small, large = (100_000, 1_000_000) if FULL else (2_000, 20_000)
    peaks = {size: _export_peak_mib(_source(size), tmp_path / f"{size}.jsonl") for size in (small, large)}
    print(f"\ntransfer export peak RSS: {label(small)} {peaks[small]} MiB, {label(large)} {peaks[large]} MiB")
    assert (tmp_path / f"{large}.jsonl").stat().st_size > 9 * (tmp_path / f"{small}.jsonl").stat().st_size
    assert peaks[large] - peaks[small] < 16
