"""A damaged Chroma directory: reads skip or report what they cannot use, and a curation step
that would write there is refused before anything is written (chromadb's client writes to
chroma.sqlite3 as it opens, even when it then fails), with one line and exit 2."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import struct
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.config import Settings
from mnemoscope.app.cli import main
from mnemoscope.storage import Curator, StoreError, UnreadableStoreError, open_store
from mnemoscope.storage.native.chroma.files import ChromaFiles

BAD_QUEUED_ROW = (
    "INSERT INTO embeddings_queue (seq_id, operation, topic, id, vector, encoding, metadata) "
    "SELECT 999999, 0, topic, 'queued-bad', x'0102', 'FLOAT32', '{bad' FROM embeddings_queue LIMIT 1"
)


def _hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under root, links not followed (a link is hashed as its target's name)."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link to " + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _sql(db: Path, statement: str) -> None:
    con = sqlite3.connect(db, isolation_level=None)
    try:
        con.executescript(statement)
    finally:
        con.close()


def _mirrored_memory(store: Path) -> str:
    """A memory.db memory that has a vector copy in vectors/."""
    con = sqlite3.connect(f"file:{store / 'memory.db'}?mode=ro&immutable=1", uri=True)  # creates no -wal
    try:
        return con.execute("SELECT id FROM memories WHERE vector_state = 'fresh' ORDER BY id LIMIT 1").fetchone()[0]
    finally:
        con.close()


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    code = main(list(argv))
    return code, capsys.readouterr().err.strip().splitlines()


def _refused_without_a_byte_written(capsys: pytest.CaptureFixture[str], store: Path, *also: Path) -> str:
    """rm of a memory with a vector copy: exit 2, one line, no file of the store (or of also) changed."""
    memory_id = _mirrored_memory(store)
    before = [_hashes(folder) for folder in (store, *also)]
    code, err = _cli(capsys, "rm", str(store), memory_id)
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("mnemoscope: ") and "nothing was written" in err[0], err
    assert [_hashes(folder) for folder in (store, *also)] == before
    return err[0]


@pytest.mark.parametrize("config", ["{not json", "[1, 2]"])
def test_a_collection_configuration_chromadb_cannot_load_refuses_the_step(
    demo_path: Path, capsys: pytest.CaptureFixture[str], config: str
) -> None:
    _sql(demo_path / "vectors" / "chroma.sqlite3", f"UPDATE collections SET config_json_str = '{config}'")
    line = _refused_without_a_byte_written(capsys, demo_path)
    assert str(demo_path / "vectors") in line and "config_json_str" in line


@pytest.mark.parametrize(
    "damage,said",
    [
        ("UPDATE collections SET dimension = -1", "dimension of -1"),
        ("UPDATE collections SET dimension = 3", "vectors of 3 numbers where its index holds vectors of"),
        ("DELETE FROM segments WHERE scope = 'VECTOR'", "no vector segment"),
    ],
)
def test_a_collection_whose_segments_or_dimension_do_not_fit_refuses_the_step(
    demo_path: Path, capsys: pytest.CaptureFixture[str], damage: str, said: str
) -> None:
    _sql(demo_path / "vectors" / "chroma.sqlite3", damage)
    assert said in _refused_without_a_byte_written(capsys, demo_path)


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE migrations SET hash = 'x' || substr(hash, 2) WHERE dir = 'metadb' AND version = 5",
        "UPDATE migrations SET sql = sql || ' ' WHERE dir = 'sysdb' AND version = 3",
    ],
)
def test_a_migration_record_chromadb_would_call_inconsistent_refuses_the_step(
    demo_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """What bit flips in chroma.sqlite3 did (chromadb: "Inconsistent hash", after writing)."""
    _sql(demo_path / "vectors" / "chroma.sqlite3", damage)
    line = _refused_without_a_byte_written(capsys, demo_path)
    assert "migration" in line


def test_a_malformed_queued_row_is_left_out_of_reads_reported_and_refuses_the_step(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sql(demo_path / "vectors" / "chroma.sqlite3", BAD_QUEUED_ROW)
    before = _hashes(demo_path)
    code, err = _cli(capsys, "search", str(demo_path), "webshop release", "--k", "5")
    assert code == 0, err
    files = ChromaFiles(demo_path / "vectors")
    [col] = files.collections()
    vectors = files.vectors(col)
    assert "queued-bad" not in vectors.ids and vectors.matrix().shape[1] == 256
    assert "queued-bad" not in dict(files.metadata(col))
    with open_store(demo_path, read_only=True) as store:
        assert any("queued operation 999999" in p and "left out" in p for p in store.problems())
    assert _hashes(demo_path) == before
    line = _refused_without_a_byte_written(capsys, demo_path)
    assert "queued operation 999999" in line


def test_a_queued_vector_of_another_dimension_is_left_out(demo_path: Path) -> None:
    one = struct.pack("<2f", 1.0, 1.0)
    con = sqlite3.connect(demo_path / "vectors" / "chroma.sqlite3")
    con.execute(
        "INSERT INTO embeddings_queue (seq_id, operation, topic, id, vector, encoding, metadata) "
        "SELECT 999999, 0, topic, 'short', ?, 'FLOAT32', NULL FROM embeddings_queue LIMIT 1",
        (one,),
    )
    con.commit()
    con.close()
    files = ChromaFiles(demo_path / "vectors")
    [col] = files.collections()
    assert "short" not in files.vectors(col).ids
    assert any("2 numbers" in fault for fault in files.queue_faults(col))


def test_undo_into_a_directory_damaged_since_is_refused_before_the_journal(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory_id = _mirrored_memory(demo_path)
    assert _cli(capsys, "rm", str(demo_path), memory_id)[0] == 0
    _sql(demo_path / "vectors" / "chroma.sqlite3", BAD_QUEUED_ROW)
    before = _hashes(demo_path)
    code, err = _cli(capsys, "undo", str(demo_path))
    assert code == 2 and len(err) == 1 and "nothing was written" in err[0], err
    assert _hashes(demo_path) == before


def test_a_chroma_failure_mid_step_puts_every_copy_back_and_is_the_stores_fault(demo_path: Path) -> None:
    """Damage no check finds before the client opens (here a foreign trigger refusing Chroma's log
    writes) still fails as the store's fault, exit 2, and the memory.db row written before is put back."""
    _sql(
        demo_path / "vectors" / "chroma.sqlite3",
        "CREATE TRIGGER no_more BEFORE INSERT ON embeddings_queue BEGIN SELECT RAISE(ABORT, 'no more writes'); END;",
    )
    memory_id = _mirrored_memory(demo_path)
    with open_store(demo_path) as store:
        with pytest.raises(StoreError, match="no more writes") as raised:
            Curator(store).delete(memory_id)
        assert raised.value.exit_code == 2 and str(demo_path / "vectors") in str(raised.value)
        assert store.get(memory_id).status.value == "active"


