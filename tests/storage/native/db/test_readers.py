"""memory.db's read connections: one per reading thread, reused, bounded, dropped when the file
is replaced, and all closed with the store."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.native.db.readers import MAX_HELD
from mnemoscope.storage.native.db.sqlite_source import SqliteSource


def _fill(root: Path, n: int = 300) -> None:
    source = SqliteSource.open(root / "memory.db", create=True)
    source.insert_memory_rows([source.memory_row(f"fact {i}") for i in range(n)])
    source.close()


def _open_fds() -> int:
    return len(list(Path("/proc/self/fd").iterdir()))


def test_a_thread_reuses_its_connection_and_threads_are_bounded(tmp_path: Path) -> None:
    _fill(tmp_path)
    before = _open_fds()
    with open_store(tmp_path, read_only=True) as store:
        readers = store._workspace.db._readers
        for _ in range(50):
            assert len(store.page(MemoryQuery(), 10)) == 10
        assert len(readers) == 1
        for _ in range(3 * MAX_HELD):  # short-lived threads, as a pool's come and go
            thread = threading.Thread(target=lambda: store.page(MemoryQuery(), 10, 100))
            thread.start()
            thread.join()
        assert len(readers) <= MAX_HELD
        assert _open_fds() - before <= 3 * (MAX_HELD + 2)  # a SQLite connection holds a few files
    assert _open_fds() <= before + 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]  # no -wal or -shm left


def test_a_replaced_file_is_read_anew(tmp_path: Path) -> None:
    _fill(tmp_path / "a", 5)
    _fill(tmp_path / "b", 7)
    with open_store(tmp_path / "a") as store:
        assert store.count(MemoryQuery()) == 5
        shutil.copy(tmp_path / "b" / "memory.db", tmp_path / "a" / "memory.db.new")
        (tmp_path / "a" / "memory.db.new").replace(tmp_path / "a" / "memory.db")
        assert store.count(MemoryQuery()) == 7


def test_a_connection_is_handed_over_only_when_idle_and_still_on_the_file(tmp_path: Path) -> None:
    """The write engine takes this thread's reading connection only when no read is using it and
    the file is still the one it opened; the next read connects again."""
    from mnemoscope.storage.sqlite_files import file_identity

    _fill(tmp_path, 10)
    with open_store(tmp_path) as store:
        readers = store._workspace.db._readers
        assert len(store.page(MemoryQuery(), 5)) == 5
        identity = file_identity(tmp_path / "memory.db")
        with readers.reading() as busy:
            assert readers.hand_over(identity) is None
        assert readers.hand_over((0, 0)) is None
        given = readers.hand_over(identity)
        assert given is busy and len(readers) == 0
        with readers.reading() as again:
            assert again is not given
        given.close()
