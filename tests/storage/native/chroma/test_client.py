"""chromadb's client and the checks made before it may write (client.py): a directory that is
no Chroma database is refused on open, one an older Chroma wrote is read-only (its client would
migrate it for good), a newer Chroma's refused, migrations not as this chromadb wrote them and
links out of the store named; the client's failures are one StoreFileError."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.chroma_dirs import chroma_client
from mnemoscope.storage.errors import StoreError, StoreFileError, UnreadableStoreError
from mnemoscope.storage.native.chroma.client import (
    check_chroma_dir,
    chroma_refusal,
    close_client,
    import_chromadb,
    link_out_of,
    migration_fault,
    migration_versions,
    write_refusal,
)
from mnemoscope.storage.native.chroma.files import ChromaFiles


@pytest.fixture
def chroma_dir(tmp_path: Path) -> Path:
    """A Chroma directory this chromadb wrote, its client closed."""
    path = tmp_path / "chroma"
    client = chroma_client(path)
    client.get_or_create_collection("facts", embedding_function=None).add(ids=["a"], embeddings=[[1.0, 2.0]])
    close_client(client)
    return path


def _sql(path: Path, statement: str) -> None:
    con = sqlite3.connect(path / "chroma.sqlite3", isolation_level=None)
    try:
        con.executescript(statement)
    finally:
        con.close()


def test_a_directory_this_chromadb_wrote_may_be_written(chroma_dir: Path) -> None:
    files = check_chroma_dir(chroma_dir)
    assert isinstance(files, ChromaFiles) and files.path == chroma_dir
    assert write_refusal(files) == "" and migration_fault(files) == ""
    assert {"sysdb", "metadb"} <= set(migration_versions(files))


def test_what_is_no_chroma_database_is_refused_on_open(tmp_path: Path) -> None:
    (tmp_path / "text").mkdir()
    (tmp_path / "text" / "chroma.sqlite3").write_text("not a database")
    with pytest.raises(UnreadableStoreError, match="not SQLite"):
        check_chroma_dir(tmp_path / "text")
    sqlite3.connect(tmp_path / "chroma.sqlite3").execute("CREATE TABLE migrations(dir TEXT, version INT)").connection.close()
    with pytest.raises(UnreadableStoreError, match="no collections, embedding_metadata, embeddings, segments table"):
        check_chroma_dir(tmp_path)


def test_an_older_chromas_directory_may_not_be_written_and_a_newer_ones_is_refused(chroma_dir: Path) -> None:
    latest = max(migration_versions(ChromaFiles(chroma_dir)).items())
    _sql(chroma_dir, f"DELETE FROM migrations WHERE dir = '{latest[0]}' AND version = {latest[1]}")
    assert "older Chroma" in write_refusal(ChromaFiles(chroma_dir))
    assert "migrations where this chromadb wrote" in migration_fault(ChromaFiles(chroma_dir))
    _sql(chroma_dir, f"INSERT INTO migrations (dir, version, filename, sql, hash) "
                     f"VALUES ('{latest[0]}', {latest[1] + 100}, 'x.sql', '', '')")
    with pytest.raises(UnreadableStoreError, match="newer Chroma"):
        write_refusal(ChromaFiles(chroma_dir))


def test_a_migration_recorded_otherwise_than_chromadb_wrote_it_is_named(chroma_dir: Path) -> None:
    _sql(chroma_dir, "UPDATE migrations SET sql = sql || ' ' WHERE dir = 'sysdb' AND version = 3")
    assert migration_fault(ChromaFiles(chroma_dir)).startswith("its record of Chroma migration sysdb/")


def test_a_link_leading_out_of_the_directory_is_named(chroma_dir: Path, tmp_path: Path) -> None:
    assert link_out_of(chroma_dir) == ""
    [segment] = [p for p in chroma_dir.iterdir() if p.is_dir()]
    outside = tmp_path / "outside"
    segment.rename(outside)
    segment.symlink_to(outside)
    assert f"leads out of it, to {outside}" in link_out_of(chroma_dir)


def test_the_clients_failures_are_one_store_error() -> None:
    with pytest.raises(StoreFileError, match="^writing x: boom$"):
        with chroma_refusal("writing x"):
            raise ValueError("boom")
    with pytest.raises(UnreadableStoreError):  # a store error of ours passes as it is
        with chroma_refusal("writing x"):
            raise UnreadableStoreError("ours")
    with pytest.raises(ValueError):  # only_its_own: our own arguments' errors are left alone
        with chroma_refusal("writing x", only_its_own=True):
            raise ValueError("an argument")
    with pytest.raises(StoreFileError, match="writing x: disk"):
        with chroma_refusal("writing x", only_its_own=True):
            raise OSError("disk")
    assert issubclass(StoreFileError, StoreError)


def test_chromadb_is_imported_when_asked_and_a_client_closes(tmp_path: Path) -> None:
    chromadb, settings = import_chromadb()
    client = chromadb.PersistentClient(path=str(tmp_path), settings=settings(anonymized_telemetry=False))
    close_client(client)
    close_client(object())  # a client without close() (chromadb before 1.4): nothing to do


def test_a_chroma_database_left_mid_write_by_a_killed_process_still_opens(tmp_path: Path) -> None:
    """A writer killed inside a transaction leaves a hot journal: a read-only connection cannot
    read past it, so the version check rolls it back first (as Chroma's client would)."""
    db = tmp_path / "chroma.sqlite3"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE migrations(dir TEXT, version INT); INSERT INTO migrations VALUES ('sysdb', 3);")
    con.close()
    killed = (
        "import os, sqlite3\n"
        f"con = sqlite3.connect({str(db)!r}, isolation_level=None)\n"
        "con.execute('PRAGMA cache_size=1'); con.execute('BEGIN IMMEDIATE')\n"
        "for i in range(3000): con.execute(\"INSERT INTO migrations VALUES ('x' || ?, 1)\", (i,))\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", killed], check=False, timeout=60)
    assert (tmp_path / "chroma.sqlite3-journal").exists()
    with pytest.raises(sqlite3.OperationalError):
        migration_versions(ChromaFiles(tmp_path, may_recover=False))  # read-only: reported, not touched
    assert (tmp_path / "chroma.sqlite3-journal").exists()
    assert migration_versions(ChromaFiles(tmp_path)) == {"sysdb": 3}