# -- the HNSW files -----------------------------------------------------------------------------

DIM = 16


@pytest.fixture(scope="module")
def _persisted_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A collection past Chroma's persist threshold (1000 records): its vectors are in the HNSW files."""
    path = tmp_path_factory.mktemp("hnsw") / "chroma"
    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    col = client.get_or_create_collection("facts", embedding_function=None, metadata={"hnsw:space": "l2"})
    vectors = np.random.default_rng(3).normal(size=(1100, DIM)).astype(np.float32)
    for start in range(0, 1100, 500):
        ids = range(start, min(1100, start + 500))
        col.add(ids=[f"f{i}" for i in ids], embeddings=vectors[start : start + 500].tolist(),
                documents=[f"fact {i}" for i in ids])
    del col, client
    return path


HEADER_FIELDS = {"max_elements": 12, "cur_element_count": 20, "size_data_per_element": 28,
                 "label_offset": 36, "offset_data": 44}


@pytest.mark.parametrize("field", list(HEADER_FIELDS))
@pytest.mark.parametrize("value", [0, 2**40, 2**64 - 1])
def test_an_hnsw_header_that_does_not_fit_its_files_is_one_clear_error(
    _persisted_index: Path, tmp_path: Path, field: str, value: int
) -> None:
    path = tmp_path / "chroma"
    shutil.copytree(_persisted_index, path)
    [header] = path.glob("*/header.bin")
    data = bytearray(header.read_bytes())
    struct.pack_into("<Q", data, HEADER_FIELDS[field], value)
    header.write_bytes(bytes(data))
    files = ChromaFiles(path)
    [col] = files.collections()
    try:
        vectors = files.vectors(col)
    except UnreadableStoreError as exc:
        assert "header.bin" in str(exc) or "data_level0.bin" in str(exc)
    else:  # a header its files still fit reads as what it says: a bigger capacity, or no element yet
        assert (field, value) in {("max_elements", 2**40), ("max_elements", 2**64 - 1), ("cur_element_count", 0)}
        assert vectors.matrix().shape[1:] in ((DIM,), (0,))


