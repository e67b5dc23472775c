"""One look at the file system while a path's stores are detected.

Opening a path asks every store kind and every foreign format whether the path holds it, and
they ask about the same few folders and files: is there a memory.db, a chroma.sqlite3, a
MEMORY.md, a ``memory`` folder, which ``*.db`` files are SQLite and what tables they hold.
Within ``one_look()`` each folder is listed once (``os.scandir``, whose entries know whether
they are files or folders without a stat each) and each answer is kept for the rest of the
block; outside it every question goes to the file system as usual. A look lasts one
detection: what changes on disk after it is seen by the next open.

``RememberedLooks`` keeps a whole look's answer (a path's detection) for the next time the same
question is asked, as long as every path the look consulted is as it was then (see there).
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

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


def forget(keep: Callable[[str], bool]) -> None:
    """Within a look, let go of every answer about a path keep(path) refuses (a walk, of the
    folders it has left behind); outside a look, nothing."""
    seen = _LOOK.get()
    if seen is not None:
        for key in [key for key in seen if not keep(key[1])]:
            del seen[key]


def as_path(path: str | Path) -> Path:
    """path as a Path (a Path itself: Path(path) would parse its parts again, for every detector
    asked about every folder of a look)."""
    return path if isinstance(path, Path) else Path(path)


def looked(what: str, path: str | Path, probe: Callable[[], Any], *, state: Callable[[str], Any] | None = None) -> Any:
    """probe()'s answer about path, asked once per look (every time outside one). state: what
    the answer depends on alone (a SQLite file's schema, not its rows), taken before the probe
    reads: a remembered look whose every probe of path gives one holds while state(path) does,
    whatever else changes in the file (see RememberedLooks)."""
    seen = _LOOK.get()
    if seen is None:
        return probe()
    name = os.fspath(path)
    key = (what, name)
    if key not in seen:
        if state is not None:
            kept = seen.get((_STATE, name))
            if kept is None or kept.state is not state:
                kept = seen[(_STATE, name)] = _StateProbed(state, state(name))
            kept.whats.add(what)
        seen[key] = probe()
    return seen[key]


_STATE = "state"  # seen[(_STATE, path)]: the _StateProbed of path's probes that gave a state


class _StateProbed:
    """What path's state was before the probes that gave it (whats) read the file."""

    __slots__ = ("state", "before", "whats")

    def __init__(self, state: Callable[[str], Any], before: Any) -> None:
        self.state, self.before, self.whats = state, before, {_STATE}


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
    listing = seen.get(key, _UNLISTED)
    if listing is _UNLISTED:
        listing = seen[key] = _listing(folder)
    return listing


_UNLISTED = object()


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


def entries(folder: str | Path) -> dict[str, os.DirEntry[str]]:
    """A folder's listing, by name (empty when it is not a folder that can be listed): in a look,
    the look's one listing of it."""
    seen = _LOOK.get()
    if seen is None:
        return _listing(os.fspath(folder)) or {}
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
    folder = as_path(folder)
    listing = looked("listing", os.fspath(folder), lambda: _listing(os.fspath(folder)))
    return [folder / name for name in sorted(listing)] if listing else []


def subfolders(folder: str | Path) -> list[Path]:
    """The folders directly in a folder (following symbolic links), sorted by name."""
    return list(looked("subfolders", folder, lambda: _subfolders(as_path(folder))))


def _subfolders(folder: Path) -> list[Path]:
    listing = entries(folder)
    return [folder / name for name in sorted(listing) if _answer(listing[name].is_dir)]


def _answer(question: Callable[[], bool]) -> bool:
    try:
        return question()
    except OSError:  # a symbolic link whose target vanished
        return False


def consulted() -> list[str]:
    """The paths the current look has asked about: each folder it listed and each path a probe
    (looked) answered for; [] outside a look."""
    seen = _LOOK.get()
    return sorted({path for _what, path in seen}) if seen else []


# A change made just after a look started may carry an mtime no later than one the look saw: file
# times come from a coarse clock (a tick of 1-10 ms). A look that saw a time this close to its
# start is not remembered. Git calls such entries "racily clean".
_RACY_NS = 25_000_000


class RememberedLooks(Generic[T]):
    """Answers of whole looks, each kept while the paths it consulted stay as they were.

    An answer is kept with the state of each path the look consulted: a folder it listed by the
    names it saw there (and which of them are files, which folders), any other path by its
    inode, size, mtime and ctime (and its -wal's, for a SQLite file an agent writes: a new table
    lands there first). Asking again costs a stat per path instead of the look: a file's content
    changes its size or mtime, a chmod its ctime, a folder's names its mtime. A folder whose
    mtime moved is listed again and compared by its names: a -wal that SQLite made while a store
    was read and removed when it was closed leaves the answer standing. A file every probe of
    which gave a state (looked's state: a SQLite file's schema) and has no -wal with frames is
    kept by that state once its stat moves (_Kept): rows written to it leave the answer standing,
    a table added does not. A look whose answer depends on a file must consult it (looked, or a
    listing of its folder), and a probe that reads more of it than its state tells must give none:
    tests/storage/detect/test_remembered_detection.py checks both. At most `size` answers are kept."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._kept: OrderedDict[str, tuple[dict[str, Any], T]] = OrderedDict()
        self._lock = threading.Lock()

    def answer(self, key: str, look: Callable[[], T]) -> T:
        """look()'s answer, from the last look for key if nothing it consulted changed since."""
        with self._lock:
            kept = self._kept.get(key)
        if kept is not None and _unchanged(kept[0]):
            return kept[1]
        if _LOOK.get() is not None:  # an outer look's listings may be older than this look
            return look()
        started = time.time_ns()
        with one_look():
            value = look()
            seen = dict(_LOOK.get() or {})
        states = _states(seen, started - _RACY_NS)
        with self._lock:
            if states is not None:
                self._kept[key] = (states, value)
                self._kept.move_to_end(key)
                while len(self._kept) > self._size:
                    self._kept.popitem(last=False)
            else:
                self._kept.pop(key, None)
        return value


class _Listed:
    """A folder as a look listed it: its names, and its stat stamp (inode, mtime, ctime) when
    taken late enough after the look that an equal stamp means equal names (else None)."""

    __slots__ = ("names", "stamp")

    def __init__(self, names: frozenset[tuple[str, bool, bool]] | None, stamp: tuple[int, int, int] | None) -> None:
        self.names, self.stamp = names, stamp


def _states(seen: dict[tuple[str, str], Any], before_ns: int) -> dict[str, Any] | None:
    """The state of every path a look consulted (seen: its answers), or None when a file time
    is too recent to tell a later change by."""
    states: dict[str, Any] = {}
    for what, path in seen:
        if what == "listing" and seen[(what, path)] is not None:  # (a file's state is its stat)
            st = _stat(path)
            settled = st is not None and st.st_mtime_ns < before_ns and st.st_ctime_ns < before_ns
            states[path] = _Listed(_names(seen[(what, path)]), _stamp(st) if settled else None)
    for _what, path in seen:
        if path not in states:
            kept = _by_state(seen, path, before_ns)
            if kept is not None:
                states[path] = kept
                continue
            state = states[path] = _state(path)
            if not _times_before(state, before_ns):
                return None
    return states


def _by_state(seen: dict[tuple[str, str], Any], path: str, before_ns: int) -> _Kept | None:
    """path kept by the state its probes gave (looked's state), when every probe of it gave one
    and the state is still what it was before they read; None otherwise. Its stat state is kept
    too when its times are earlier than before_ns (see _RACY_NS)."""
    probed = seen.get((_STATE, path))
    if probed is None or any(what not in probed.whats for what, other in seen if other == path):
        return None
    if probed.state(path) != probed.before:  # changed while the look read it
        return None
    stat = _state(path)
    return _Kept(stat if _times_before(stat, before_ns) else None, probed.state, probed.before)


class _Kept:
    """A file kept by a state of its own (looked's state), and its stat state when the look ended:
    an unchanged stat answers at once, a changed one asks the state."""

    __slots__ = ("stat", "state", "value")

    def __init__(self, stat: Any, state: Callable[[str], Any], value: Any) -> None:
        self.stat, self.state, self.value = stat, state, value

    def holds(self, path: str) -> bool:
        asked = time.time_ns()
        stat = _state(path)
        if self.stat is not None and stat == self.stat:
            return True
        if self.state(path) != self.value:
            return False
        self.stat = stat if _times_before(stat, asked - _RACY_NS) else None
        return True


def _unchanged(states: dict[str, Any]) -> bool:
    """Whether every path is as states keep it; a folder listed again or a file whose state was
    asked, found unchanged, is kept by its stat from then on where that stat has settled."""
    for path, was in states.items():
        if isinstance(was, _Listed):
            asked = time.time_ns()
            st = _stat(path)
            if was.stamp is None or _stamp(st) != was.stamp:
                if _names(_listing(path)) != was.names:
                    return False
                was.stamp = _stamp(st) if _settled(st, asked) else None
        elif isinstance(was, _Kept):
            if not was.holds(path):
                return False
        elif _state(path) != was:
            return False
    return True


def _times_before(state: Any, before_ns: int) -> bool:
    """Whether a path's _state (None: nothing there) shows every time of it and its -wal earlier
    than before_ns."""
    return state is None or all(times is None or max(times[2:]) < before_ns for times in state)


def _settled(st: os.stat_result | None, asked_ns: int) -> bool:
    """Whether a stat taken at asked_ns shows times far enough before it (_RACY_NS) that a later
    change cannot keep them."""
    return st is not None and max(st.st_mtime_ns, st.st_ctime_ns) < asked_ns - _RACY_NS


def _names(listing: dict[str, os.DirEntry[str]] | None) -> frozenset[tuple[str, bool, bool]] | None:
    """A folder's names, each with whether it is a folder and whether a file (as is_dir and
    is_file answer: through a symbolic link)."""
    if listing is None:
        return None
    return frozenset((name, _answer(entry.is_dir), _answer(entry.is_file)) for name, entry in listing.items())


def _state(path: str) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int] | None] | None:
    """A path's inode, size, mtime and ctime, and a file's -wal's (no ctime: SQLite running as
    root chowns the -wal to the database's owner at each open); None when there is none."""
    st = _stat(path)
    if st is None:
        return None
    own = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if not stat.S_ISREG(st.st_mode):
        return own, None
    wal = _stat(path + "-wal")
    return own, None if wal is None else (wal.st_ino, wal.st_size, wal.st_mtime_ns, 0)


def _stamp(st: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if st is None else (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None
