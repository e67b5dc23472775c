"""The workspace's ``vectors/`` folder as a part whose failure costs the vectors, not the workspace.

A Chroma directory whose files cannot be read (chroma.sqlite3 corrupt, torn or a newer Chroma's;
an HNSW file or the index's label map damaged; ``vectors`` a file, a dangling or looping link, a
folder that cannot be listed; chroma.sqlite3 a folder) leaves memory.db and the workspace's
markdown readable: WorkspaceVectors stands for the folder, hands the workspace's reads to its
ChromaSource and, once one of them fails (or when the folder could not be opened at all), answers
every read as an empty part, says why (``fault``, problems(), the check's ``unreadable-vectors``)
and refuses every write to it. The workspace refuses each step that would write a memory's
vector copy (workspace.py), so that no step leaves the copies out of step.

A fault found by a read holds while the folder's files stay as they were; once they change the
folder is read again (a window open while an agent rewrites its index files is not left without
vectors). A folder that could not be opened at all is so until the store is opened again.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..consistency_report import ERROR, FindingKind, register_kind
from ..errors import StoreFileError, UnreadableStoreError
from ..model import Kind
from ..source import Capabilities, Change

if TYPE_CHECKING:
    from .chroma.local import ChromaSource

VECTORS_DIR = "vectors"
CHROMA_FILE = "chroma.sqlite3"
# What a read of damaged Chroma files raises: ours, SQLite's (a message that is not UTF-8 included),
# the file system's.
READ_FAILURES: tuple[type[BaseException], ...] = (UnreadableStoreError, sqlite3.Error, OSError, UnicodeDecodeError)
UNREADABLE_VECTORS = register_kind(FindingKind(
    "unreadable-vectors", "Vector folder that cannot be read", ERROR,
    advice="restore vectors/ from a backup (or move it aside, giving up the vector copies it held); until then "
           "the vector copies are not read, and a step that would write one is refused",
))

# The reads the workspace and the store make of their vectors, and what each answers for a folder
# that cannot be read: a part with no records.
_EMPTY: dict[str, Callable[[], Any]] = {
    "count": lambda: 0,
    "page": list,
    "get": lambda: None,
    "revisions": dict,
    "counts_by": dict,
    "bin_counts": dict,
    "keyword_search": list,
    "document_frequencies": lambda: (0, {}),
    "vector_search": list,
    "vector_collections": list,
    "collections": list,
    "record_count": lambda: 0,
    "embedding_function_info": dict,
    "embedder_for": lambda: None,
    "embedding_of": lambda: None,
    "read_record": lambda: None,
    "stale_record_ids": list,
    "stale_ids": list,
    "metadata_index": list,
    "problems": list,
}


class WorkspaceVectors:
    """A workspace's Chroma directory: its ChromaSource while that reads, an empty part that says why
    once it does not."""

    kind = Kind.CHROMA
    format = "chroma"
    label = "Chroma directory"

    def __init__(self, path: Path, source: ChromaSource | None = None, fault: str = "") -> None:
        self.__dict__.update(path=Path(path), source=source, fault=fault,
                             _fault_state=_state(Path(path)) if fault else None)

    @classmethod
    def unreadable(cls, path: Path, fault: str) -> WorkspaceVectors:
        """A folder that could not be opened at all."""
        return cls(path, None, fault)

    # -- what is handed on ----------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        empty = _EMPTY.get(name)
        if empty is not None:
            return lambda *args, **kwargs: self._read(name, empty, args, kwargs)
        if self._current() is None:
            raise AttributeError(f"{name!r}: {self.path} could not be read")
        return getattr(self.source, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "embedder_override":
            if self.source is not None:
                self.source.embedder_override = value
            return
        self.__dict__[name] = value

    def _read(self, name: str, empty: Callable[[], Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        source = self._current()
        if source is not None:
            try:
                return getattr(source, name)(*args, **kwargs)
            except READ_FAILURES as exc:
                self.lose(exc)
        if name == "get":  # one memory asked for by its id: not "no such memory", but why it cannot be read
            raise UnreadableStoreError(f"{args[0]} is kept in {self.path}, which cannot be read now "
                                       f"({self.fault.rstrip('.')}).")
        return empty()

    def _current(self) -> ChromaSource | None:
        """The ChromaSource to read, None while the fault holds: the files as they were then (a
        folder that could not be opened at all, until the store is opened again)."""
        if not self.fault:
            return self.source
        if self.source is None:
            return None
        state = _state(self.path)
        if state == self._fault_state:
            return None
        self.__dict__.update(_fault_state=state, fault="")
        return self.source

    def lose(self, exc: BaseException) -> None:
        """A read failed: the folder answers as empty, and says why, until its files change."""
        self.__dict__.update(fault=failure_text(self.path, exc), _fault_state=_state(self.path))

    # -- the part's own answers -----------------------------------------------------------------

    @property
    def root(self) -> Path:
        return self.path

    def problems(self) -> list[str]:
        found = self._read("problems", list, (), {})
        if self.fault:
            return [f"{self.fault.rstrip('.')}: the vector copies are not read, and a step that would write one "
                    "is refused"]
        return list(found)

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        source = self._current()
        if source is None:
            return Capabilities(read_only=True, read_only_reason=self.fault)
        return source.capabilities(record_id)

    def change_token(self) -> str:
        source = self._current()
        if source is not None:
            try:
                return source.change_token()
            except READ_FAILURES as exc:
                self.lose(exc)
        return "chroma-unreadable:" + repr(self._fault_state)

    def owns(self, record_id: str) -> bool:
        source = self._current()
        return source.owns(record_id) if source is not None else record_id.startswith("vec:")

    def describe(self) -> dict[str, Any]:
        source = self._current()
        if source is None:
            return {"format": self.format, "label": self.label, "path": str(self.path), "unreadable": self.fault}
        return source.describe()

    def hide_mirrors(self) -> None:
        if self.source is not None:
            self.source.hide_mirrors()

    def keep_writes_inside(self, root: Path) -> None:
        if self.source is not None:
            self.source.keep_writes_inside(root)

    def close(self) -> None:
        if self.source is not None:
            self.source.close()

    # -- writes: refused while the folder cannot be read ----------------------------------------

    def writable(self) -> ChromaSource:
        """The ChromaSource to write, or StoreFileError (nothing written) while it cannot be read."""
        source = self._current()
        if source is None:
            raise StoreFileError(f"{self.path} cannot be written: {self.fault.rstrip('.')}; nothing was written.")
        return source

    def prepare_write(self, changes: Any) -> None:
        self.writable().prepare_write(changes)

    def write_record(self, record_id: str, expected: Any, new: Any) -> Any:
        return self.writable().write_record(record_id, expected, new)

    def plan(self, operation: str, memory: Any, fields: dict[str, Any], context: Any) -> Any:
        return self.writable().plan(operation, memory, fields, context)

    def add_records(self, *args: Any) -> None:
        self.writable().add_records(*args)

    def forget_purged(self, removed: list[Change]) -> list[str]:
        return self.writable().forget_purged(removed)


def failure_text(path: Path, exc: BaseException) -> str:
    """One line saying why the folder's files could not be read."""
    if isinstance(exc, UnreadableStoreError):
        return str(exc)
    if isinstance(exc, OSError):
        where = exc.filename or path
        return f"{where} cannot be read ({exc.strerror or exc})."
    if isinstance(exc, UnicodeDecodeError):
        return f"{path / CHROMA_FILE} is damaged (SQLite's message about it is not text)."
    return f"Chroma directory {path} could not be read ({exc})."