def test_an_hnsw_header_of_an_empty_index_with_a_huge_element_size_refuses_the_step(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The memory still shows (its vector copy said unreadable: test_workspace_vectors.py); a step
    that would write the copy is refused."""
    [header] = (demo_path / "vectors").glob("*/header.bin")
    data = bytearray(header.read_bytes())
    struct.pack_into("<Q", data, HEADER_FIELDS["size_data_per_element"], 2**64 - 1)
    header.write_bytes(bytes(data))
    memory_id = _mirrored_memory(demo_path)
    before = _hashes(demo_path)
    code, err = _cli(capsys, "show", str(demo_path), memory_id)  # the memory reads; its vector copy cannot
    assert code == 0, err
    code, err = _cli(capsys, "rm", str(demo_path), memory_id)
    assert code == 2 and len(err) == 1 and "header.bin" in err[0] and "nothing was written" in err[0], err
    assert _hashes(demo_path) == before


# -- links out of the store ------------------------------------------------------------------------


def test_vectors_linked_out_of_the_store_are_read_but_never_written(
    demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.move(demo_path / "vectors", outside / "vectors")
    (demo_path / "vectors").symlink_to(outside / "vectors")
    memory_id = _mirrored_memory(demo_path)
    code, err = _cli(capsys, "show", str(demo_path), memory_id)
    assert code == 0, err
    with open_store(demo_path, read_only=True) as store:
        assert store.embedding_of(memory_id) is not None
    line = _refused_without_a_byte_written(capsys, demo_path, outside)
    assert str(outside / "vectors") in line and "out of the store" in line


def test_a_segment_folder_linked_out_of_the_chroma_directory_makes_it_read_only(
    demo_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    [segment] = [p for p in (demo_path / "vectors").iterdir() if p.is_dir()]
    shutil.move(segment, outside / segment.name)
    segment.symlink_to(outside / segment.name)
    with open_store(demo_path) as store:
        reason = store._workspace.vectors.capabilities().read_only_reason
        assert segment.name in reason and "leads out" in reason
    _refused_without_a_byte_written(capsys, demo_path, outside)


def test_a_healthy_directory_is_still_written(demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memory_id = _mirrored_memory(demo_path)
    assert _cli(capsys, "rm", str(demo_path), memory_id) == (0, [])
    with open_store(demo_path, read_only=True) as store:
        assert store.get(memory_id).status.value == "deleted"
        snap = store._workspace.vectors.read_record(f"vec:memories:{memory_id}")
        assert snap is not None and snap["metadata"]["status"] == "deleted"


HOLD = """
import sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.read()
"""


def test_a_step_refused_at_its_journal_entry_has_not_started_chromas_client(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The client writes to chroma.sqlite3 as it opens: it starts at the first write, after the
    journal entry, so a step refused there (memory.db held by another program) changes nothing."""
    import subprocess
    import sys

    memory_id = _mirrored_memory(demo_path)
    before = _hashes(demo_path / "vectors")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(demo_path / "memory.db")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        code, err = _cli(capsys, "rm", str(demo_path), memory_id)
    finally:
        holder.stdin.close()  # type: ignore[union-attr]
        holder.wait(10)
    assert code == 2 and len(err) == 1 and "locked" in err[0], err
    assert _hashes(demo_path / "vectors") == before


def _verdicts(db: Path) -> tuple[str, str]:
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute("PRAGMA quick_check(1)").fetchone()[0], con.execute("PRAGMA integrity_check(1)").fetchone()[0]
    finally:
        con.close()


def test_a_value_that_no_longer_matches_its_index_refuses_the_step(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flipped bit inside a stored value passes quick_check; chromadb then fails only after it
    has written its log (fuzzer case 1073). integrity_check sees the row missing from its index."""
    db = demo_path / "vectors" / "chroma.sqlite3"
    original = db.read_bytes()
    needle = _mirrored_memory(demo_path).encode()
    at = -1
    while True:
        at = original.find(needle, at + 1)
        assert at >= 0, "no copy of the id whose change only integrity_check sees"
        damaged = bytearray(original)
        damaged[at + len(needle) - 1] ^= 0x01
        db.write_bytes(bytes(damaged))
        quick, full = _verdicts(db)
        if quick == "ok" and full != "ok":
            break
    assert "is damaged" in _refused_without_a_byte_written(capsys, demo_path)
