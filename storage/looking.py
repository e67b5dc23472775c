"""One look at the file system while a path's stores are detected.

Opening a path asks every store kind and every foreign format whether the path holds it, and
they ask about the same few folders and files: is there a memory.db, a chroma.sqlite3, a
MEMORY.md, a ``memory`` folder, which ``*.db`` files are SQLite and what tables they hold.
Within ``one_look()`` each folder is listed once (``os.scandir``, whose entries know whether
they are files or folders without a stat each) and each answer is kept for the rest of the
block; outside it every question goes to the file system as usual. A look lasts one
detection: what changes on disk after it is seen by the next open.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Collection, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

_LOOK: ContextVar[dict[tuple[str, str], Any] | None] = ContextVar("mnemoscope_one_look", default=None)


@contextlib.contextmanager
def one_look() -> Iterator[None]:
    """Within the block each folder is listed once and each probe (looked) runs once per path,
    however many detectors ask. Nested blocks share the outer look."""
    if _LOOK.get() is not None:
        yield
        return
    token = _LOOK.set({})
    try:
        yield
    finally:
        _LOOK.reset(token)


def looked(what: str, path: str | Path, probe: Callable[[], Any]) -> Any:
    """probe()'s answer about path, asked once per look (every time outside one)."""
    seen = _LOOK.get()
    if seen is None:
        return probe()
    key = (what, os.fspath(path))
    if key not in seen:
        seen[key] = probe()
    return seen[key]


def _entry(path: str | Path) -> os.DirEntry[str] | None | bool:
    """path's entry in its folder's listing; None when the folder lists no such name; False
    when there is no listing to ask (no look, a folder that cannot be listed, a name such as
    '..'), and the caller asks the file system itself."""
    seen = _LOOK.get()
    if seen is None:
        return False
    folder, name = os.path.split(os.fspath(path))
    if name in ("", ".", ".."):
        return False
    listing = _listing_in(seen, folder or ".")
    if listing is None:
        return False
    return listing.get(name)


def _listing_in(seen: dict[tuple[str, str], Any], folder: str) -> dict[str, os.DirEntry[str]] | None:
    key = ("listing", folder)
    if key not in seen:
        seen[key] = _listing(folder)
    return seen[key]


def names(folder: str | Path) -> Collection[str]:
    """The names a folder lists (empty when it is not a folder that can be listed). Detectors
    ask it before they build a path to a file that is usually not there: in a look the answer
    is the folder's one listing, and a name not in it costs no Path and no system call."""
    seen = _LOOK.get()
    if seen is None:
        try:
            return frozenset(os.listdir(folder))
        except OSError:
            return frozenset()
    return _listing_in(seen, os.fspath(folder)) or {}


def _listing(folder: str) -> dict[str, os.DirEntry[str]] | None:
    try:
        with os.scandir(folder) as entries:
            return {entry.name: entry for entry in entries}
    except OSError:
        return None


def is_file(path: str | Path) -> bool:
    """Whether path is a file (following a symbolic link), as Path.is_file answers."""
    entry = _entry(path)
    if entry is False:
        return os.path.isfile(path)
    return entry is not None and _answer(entry.is_file)  # type: ignore[union-attr]


def is_dir(path: str | Path) -> bool:
    """Whether path is a folder (following a symbolic link), as Path.is_dir answers."""
    entry = _entry(path)
    if entry is False:
        return os.path.isdir(path)
    return entry is not None and _answer(entry.is_dir)  # type: ignore[union-attr]


def children(folder: str | Path) -> list[Path]:
    """The entries of a folder, sorted by name; [] when it is not a folder that can be listed."""
    folder = Path(folder)
    listing = looked("listing", os.fspath(folder), lambda: _listing(os.fspath(folder)))
    return [folder / name for name in sorted(listing)] if listing else []


def subfolders(folder: str | Path) -> list[Path]:
    """The folders directly in a folder (following symbolic links), sorted by name."""
    return list(looked("subfolders", folder, lambda: _subfolders(Path(folder))))


def _subfolders(folder: Path) -> list[Path]:
    return [folder / name for name in sorted(names(folder)) if is_dir(os.path.join(folder, name))]


def _answer(question: Callable[[], bool]) -> bool:
    try:
        return question()
    except OSError:  # a symbolic link whose target vanished
        return False
