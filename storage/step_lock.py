"""One lock per store across processes, held for the whole of a step that writes more than one
copy (memory.db, vectors, markdown): two curators (command line, window, an agent embedding
the API) never interleave their steps, recovery never undoes a step another process is still
writing, and a reader that finds a step unfinished can tell a live one from a crashed one.

The lock is flock(2) on the store's folder itself, as atomic_file.folder_lock takes for a
file's rewrite: no lock file is left in the user's folder, and the kernel releases it when its
holder dies. Within one process it is re-entrant for the thread holding it (folder_lock on that
folder is then already held); another thread waits for it as another process does.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import LockedError
from .sqlite_files import file_identity

try:
    import fcntl
except ImportError:  # Windows: the in-process lock alone
    fcntl = None  # type: ignore[assignment]

STEP_LOCK_TIMEOUT = 30.0  # seconds a step waits for another process's step to finish
_POLL = 0.02


@dataclass
class _Held:
    lock: threading.RLock = field(default_factory=threading.RLock)
    owner: int | None = None  # the thread holding it
    depth: int = 0
    fd: int | None = None


_HELD: dict[tuple[int, int], _Held] = {}
_HELD_GUARD = threading.Lock()


def _slot(key: tuple[int, int]) -> _Held:
    with _HELD_GUARD:
        return _HELD.setdefault(key, _Held())


def held_here(folder: Path) -> bool:
    """Whether this thread holds the step lock of folder (so its flock is already taken)."""
    key = file_identity(folder)
    held = _HELD.get(key) if key is not None else None
    return held is not None and held.owner == threading.get_ident() and held.depth > 0


@contextlib.contextmanager
def step_lock(folder: Path, *, timeout: float = STEP_LOCK_TIMEOUT, label: str | None = None) -> Iterator[None]:
    """Hold the store's step lock; LockedError naming the holder after timeout seconds."""
    key = file_identity(folder)
    if key is None:  # a server's store, whose folder in Mnemoscope's data folder is made on its first write
        with contextlib.suppress(OSError):
            os.makedirs(folder, exist_ok=True)
        key = file_identity(folder)
    if key is None:  # no folder to lock on: nothing to serialise on
        yield
        return
    held = _slot(key)
    deadline = time.monotonic() + timeout
    if not held.lock.acquire(timeout=max(timeout, 0.0)):
        raise _locked(folder, label, timeout, None)
    try:
        if held.depth == 0:
            held.fd = _flock(folder, fcntl.LOCK_EX if fcntl is not None else 0, deadline, label, timeout)
        held.owner = threading.get_ident()
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                held.owner = None
                if held.fd is not None:
                    os.close(held.fd)  # releases the flock
                    held.fd = None
    finally:
        held.lock.release()


@contextlib.contextmanager
def between_steps(folder: Path, *, timeout: float = STEP_LOCK_TIMEOUT, label: str | None = None) -> Iterator[None]:
    """Hold off every process's next step on folder's store while the block runs (a shared
    hold, taken once no step is running); LockedError naming the holder after timeout seconds.
    This thread's own step does not count."""
    if held_here(folder) or fcntl is None:
        yield
        return
    fd = _flock(folder, fcntl.LOCK_SH, time.monotonic() + timeout, label, timeout)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _flock(folder: Path, mode: int, deadline: float, label: str | None, timeout: float) -> int | None:
    if fcntl is None:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None  # a folder this process cannot open: no other process can be told apart either
    try:
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _locked(folder, label, timeout, fd) from None
                time.sleep(_POLL)
            except OSError:  # a file system without flock on folders (some NFS): this process's lock alone
                os.close(fd)
                return None
    except BaseException:
        os.close(fd)
        raise


def _locked(folder: Path, label: str | None, timeout: float, fd: int | None) -> LockedError:
    holder = _holder(fd) if fd is not None else "another thread of this process"
    return LockedError(
        f"{label or folder} is busy: {holder or 'another process'} is in the middle of a curation step "
        f"(waited {timeout:g} s); nothing was written. Try again when it has finished."
    )


def _holder(fd: int) -> str | None:
    """The process holding the flock on fd's file, from /proc/locks (Linux), as 'process PID (command)'."""
    try:
        st = os.fstat(fd)
        wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            for line in handle:
                parts = line.split()
                if len(parts) > 5 and parts[1] == "FLOCK" and parts[5] == wanted and parts[4] != str(os.getpid()):
                    return f"process {parts[4]} ({_command(parts[4])})"
    except (OSError, ValueError):
        return None
    return None


def _command(pid: str) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    words = [w.decode("utf-8", "replace") for w in raw.split(b"\0") if w]
    text = " ".join(Path(words[0]).name if i == 0 else w for i, w in enumerate(words))
    return text if len(text) <= 80 else text[:79] + "…"
