"""Finding memory stores without being told where they are.

``discover(roots)`` walks folders breadth-first, asks every store kind and every foreign format
whether a folder holds its store (the same detection ``open_store`` runs) and lists what it
finds: the tool, where, how big, how many memories, when last written. A folder that holds a
store is not walked further (its insides are that store), nor a folder of SKIPPED (node_modules,
.git, venvs, caches) or a dot-folder no tool writes. The walk lists each folder once, for itself
and for every detector. Nothing is opened for writing: each store is opened read-only to count
it as it is found, then closed.

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
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..opening import SKIPPED, TOOL_DOT_FOLDERS, open_store, stores_in
from ..query import MemoryQuery

DEFAULT_DEPTH = 4
ALL_STATUSES = MemoryQuery(statuses=())


@dataclass(frozen=True)
class FoundStore:
    tool: str  # what wrote it, as info names it ("mem0 (Chroma + history.db)", "Mnemoscope workspace (...)")
    path: Path  # what to open
    size: int  # bytes in its files
    last_write: datetime | None
    memories: int | None  # None when it could not be counted (problem says why) or nothing was read (unread)
    problem: str = ""
    # Parts not read for want of a package (extras.UnreadPart.line): "unread: install mnemoscope[X] (...)".
    unread: tuple[str, ...] = ()

    @property
    def memories_shown(self) -> str:
        return memories_shown(self.memories, self.unread)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "path": str(self.path),
            "size": self.size,
            "last_write": self.last_write.isoformat() if self.last_write else None,
            "memories": self.memories,
            "problem": self.problem,
            "unread": list(self.unread),
        }


def memories_shown(memories: int | None, unread: Iterable[str] = ()) -> str:
    """A store's MEMORIES cell: the count, "?" (not counted), or what would read the rest
    ("unread: install mnemoscope[crewai]", "12 + unread: install mnemoscope[crewai]"): never a 0
    for memories that were not read."""
    said = ", ".join(dict.fromkeys(line.split(" (", 1)[0] for line in unread))
    if memories is None:
        return said or "?"
    return f"{memories} + {said}" if said else str(memories)


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
    described: dict[Path, FoundStore] = {}

    def describe(path: Path, label: str) -> None:
        described[path] = _described(path, label)

    found = stores_in(roots if roots is not None else usual_places(), max_depth=max_depth, progress=progress,
                      cancelled=cancelled, max_folders=max_folders, on_store=describe if count else None)
    return [described.get(path) or FoundStore(label, path, 0, None, None) for path, label in found]


def _described(path: Path, tool: str) -> FoundStore:
    from ..errors import UnmappedTableError
    from ..extras import MissingExtraError

    size, last = _footprint(path)
    unread: tuple[str, ...] = ()
    try:
        with open_store(path, read_only=True) as store:
            memories: int | None = store.count(ALL_STATUSES)
            unread = tuple(part.line for part in store.unread())
        problem = ""
    except UnmappedTableError:  # listed for its memory-like table: each row of it is one memory
        memories, problem = _proposed_table_rows(path), ""
    except MissingExtraError as exc:  # nothing read: no count, what would read it instead
        memories, problem, unread = None, "", tuple(part.line for part in exc.unread)
    except StoreError as exc:
        memories, problem = None, str(exc)
    return FoundStore(tool, path, size, last, memories, problem, unread)


def _proposed_table_rows(path: Path) -> int | None:
    from ..sqlite_files import read_only_connection
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
