"""Finding memory stores without being told where they are.

``discover(roots)`` walks folders breadth-first, asks every store kind and every foreign format
whether a folder holds its store (the same detection ``open_store`` runs) and lists what it
finds: the tool, where, how big, how many memories, when last written. A folder that holds a
store is not walked further (its insides are that store). Nothing is opened for writing: each
store found is opened read-only to count it, then closed.

Without roots it looks where the supported tools write by default: the home folder (a few
levels), their dot-folders (``~/.agenticx``, ``~/.openclaw``, ``~/.letta``, ``~/.mem0``,
``~/.agentix``, ``~/.crewai``) and the XDG data folder (``~/.local/share``, where CrewAI keeps
a project's memory).

A SQLite file that no format reads is listed when a table of it was mapped to memories
(``mnemoscope map``), or when the table its mapping proposal picks is named like memories
(``memories``, ``agent_facts``, ``notes``, ...): such a file is opened by mapping that table.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import StoreError
from .model import Kind
from .query import MemoryQuery

# Tool folders worth walking into although they are hidden (.local: the XDG data folder); any other
# dot-folder is skipped.
TOOL_DOT_FOLDERS = (".agenticx", ".openclaw", ".letta", ".mem0", ".agentix", ".crewai", ".langgraph", ".local")
# Never stores, often huge.
SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages", ".git", ".venv", "venv", ".tox", ".cache",
                     ".mnemoscope", "proc", "sys", "dev"})
DEFAULT_DEPTH = 4
# A SQLite file beside other files, read through a mapping of one table (formats/sqlite_table.py).
SQLITE_SUFFIXES = frozenset({".db", ".sqlite", ".sqlite3"})
# The table a mapping proposal picks must be named like memories for an unmapped file to be
# listed: an application's own database (settings, caches, browser history) is not.
MEMORY_TABLE_NAME = re.compile(r"memor|fact|knowledge|note|recall", re.IGNORECASE)
ALL_STATUSES = MemoryQuery(statuses=())
_NATIVE_LABELS = {Kind.SQLITE: "memory.db", Kind.CHROMA: "Chroma", Kind.MARKDOWN: "markdown"}


@dataclass(frozen=True)
class FoundStore:
    tool: str  # what wrote it, as info names it ("mem0 (Chroma + history.db)", "Mnemoscope workspace (...)")
    path: Path  # what to open
    size: int  # bytes in its files
    last_write: datetime | None
    memories: int | None  # None when it could not be counted (problem says why)
    problem: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "path": str(self.path),
            "size": self.size,
            "last_write": self.last_write.isoformat() if self.last_write else None,
            "memories": self.memories,
            "problem": self.problem,
        }


def human_size(n: float) -> str:
    """Bytes as a person reads them: 812 B, 3.4 KB, 1.2 MB."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def usual_places(home: Path | None = None) -> list[Path]:
    """Where the supported tools keep their stores by default, that exist here."""
    home = Path(home) if home is not None else Path.home()
    data_home = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
    places = [home, *(home / name for name in TOOL_DOT_FOLDERS), data_home]
    return [p for p in dict.fromkeys(places) if p.is_dir()]


