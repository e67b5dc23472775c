"""What a path holds: the native kinds (memory.db, a Chroma directory, workspace markdown) and
every foreign format that answers for it, remembered while the files looked at stay as they were;
and the stores a folder holds a few levels down (``stores_under``, which ``discover`` and the
"no store here, but these inside" answer of ``open_store`` walk).

Each native source's module is imported only where a path holds its file, so detecting a markdown
folder loads neither SQLAlchemy nor Chroma.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import StoreError, UnreadableStoreError
from .formats.registry import FormatMatch, detect_formats
from .looking import RememberedLooks, is_file, names, one_look
from .model import Kind

if TYPE_CHECKING:
    from .table_mapping import TableMapping

VECTORS_DIR = "vectors"
# The native sources' DB_NAME and CHROMA_FILE, spelled here too so that a folder without them is
# detected without importing those sources, nor SQLAlchemy (tests/app/test_cli_startup.py checks that
# the names agree).
DB_NAME = "memory.db"
CHROMA_FILE = "chroma.sqlite3"

# Tool folders worth walking into although they are hidden (.local: the XDG data folder); any other
# dot-folder is skipped.
TOOL_DOT_FOLDERS = (".agenticx", ".openclaw", ".letta", ".mem0", ".agentix", ".crewai", ".langgraph", ".local")
# Never stores, often huge.
SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages", ".git", ".venv", "venv", ".tox", ".cache",
                     ".mnemoscope", "proc", "sys", "dev"})
# A SQLite file beside other files, read through a mapping of one table (formats/sqlite_table.py).
SQLITE_SUFFIXES = frozenset({".db", ".sqlite", ".sqlite3"})
# The table a mapping proposal picks must be named like memories for an unmapped file to be
# listed: an application's own database (settings, caches, browser history) is not.
MEMORY_TABLE_NAME = re.compile(r"memor|fact|knowledge|note|recall", re.IGNORECASE)
_NATIVE_LABELS = {Kind.SQLITE: "memory.db", Kind.CHROMA: "Chroma", Kind.MARKDOWN: "markdown"}


def detect(path: Path) -> dict[Kind, Path]:
    """What store kinds a path holds, and where each one lives."""
    path = Path(path)
    found: dict[Kind, Path] = {}
    if is_file(path):
        if path.name == DB_NAME:
            found[Kind.SQLITE] = path
        elif path.name == CHROMA_FILE:
            found[Kind.CHROMA] = path.parent
        return found
    # A file named memory.db is the native store's (opening it says so if it is no such thing,
    # unless a format claims it); each other source's module is imported only where its file is.
    listed = names(path)
    if DB_NAME in listed and is_file(path / DB_NAME):
        found[Kind.SQLITE] = path / DB_NAME
    for chroma_dir in (path / VECTORS_DIR, path) if VECTORS_DIR in listed or CHROMA_FILE in listed else ():
        if is_file(chroma_dir / CHROMA_FILE):
            from .native.chroma.local import ChromaSource

            if ChromaSource.detect(chroma_dir):
                found[Kind.CHROMA] = chroma_dir
                break
    from .native.markdown.source import MarkdownSource

    if MarkdownSource.detect(path):
        found[Kind.MARKDOWN] = path
    return found


def detect_everything(path: Path) -> tuple[dict[Kind, Path], list[FormatMatch]]:
    """The native kinds and the foreign formats path holds, in one look at the file system; a
    native reading of files a format claims (a mem0 Chroma directory) is left out. The answer
    is remembered while the files it looked at stay as they were (opening the same store again
    costs a few stats)."""
    # Detectors read these too (the user-scope folders under the home folder, AgenticX's workspace root).
    key = "\0".join([os.path.abspath(path), *(os.environ.get(name, "") for name in _DETECTION_ENVIRONMENT)])
    found, matches = _DETECTIONS.answer(key, lambda: _detect_everything(Path(path)))
    return dict(found), list(matches)


def _detect_everything(path: Path) -> tuple[dict[Kind, Path], list[FormatMatch]]:
    with one_look():  # every detector asks about the same few files: list each folder once
        found = detect(path)
        matches = detect_formats(path)
    for match in matches:
        for kind, claimed in match.claims:
            if found.get(kind) == claimed:
                del found[kind]
    return found, matches


_DETECTIONS: RememberedLooks[tuple[dict[Kind, Path], list[FormatMatch]]] = RememberedLooks()
_DETECTION_ENVIRONMENT = ("HOME", "AGX_WORKSPACE_ROOT")


def stores_in(
    roots: Iterable[Path],
    *,
    max_depth: int,
    progress: Callable[[Path], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    max_folders: int | None = None,
) -> list[tuple[Path, str]]:
    """Every store under roots as (path, label), each once, in path order: walked breadth-first,
    a folder that holds a store not walked further. max_folders: stop after looking at that many."""
    found: dict[str, tuple[Path, str]] = {}
    looked = 0

    def stop() -> bool:
        return cancelled() or (max_folders is not None and looked >= max_folders)

    def seen(folder: Path) -> None:
        nonlocal looked
        looked += 1
        if progress is not None:
            progress(folder)

    for root in roots:
        for path, label in _stores_under(Path(root).expanduser(), max_depth, seen, stop):
            found.setdefault(os.path.realpath(path), (path, label))
    return sorted(found.values(), key=lambda item: str(item[0]))


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


def remember_mapping(path: Path, mapping: TableMapping | None) -> Path:
    """Keep mapping for the file (None: forget it), once the file is checked to be no store a
    format already reads. Returns the file the mappings are kept in."""
    from .table_mapping import checked, keep_mapping

    if mapping is not None:
        checked(path, mapping)
        found, matches = detect_everything(Path(path))
        if found or matches:
            raise UnreadableStoreError(
                f"{Path(path).name} is already read as {matches[0].label if matches else 'a Mnemoscope store'}; "
                "a table mapping is only for SQLite files no format recognises."
            )
    return keep_mapping(path, mapping)
