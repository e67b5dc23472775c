"""Atomic file replacement: write a temp file beside the target, fsync, rename."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from .errors import ConflictError
from .step_lock import held_here

try:
    import fcntl
except ImportError:  # Windows: no advisory folder lock; the re-checks still hold
    fcntl = None  # type: ignore[assignment]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with _replaced(path, "wb") as handle:
        handle.write(data)


@contextlib.contextmanager
def atomic_text_writer(path: Path, buffering: int = 1 << 20) -> Iterator[TextIO]:
    """A UTF-8 text file that appears at path whole when the block ends, and not at all when it
    raises: written beside it as it is produced (never held in memory), fsynced, renamed."""
    with _replaced(path, "w", encoding="utf-8", newline="", buffering=buffering) as handle:
        yield handle


@contextlib.contextmanager
def _replaced(path: Path, mode: str, **options: Any) -> Iterator[Any]:
    """A file written beside path (keeping path's permissions), fsynced and renamed over it when
    the block ends; removed, and path untouched, when the block raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    permissions = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **options) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, permissions)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """An advisory lock on a folder (flock on its descriptor: no lock file is left behind), taken by
    every Mnemoscope process writing files there; tools that do not take it are caught by rewrite()'s
    re-checks instead. Within a step, the store's step lock (step_lock.py) is that flock already."""
    if held_here(folder):
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def rewrite(
    path: Path, transform: Callable[[bytes], bytes], *, lines_appended_commute: bool = False, patience: float = 5.0
) -> bytes:
    """Replace path with transform(its bytes), atomically, never losing what another writer
    (an agent appending to the file) wrote meanwhile.

    Every version of the file this call sees (the one it read, each one it wrote) is kept open.
    Bytes appended to the file before the rename are folded into what the transform works on.
    After the rename, an old version may still be open for writing by a writer that opened it
    before (its append would land in a file nobody reads any more): we wait until no one holds
    it open for writing (a read lease, Linux), read what reached it, and write again with it. A
    version changed other than by appending is a conflict: ConflictError, and the file keeps the
    other writer's bytes. transform raises to refuse (ConflictError when what it was to change is
    gone). With lines_appended_commute, transform(base + lines) == transform(base) + lines for
    whole lines appended (a splice of earlier lines), so appended lines are added without running
    transform again. Returns the bytes written."""
    path = Path(path)
    with folder_lock(path.parent):
        versions: list[tuple[BinaryIO | None, bytes]] = []  # each inode this call saw, and its bytes then
        try:
            handle = _open_or_none(path)
            base = handle.read() if handle is not None else b""  # the file as the other writers mean it
            versions.append((handle, base))
            data: bytes | None = None

            def add(extra: bytes) -> None:
                nonlocal base, data
                whole_lines = not base or base.endswith((b"\n", b"\r"))
                base += extra
                data = data + extra if data is not None and lines_appended_commute and whole_lines else None

            # Give up (nothing written) after `patience` seconds of a file that keeps changing; once
            # this call has written, it keeps going (up to 6x longer) until no appended byte is lost.
            start, wrote = time.monotonic(), False
            while time.monotonic() - start < patience * (6 if wrote else 1):
                live, seen = versions[-1]
                now = _read_or_empty(path)
                if now != seen:  # appended to since we last looked: theirs, keep it
                    versions[-1] = (live, now)
                    add(_appended(seen, now))
                    continue
                if data is None:
                    data = transform(base)
                if _read_or_empty(path) != seen:  # written while the transform ran: look again first
                    continue
                atomic_write_bytes(path, data)
                wrote = True
                versions.append((_open_or_none(path), data))
                lost = b""
                for i, (version, before) in enumerate(versions[:-1]):
                    _wait_for_writers(version)
                    after = _read_handle(version, before)
                    if not after.startswith(before):  # rewritten in place by another writer: theirs stays
                        atomic_write_bytes(path, after)
                        raise _Changed()
                    lost += _appended(before, after)
                    versions[i] = (version, after)
                if not lost:
                    return data
                add(lost)
        except _Changed:
            pass
        finally:
            for version, _ in versions:
                if version is not None:
                    version.close()
    raise ConflictError(
        f"{path.name} was changed by another program while Mnemoscope wrote it; its version was kept "
        "and nothing of this step was written there. Reload and try again."
    )


class _Changed(Exception):
    """The file changed other than by appending while rewrite() worked on it."""


def _appended(before: bytes, after: bytes) -> bytes:
    if not after.startswith(before):
        raise _Changed()
    return after[len(before) :]


def _wait_for_writers(handle: BinaryIO | None, timeout: float = 2.0) -> None:
    """Until no process holds this (replaced) file open for writing: a read lease is granted
    only then. Where leases are not available, a short grace period instead."""
    if handle is None:
        return
    lease = getattr(fcntl, "F_SETLEASE", None) if fcntl is not None else None
    if lease is None:
        time.sleep(0.02)
        return
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.fcntl(handle.fileno(), lease, fcntl.F_RDLCK)
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise _Changed() from None
            time.sleep(0.001)
            continue
        except OSError:  # a file system without leases
            time.sleep(0.02)
            return
        fcntl.fcntl(handle.fileno(), lease, fcntl.F_UNLCK)
        return


def _read_handle(handle: BinaryIO | None, seen: bytes) -> bytes:
    if handle is None:
        return seen
    handle.seek(0)
    return handle.read()


def _open_or_none(path: Path) -> BinaryIO | None:
    try:
        return open(path, "rb")
    except FileNotFoundError:
        return None


def _read_or_empty(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""
