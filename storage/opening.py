"""Opening a store: ``open_store(path_or_url)`` detects what a path holds (detection.py), opens each
part (the native memory.db, Chroma directory and markdown as one workspace, each foreign format's
source, or a server's, server_stores.py) and composes them into one MemoryStore; ``create_workspace``
makes a new native one. Openers return the parts (source.StoreParts); only ``built`` makes the store.

The sources are imported when a path holds their kind of store, not with this module: listing a
markdown folder does not load the SQLite source, and no store without a Chroma directory loads the
Chroma one.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .detection import CHROMA_FILE, DB_NAME, VECTORS_DIR, detect, detect_everything, stores_in
from .embedders.base import Embedder, HashingEmbedder
from .errors import StoreError, UnmappedTableError, UnreadableStoreError, WrapsStoresError
from .formats.registry import detect_formats
from .journal.log import Journal
from .model import Kind
from .settings import StoreSettings
from .source import Source, StoreParts
from .store import MemoryStore

if TYPE_CHECKING:
    from .credentials import Credentials

__all__ = ["CHROMA_FILE", "DB_NAME", "built", "create_workspace", "detect", "detect_everything", "open_store"]


def built(parts: StoreParts) -> MemoryStore:
    """The one MemoryStore over what an opener found."""
    try:
        store = MemoryStore(parts.root, parts.sources, parts.journal, read_only=parts.read_only, location=parts.location)
    except BaseException:
        parts.close()
        raise
    if parts.opened_as is not None:
        store.opened_as = parts.opened_as
    return store


_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)  # where Path.exists answers False


def open_store(
    path: str | Path, *, read_only: bool = False, credentials: Credentials | None = None, vectors: str | None = None
) -> MemoryStore:
    """Open whatever memory a file or folder holds, or a server a URL names (store_url.py).
    Raises UnreadableStoreError.
    read_only: nothing is written, not even recovery of an interrupted step; every write is refused.
    credentials: where a server's password comes from (the keyring alone by default; the CLI and
    the app ask a person). vectors: a Chroma server URL to hold the vectors of the native store."""
    if (isinstance(path, str) and "://" in path) or vectors:
        from .server_stores import open_location

        return built(open_location(path, vectors, read_only=read_only, credentials=credentials))
    path = Path(path).expanduser()
    try:
        is_folder = stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError) as exc:
        if isinstance(exc, OSError) and exc.errno not in _NOT_THERE:
            raise
        raise UnreadableStoreError(f"{path} does not exist.") from None
    found, matches = detect_everything(path)
    if not found and not matches and path.is_file():
        from .formats.sqlite_table import remembered_match  # a table mapped by hand (mnemoscope map)

        matches = [m for m in [remembered_match(path)] if m is not None]
    if not found and not matches:
        from .sqlite_files import is_sqlite_file

        if path.is_file() and is_sqlite_file(path):
            raise UnmappedTableError(
                f"{path} is a SQLite database Mnemoscope does not recognise as a memory store. "
                f"Map one of its tables to memories: mnemoscope map {path}",
                str(path),
            )
        what = "file" if path.is_file() else "folder"
        if path.is_dir():
            _offer_stores_inside(path)
        raise UnreadableStoreError(
            f"Nothing recognisable in {what} {path}: no memory.db, Chroma directory "
            "or workspace markdown (MEMORY.md, USER.md, memory/YYYY-MM-DD.md, ...)."
        )
    root = path if is_folder else path.parent
    opened: list[Any] = []
    try:
        db = _opened(opened, _open_sqlite(read_only), found.get(Kind.SQLITE))
        chroma = _opened(opened, _open_chroma(read_only), found.get(Kind.CHROMA))
        markdown = _opened(opened, _open_markdown, found.get(Kind.MARKDOWN))
        for match in matches:
            opened.append(match.open())
        sources: list[Source] = [s for s in opened if s not in (db, chroma, markdown)]
        if db or chroma or markdown:
            from .native.workspace import NativeWorkspace

            sources.insert(0, NativeWorkspace(root, db, chroma, markdown))
        journal = (
            Journal.in_database(lambda: db.engine, db.db_path, db.reading)
            if db is not None
            else Journal.sidecar(_journal_dir(root, found, matches), read_only=read_only)
        )
    except BaseException:
        # Close what was opened: a pooled connection left open keeps the -wal SQLite made for it.
        for source in opened:
            source.close()
        raise
    return built(StoreParts(root, sources, journal, read_only=read_only))


def _offer_stores_inside(folder: Path) -> None:
    """Raise WrapsStoresError when folder is no store but holds some a few levels down."""
    inside = [(str(path), tool) for path, tool in stores_in([folder], max_depth=3, max_folders=400)]
    if inside:
        shown = "; ".join(f"{p} ({tool})" for p, tool in inside[:5]) + ("; ..." if len(inside) > 5 else "")
        raise WrapsStoresError(
            f"{folder} is no memory store itself but holds {len(inside)}: {shown}. Open one of those "
            f"(mnemoscope discover {folder} lists them all).",
            str(folder),
            inside,
        )


def _opened(opened: list[Any], open_part: Callable[[Path], Any], path: Path | None) -> Any:
    if path is None:
        return None
    part = open_part(path)
    opened.append(part)
    return part


# Each opener imports its source on the first call: a kind of store the path does not hold costs nothing.
def _open_sqlite(read_only: bool) -> Callable[[Path], Any]:
    def open_part(path: Path) -> Any:
        from .native.db.sqlite_source import SqliteSource

        return SqliteSource.open(path, read_only=read_only)

    return open_part


def _open_chroma(read_only: bool) -> Callable[[Path], Any]:
    def open_part(path: Path) -> Any:
        from .native.chroma.local import ChromaSource

        return ChromaSource.open(path, read_only=read_only)

    return open_part


def _open_markdown(path: Path) -> Any:
    from .native.markdown.source import MarkdownSource

    return MarkdownSource.open(path)


def _journal_dir(root: Path, found: dict[Kind, Path], matches: list[Any]) -> Path:
    if Kind.MARKDOWN in found:
        return root
    if Kind.CHROMA in found:
        return found[Kind.CHROMA]
    return next((m.journal_dir for m in matches if m.journal_dir is not None), root)


def create_workspace(
    path: str | Path, embedder: Embedder | None = None, *, vectors: str | None = None,
    credentials: Credentials | None = None,
) -> MemoryStore:
    """A new native workspace: memory.db, vectors/ and nothing else yet; or on servers, the
    schema in an empty PostgreSQL database (and vectors, a Chroma server's native collection)."""
    if (isinstance(path, str) and "://" in path) or vectors:
        from .server_stores import open_location

        embedder = embedder or HashingEmbedder()
        store = built(open_location(path, vectors, read_only=False, credentials=credentials, create_with=embedder))
        recorded = dataclasses.replace(
            store.settings, embedder=store.settings.embedder or embedder.name,
            vectors_url=store.opened_as[1] or store.settings.vectors_url,
        )
        if recorded != store.settings:
            store.save_settings(recorded)
        return store
    root = Path(path).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()) and (detect(root) or detect_formats(root)):
        raise StoreError(f"{root} already holds a memory store; not overwriting it.")
    from .native.chroma.local import ChromaSource
    from .native.db.sqlite_source import SqliteSource
    from .native.workspace import NativeWorkspace

    embedder = embedder or HashingEmbedder()
    db = SqliteSource.open(root / DB_NAME, create=True)
    chroma = ChromaSource.create(root / VECTORS_DIR, embedder)
    store = built(StoreParts(root, [NativeWorkspace(root, db, chroma)], Journal.in_database(lambda: db.engine, db.db_path, db.reading)))
    store.save_settings(StoreSettings(
        embedder=embedder.name, embedder_url=getattr(embedder, "base_url", None),
        embedder_dimensions=None if isinstance(embedder, HashingEmbedder) else embedder.dimensions,
    ))
    return store
