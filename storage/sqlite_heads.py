"""Reading the first bytes of a SQLite database without cancelling this process's locks on it.

POSIX advisory locks belong to a process and a file, not to a descriptor: closing *any*
descriptor of a file releases every lock the process holds on it, its SQLite connections'
included ("How To Corrupt An SQLite Database File", 2.2). A plain open()/read()/close() of a
memory.db that one of this process's connections has open drops that connection's SHARED lock;
another program's connection that closes next then believes it is the last one, checkpoints,
and deletes the -wal and -shm under the live connection (seen as SQLITE_IOERR_SHORT_READ, a
0-byte -wal and no -shm).

So the head of a database file is read with pread through a descriptor opened once per file
(device, inode) and kept open for the life of the process: it is never closed while SQLite
could hold a lock on that file. Files whose head is not SQLite's are closed at once (SQLite
holds no lock on them). A kept descriptor is closed only once its file is deleted (nobody can
open it any more, so no lock of ours on it protects anything). Past KEPT_AT_MOST live databases
a file is read the plain way again (the old risk, for the 500th database of one process only).
SQLite takes no lock on a -wal file: its header is read the plain way. Windows locks belong to a
handle, and an open file there cannot be deleted: nothing is kept.
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from collections import OrderedDict

SQLITE_MAGIC = b"SQLite format 3\x00"
if sys.platform == "win32":
    KEPT_AT_MOST = 0
else:
    import resource

    KEPT_AT_MOST = max(64, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 2)

_kept: OrderedDict[tuple[int, int], int] = OrderedDict()  # (device, inode) -> descriptor
_lock = threading.Lock()


def database_head(name: str, size: int, st: os.stat_result | None = None) -> bytes | None:
    """The first size bytes of the regular file name (fewer when it is shorter); None when it
    is not there, not a regular file (a FIFO would block the read) or cannot be read."""
    try:
        st = st or os.stat(name)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    key = (st.st_dev, st.st_ino)
    with _lock:
        fd = _kept.get(key)
        if fd is not None:
            _kept.move_to_end(key)
            return _pread(fd, size)
        try:
            fd = os.open(name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            return None
        head = _pread(fd, max(size, len(SQLITE_MAGIC)))
        opened = os.fstat(fd)
        if head is None or head[: len(SQLITE_MAGIC)] != SQLITE_MAGIC or (opened.st_dev, opened.st_ino) != key:
            os.close(fd)  # not a database (or replaced meanwhile): SQLite holds no lock through it
        elif KEPT_AT_MOST and (len(_kept) < KEPT_AT_MOST or _forget_deleted()):
            _kept[key] = fd
        else:
            os.close(fd)
        return None if head is None else head[:size]


def kept_count() -> int:
    """How many database files' descriptors this process keeps."""
    return len(_kept)


def _pread(fd: int, size: int) -> bytes | None:
    try:
        return os.pread(fd, size, 0)
    except OSError:
        return None


def _forget_deleted() -> bool:
    """Close the kept descriptors of deleted files; whether any room was made."""
    gone = [key for key, fd in _kept.items() if os.fstat(fd).st_nlink == 0]
    for key in gone:
        os.close(_kept.pop(key))
    return bool(gone)
