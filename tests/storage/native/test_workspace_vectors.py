"""A workspace's vectors/ that cannot be read costs its vector copies, not the workspace: memory.db and
the markdown read, info, check and the memory's copies name the folder, and a step that would write a
vector copy is refused before a byte is written. A Chroma directory opened alone says why it cannot."""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
from pathlib import Path

import pytest
from helpers.bad_inputs import snapshot
from helpers.cli_runs import run
from helpers.store_state import sql_rows
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import StoreFileError, UnreadableStoreError
from mnemoscope.storage.native.workspace_vectors import unreadable_folder
from mnemoscope.storage.opening import open_store


def _torn_database(root: Path) -> None:
    db = root / "vectors" / "chroma.sqlite3"
    db.write_bytes(db.read_bytes()[: 3 * 4096 + 100])  # a copy cut off mid-write


def _damaged_header(root: Path) -> None:
    """header.bin's label offset past any element: found only when a vector is read."""
    [header] = (root / "vectors").glob("*/header.bin")
    data = bytearray(header.read_bytes())
    struct.pack_into("<Q", data, 36, 2**64 - 1)
    header.write_bytes(bytes(data))


def _vectors_a_file(root: Path) -> None:
    shutil.rmtree(root / "vectors")
    (root / "vectors").write_bytes(b"not a folder\n")


def _database_a_folder(root: Path) -> None:
    (root / "vectors" / "chroma.sqlite3").unlink()
    (root / "vectors" / "chroma.sqlite3").mkdir()


def _looping_link(root: Path) -> None:
    shutil.rmtree(root / "vectors")
    (root / "vectors").symlink_to("vectors")


def _undecodable_schema(root: Path) -> None:
    """An index name whose bytes are not UTF-8: SQLite's message names it, which Python's sqlite3
    failed to decode (a UnicodeDecodeError out of mem0's detection: exit 3)."""
    db = root / "vectors" / "chroma.sqlite3"
    data = bytearray(db.read_bytes())
    at = data.find(b"INDEX embedding_metadata_int_value") + len(b"INDEX ")
    data[at : at + 3] = b"\xff\xfe\xc3"
    db.write_bytes(bytes(data))


DAMAGE = {"torn chroma.sqlite3": _torn_database, "damaged header.bin": _damaged_header,
          "vectors a file": _vectors_a_file, "chroma.sqlite3 a folder": _database_a_folder,
          "vectors a looping link": _looping_link, "a schema name not UTF-8": _undecodable_schema}


def _row_with_vector(root: Path, channel: str = "webshop") -> str:
    return sql_rows(root, "SELECT id FROM memories WHERE vector_state = 'fresh' AND channel = ? ORDER BY id LIMIT 1",
                    channel)[0][0]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_vectors_that_cannot_be_read_cost_the_vector_copies_alone(demo_path: Path, damage: str, capsys) -> None:
    memory_id = _row_with_vector(demo_path)
    DAMAGE[damage](demo_path)
    files = snapshot(demo_path)
    with open_store(demo_path, read_only=True) as store:
        assert store.get(memory_id) is not None and store.count() > 200  # memory.db and markdown read
        store.page(limit=50)
        # (a damaged HNSW file is found when a vector is read, as the memory's copies read it)
        assert [c["state"] for c in store.copies(memory_id) if c["kind"] == "chroma"] == ["unreadable"]
        [problem] = [p for p in store.problems() if "vector copies are not read" in p]
        assert "a step that would write one is refused" in problem
    for argv in (["ls", demo_path, "--limit", "5"], ["info", demo_path], ["search", demo_path, "webshop release"],
                 ["export", demo_path, demo_path.parent / "out.jsonl", "--format", "jsonl"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    code, out, _err = run(capsys, "show", demo_path, memory_id)
    assert code == 0 and "unreadable" in out
    code, out, _err = run(capsys, "check", demo_path)
    assert code == 1 and "Vector folder that cannot be read" in out
    for argv in (["rm", demo_path, memory_id], ["edit", demo_path, memory_id, "--content", "changed"],
                 ["promote", demo_path, memory_id]):
        code, _out, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1, (argv, err)
        assert "vector copy" in err and "nothing was written" in err, err
    assert snapshot(demo_path) == files


def test_a_memory_without_a_vector_copy_is_still_written(demo_path: Path) -> None:
    memory_id = _row_with_vector(demo_path)
    con = sqlite3.connect(demo_path / "memory.db")  # as an agent leaves a row it could not embed
    con.execute("UPDATE memories SET vector_state = 'none' WHERE id = ?", (memory_id,))
    con.commit()
    con.close()
    _torn_database(demo_path)
    with open_store(demo_path) as store:
        Curator(store).delete([memory_id])
        assert store.get(memory_id).status.value == "deleted"
        other = _row_with_vector(demo_path, "rust-cli")
        with pytest.raises(StoreFileError, match="nothing was written"):
            Curator(store).delete([other])
        assert store.get(other).status.value == "active"


def test_the_vectors_read_again_once_their_files_change(demo_path: Path) -> None:
    """A window open while vectors/ was damaged (an agent rewriting its index) reads them again once
    the files are whole."""
    saved = demo_path.parent / "saved-vectors"
    shutil.copytree(demo_path / "vectors", saved)
    _damaged_header(demo_path)
    memory_id = _row_with_vector(demo_path)
    with open_store(demo_path) as store:
        assert [c["state"] for c in store.copies(memory_id) if c["kind"] == "chroma"] == ["unreadable"]
        shutil.rmtree(demo_path / "vectors")
        shutil.copytree(saved, demo_path / "vectors")
        os.utime(next((demo_path / "vectors").glob("*/header.bin")), ns=(1, 1))
        assert [c["state"] for c in store.copies(memory_id) if c["kind"] == "chroma"] == ["fresh"]
        assert not [p for p in store.problems() if "vector copies" in p]
        Curator(store).delete([memory_id])
    assert sql_rows(demo_path, "SELECT status FROM memories WHERE id = ?", memory_id) == [("deleted",)]


def test_a_chroma_directory_alone_that_cannot_be_read_is_refused_with_its_reason(demo_path: Path, capsys) -> None:
    _torn_database(demo_path)
    with pytest.raises(UnreadableStoreError, match="chroma.sqlite3 is not a"):
        open_store(demo_path / "vectors")
    code, _out, err = run(capsys, "ls", demo_path / "vectors")
    assert code == 2 and err.startswith("mnemoscope: ") and err.count("\n") == 1


def test_what_makes_a_vectors_folder_unreadable(tmp_path: Path) -> None:
    assert unreadable_folder(tmp_path) == ""  # none at all: nothing to say
    (tmp_path / "vectors").mkdir()
    assert unreadable_folder(tmp_path) == ""  # empty: no copies lost
    (tmp_path / "vectors" / "segment").mkdir()
    assert "holds 1 entry but no chroma.sqlite3" in unreadable_folder(tmp_path)
    (tmp_path / "vectors" / "chroma.sqlite3").write_bytes(b"")
    assert unreadable_folder(tmp_path) == ""  # a file: opening it says what it is
    shutil.rmtree(tmp_path / "vectors")
    (tmp_path / "vectors").symlink_to(tmp_path / "gone")
    assert "a link to nothing" in unreadable_folder(tmp_path)