def discover(
    roots: Iterable[Path] | None = None,
    *,
    max_depth: int = DEFAULT_DEPTH,
    progress: Callable[[Path], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    count: bool = True,
    max_folders: int | None = None,
) -> list[FoundStore]:
    """Every store under roots (default: usual_places()), each listed once, in path order.
    count=False: the stores are not opened (no counts, sizes or dates); max_folders: stop
    after looking at that many folders."""
    found: dict[str, FoundStore] = {}
    looked = 0

    def stop() -> bool:
        return cancelled() or (max_folders is not None and looked >= max_folders)

    def seen(folder: Path) -> None:
        nonlocal looked
        looked += 1
        if progress is not None:
            progress(folder)

    for root in roots if roots is not None else usual_places():
        for path, label in _stores_under(Path(root).expanduser(), max_depth, seen, stop):
            key = os.path.realpath(path)
            if key not in found:
                found[key] = _described(path, label) if count else FoundStore(label, path, 0, None, None)
    return sorted(found.values(), key=lambda f: str(f.path))


def _stores_under(
    root: Path, max_depth: int, progress: Callable[[Path], None] | None, cancelled: Callable[[], bool]
) -> Iterator[tuple[Path, str]]:
    level = [root]
    for depth in range(max_depth + 1):
        below: list[Path] = []
        for folder in level:
            if cancelled():
                return
            if progress is not None:
                progress(folder)
            label, hidden = _store_label(folder)
            yield from hidden
            if label:
                yield folder, label
            elif not folder.is_file():
                yield from _memory_tables_in(folder)
                if depth < max_depth:
                    taken = {path for path, _label in hidden}
                    below += [p for p in _subfolders(folder) if p not in taken]
        level = below


def _subfolders(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as entries:
            names = sorted(
                e.name for e in entries
                if e.is_dir(follow_symlinks=False) and e.name not in SKIPPED
                and (not e.name.startswith(".") or e.name in TOOL_DOT_FOLDERS)
            )
    except OSError:  # unreadable, vanished: nothing to find there
        return []
    return [folder / name for name in names]


def _store_label(path: Path) -> tuple[str, list[tuple[Path, str]]]:
    """What store path itself holds, as a label ("" for none), and the stores kept in a hidden
    tool folder of path (``~/.agentix``, Letta's ``~/.letta/sqlite.db`` seen from the home
    folder), each at that folder. A format that answers for a store further in does not make
    path a store: the walk finds that one where it is."""
    from .store import detect_everything

    try:
        kinds, matches = detect_everything(path)
    except (OSError, StoreError):
        return "", []
    labels = ["Mnemoscope workspace (" + ", ".join(_NATIVE_LABELS[k] for k in kinds) + ")"] if kinds else []
    hidden: list[tuple[Path, str]] = []
    for match in matches:
        location = Path(match.location)
        below = location.relative_to(path).parts if location.is_relative_to(path) else ()
        if below and below[0].startswith(".") and (path / below[0]).is_dir():
            hidden.append((path / below[0], match.label))
        elif location == path or location.parent == path:
            labels.append(match.label)
    return " + ".join(dict.fromkeys(labels)), hidden


def _memory_tables_in(folder: Path) -> Iterator[tuple[Path, str]]:
    """The SQLite files of a folder that holds no store whose memories are one table of theirs."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries
                           if e.is_file(follow_symlinks=False) and Path(e.name).suffix.lower() in SQLITE_SUFFIXES)
    except OSError:
        return
    for name in names:
        label = _memory_table_label(folder / name)
        if label:
            yield folder / name, label


def _memory_table_label(path: Path) -> str:
    from .sqlite_files import is_sqlite_file
    from .table_mapping import propose_mapping, remembered_mapping

    if not is_sqlite_file(path):
        return ""
    mapping = remembered_mapping(path)
    if mapping is not None:
        return f"SQLite table {mapping.table} (mapped)"
    try:
        proposal = propose_mapping(path)
    except (OSError, StoreError, sqlite3.Error):  # locked, damaged, no table: not listed
        return ""
    if "content" not in proposal.columns or not MEMORY_TABLE_NAME.search(proposal.table):
        return ""
    return f"SQLite memory table {proposal.table} (not mapped yet)"


def _described(path: Path, tool: str) -> FoundStore:
    from .errors import UnmappedTableError
    from .store import open_store

    size, last = _footprint(path)
    try:
        with open_store(path, read_only=True) as store:
            memories: int | None = store.count(ALL_STATUSES)
        problem = ""
    except UnmappedTableError:  # listed for its memory-like table: each row of it is one memory
        memories, problem = _proposed_table_rows(path), ""
    except StoreError as exc:
        memories, problem = None, str(exc)
    return FoundStore(tool, path, size, last, memories, problem)


def _proposed_table_rows(path: Path) -> int | None:
    from .sqlite_files import read_only_connection
    from .table_mapping import propose_mapping, quoted_name

    try:
        table = propose_mapping(path).table
        con = read_only_connection(path)
        try:
            return int(con.execute(f'SELECT count(*) FROM "{quoted_name(table)}"').fetchone()[0])
        finally:
            con.close()
    except (OSError, StoreError, sqlite3.Error):
        return None


def _footprint(path: Path, limit: int = 20_000) -> tuple[int, datetime | None]:
    """Bytes and the newest modification time of the files at path (at most limit files)."""
    size, newest, seen = 0, 0.0, 0
    walk = [(str(path.parent), [], [path.name])] if path.is_file() else os.walk(path)
    for folder, dirs, files in walk:
        dirs[:] = [d for d in dirs if d not in SKIPPED]
        for name in files:
            try:
                st = os.stat(os.path.join(folder, name))
            except OSError:
                continue
            size += st.st_size
            newest = max(newest, st.st_mtime)
            seen += 1
            if seen >= limit:
                break
    return size, (datetime.fromtimestamp(newest, timezone.utc) if newest else None)