def unreadable_folder(root: Path) -> str:
    """Why root's vectors/ cannot be read as a Chroma directory ("" when there is none, or it
    can): asked where open_store found no Chroma directory to open beside memory.db or markdown."""
    path = root / VECTORS_DIR
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "" if not os.path.islink(path) else f"{path} is a link to nothing (its target is missing)."
    except OSError as exc:
        return f"{path} cannot be read ({exc.strerror})."
    if not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder, where the workspace keeps its vectors."
    try:
        listed = os.listdir(path)
    except OSError as exc:
        return f"{path} cannot be listed ({exc.strerror})."
    if CHROMA_FILE not in listed:
        entries = f"{len(listed)} entr{'y' if len(listed) == 1 else 'ies'}"
        return f"{path} holds {entries} but no {CHROMA_FILE} (Chroma's database)." if listed else ""
    db = path / CHROMA_FILE
    try:
        st = os.stat(db)
    except OSError as exc:
        return f"{db} cannot be read ({exc.strerror})."
    if not stat.S_ISREG(st.st_mode):
        return f"{db} is not a file."
    if not os.access(db, os.R_OK):
        return f"{db} cannot be read (permission denied)."
    return ""  # a Chroma directory another format reads (mem0's): not the workspace's


def _state(path: Path) -> tuple[Any, ...]:
    """What tells that the folder's files changed: the folder's, chroma.sqlite3's and its -wal's
    stat, and each segment folder's newest file."""
    out: list[Any] = []
    for entry in (path, path / CHROMA_FILE, path / (CHROMA_FILE + "-wal")):
        try:
            st = os.stat(entry)
        except OSError as exc:
            out.append(exc.errno)
            continue
        out.append((st.st_ino, st.st_mtime_ns, st.st_size))
    try:
        with os.scandir(path) as entries:
            segments = sorted(e.path for e in entries if e.is_dir(follow_symlinks=False))
    except OSError:
        return tuple(out)
    for segment in segments[:16]:
        try:
            with os.scandir(segment) as files:
                out.append(max(((f.stat().st_mtime_ns, f.stat().st_size) for f in files), default=None))
        except OSError as exc:
            out.append(exc.errno)
    return tuple(out)
