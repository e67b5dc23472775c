"""Storage errors split the way a user needs them: each real failure is a StoreError with one
readable sentence and the exit code the command line gives it, and the subclasses carry what a
caller offers instead (the stores a folder wraps, the SQLite file to map)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mnemoscope.storage import Curator, open_store
from mnemoscope.storage.errors import (
    BelowThresholdError,
    LockedError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    StoreFileError,
    UnmappedTableError,
    UnreadableStoreError,
    UnsupportedError,
    WrapsStoresError,
)


def test_the_environments_faults_exit_2_and_the_inputs_exit_1() -> None:
    for error in (UnreadableStoreError, WrapsStoresError, UnmappedTableError, StoreFileError, LockedError):
        assert error.exit_code == 2 and issubclass(error, StoreError), error
    for error in (NotFoundError, ReadOnlyError, UnsupportedError, NothingToDoError, BelowThresholdError):
        assert error.exit_code == 1 and issubclass(error, StoreError), error


def test_a_missing_path_and_a_garbage_file_are_unreadable(tmp_path: Path) -> None:
    with pytest.raises(UnreadableStoreError, match="does not exist") as missing:
        open_store(tmp_path / "nowhere")
    assert missing.value.exit_code == 2
    garbage = tmp_path / "notes.bin"
    garbage.write_bytes(b"\x00\x01 not a store")
    with pytest.raises(UnreadableStoreError, match="Nothing recognisable in file"):
        open_store(garbage)


def test_an_unknown_memory_undo_of_nothing_and_a_read_only_write_each_say_why(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        with pytest.raises(NotFoundError, match="No memory m-nope"):
            store.get("m-nope")
        with pytest.raises(NothingToDoError):
            Curator(store).undo()
    with open_store(demo_path, read_only=True) as store:
        memory = store.page(limit=1)[0]
        with pytest.raises(ReadOnlyError):
            Curator(store).edit(memory.id, content="changed")


def test_the_subclasses_carry_what_to_offer_instead(tmp_path: Path) -> None:
    wraps = WrapsStoresError("holds two", "/home/dana", [("/home/dana/.mem0", "mem0")])
    assert (wraps.folder, wraps.inside, str(wraps)) == ("/home/dana", [("/home/dana/.mem0", "mem0")], "holds two")
    table = tmp_path / "app.db"
    con = sqlite3.connect(table)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    con.close()
    with pytest.raises(UnmappedTableError) as unmapped:
        open_store(table)
    assert unmapped.value.path == str(table) and f"mnemoscope map {table}" in str(unmapped.value)
    below = BelowThresholdError("not yet", {"m-1": ["confidence 0.5 < 0.85"]})
    assert below.unmet == {"m-1": ["confidence 0.5 < 0.85"]} and isinstance(below, UnsupportedError)
