"""What each markdown file of a workspace holds, kept between opens so that an unchanged file is
not read again to be counted.

A file's summary is the number of its blocks under each heading, in file order, and the line its
scan stopped at (a file too big to read whole): enough to count, filter by layer, channel and date
and plan a page without reading the file. Only the files a page shows are read and scanned.

Summaries are kept in Mnemoscope's cache folder (never beside the owner's files), one JSON file per
workspace, each summary under the change token of the file it was made from: size, mtime, ctime
(in nanoseconds) and inode. A summary is trusted again only at that exact token, and only when it
was made well after the file's last change (as git treats a "racily clean" index entry: a file
rewritten within the file system's timestamp granularity of the read could keep its token), so a
file changed since, or changed as it was read, is always read again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .file_blocks import FileBlocks

_FORMAT = 1
SETTLED_NS = 3_000_000_000  # a summary made this long after its file's mtime outlives the timestamp's granularity
_KEPT_INDEXES = 32  # index files kept in the cache folder, the most recently written


Token = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def token_of(st: os.stat_result) -> Token:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@dataclass(frozen=True)
class FileSummary:
    """The blocks of one file per heading, as scanned at token."""

    token: Token
    groups: tuple[tuple[str, int], ...]  # (heading, blocks) per stretch of blocks under one heading
    unread_from: int | None  # 0-based line the scan stopped at, None: read whole
    settled: bool  # made long enough after the file's last change to be trusted at its token later

    @property
    def blocks(self) -> int:
        return sum(n for _, n in self.groups)


def summarize(parsed: FileBlocks, st: os.stat_result, read_at_ns: int) -> FileSummary:
    """The summary of a file scanned into parsed, whose stat (taken before it was read) was st
    and which was read at read_at_ns (time.time_ns(), taken before the read)."""
    groups = tuple((heading, hi - lo) for heading, lo, hi in parsed.groups())
    settled = read_at_ns - st.st_mtime_ns > SETTLED_NS and read_at_ns - st.st_ctime_ns > SETTLED_NS
    return FileSummary(token_of(st), groups, parsed.unread_from, settled)


class FileIndex:
    """The summaries of one workspace's files: those kept from earlier opens, and new ones, which
    save() keeps for the next open."""

    def __init__(self, root: Path, folder: Path | None = None) -> None:
        self._where = (folder or index_folder()) / f"{_key(root)}.json"
        self._root = os.path.realpath(root)
        self._kept: dict[str, FileSummary] = {}
        self._dirty = False
        self._lock = threading.Lock()  # the window reads on several threads
        self._load()

    def get(self, rel: str, token: Token) -> FileSummary | None:
        """rel's summary at token, if one that can be trusted is known."""
        found = self._kept.get(rel)
        return found if found is not None and found.token == token and found.settled else None

    def put(self, rel: str, summary: FileSummary) -> None:
        if not summary.settled:
            return
        with self._lock:
            if self._kept.get(rel) != summary:
                self._kept[rel] = summary
                self._dirty = True

    def forget_except(self, rels: Iterable[str]) -> None:
        """Drop the summaries of files no longer listed."""
        listed = set(rels)
        with self._lock:
            gone = [rel for rel in self._kept if rel not in listed]
            for rel in gone:
                del self._kept[rel]
            self._dirty = self._dirty or bool(gone)

    def save(self) -> None:
        """Keep the summaries for the next open (a failure to write is no error: the files are
        read again then)."""
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            kept = list(self._kept.items())
        files = {rel: [*s.token, s.unread_from, [list(g) for g in s.groups]] for rel, s in kept}
        data = json.dumps({"format": _FORMAT, "root": self._root, "files": files}, ensure_ascii=False,
                          separators=(",", ":"))
        with contextlib.suppress(OSError):
            _replace_unsynced(self._where, data.encode("utf-8"))
            _prune(self._where.parent)

    def _load(self) -> None:
        try:
            data = json.loads(self._where.read_bytes())
            if data.get("format") != _FORMAT or data.get("root") != self._root:
                return
            self._kept = {rel: _summary(entry) for rel, entry in data["files"].items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            self._kept = {}  # none yet, or unreadable: every file is read


def _summary(entry: list[Any]) -> FileSummary:
    size, mtime_ns, ctime_ns, ino, unread_from, groups = entry
    token = (int(size), int(mtime_ns), int(ctime_ns), int(ino))
    unread = None if unread_from is None else int(unread_from)
    return FileSummary(token, tuple((str(h), int(n)) for h, n in groups), unread, settled=True)


def index_folder() -> Path:
    """Where workspaces' file indexes are kept: Mnemoscope's cache folder (under MNEMOSCOPE_HOME
    when that relocates Mnemoscope's own files)."""
    home = os.environ.get("MNEMOSCOPE_HOME")
    if home:
        return Path(home) / "cache" / "markdown-index"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("mnemoscope", "Mnemoscope")) / "markdown-index"


def _key(root: Path) -> str:
    return hashlib.sha1(os.path.realpath(root).encode("utf-8", "surrogateescape")).hexdigest()


def _replace_unsynced(path: Path, data: bytes) -> None:
    """path replaced whole by data (a temp file renamed over it), without waiting for the disk:
    a cache lost or cut short by a crash is read as none (every file is read again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _prune(folder: Path) -> None:
    kept = sorted(folder.glob("*.json"), key=lambda f: f.stat().st_mtime, reverse=True)
    for old in kept[_KEPT_INDEXES:]:
        old.unlink(missing_ok=True)


def now_ns() -> int:
    return time.time_ns()
