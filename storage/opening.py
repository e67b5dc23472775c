"""Opening a store: ``open_store(path_or_url)`` detects what a path holds, opens each part (the
native memory.db, Chroma directory and markdown as one workspace, each foreign format's source, or
a server's) and composes them into one MemoryStore; ``create_workspace`` makes a new native one.
Openers return the parts (source.StoreParts); only ``built`` makes the store.

Detecting: the native kinds (memory.db, a Chroma directory, workspace markdown) and every foreign
format that answers for a path, remembered while the files looked at stay as they were
(detect/looks.py); and the stores a folder holds a few levels down (``stores_in``, which
detect/discover.py and the "no store here, but these inside" answer of ``open_store`` walk).

Servers: the native store on PostgreSQL, its vectors on a Chroma server, or both as one workspace;
AgentX's working memory in Redis (``open_location``; every URL goes there). A password or token comes from the URL itself, else the
keyring, else (only once the server asks for one) the person, through the Credentials the caller
passes; a refused one is asked for again, up to three times. What the person asked to remember is
stored in the keyring once the server took it. No secret is kept anywhere else: the store's
location is its URL without one.

The sources are imported when a path holds their kind of store, not with this module: listing or
detecting a markdown folder loads neither SQLAlchemy nor Chroma, and no store without a Chroma
directory loads the Chroma source.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import re
import shutil
import sqlite3
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .credentials import Credentials, Secret, credential_name, scrubbed
from .detect.looks import RememberedLooks, as_path, entries, forget, is_file, names, one_look
from .detect.store_urls import (
    CHROMA_SERVER,
    PATH,
    POSTGRESQL,
    REDIS,
    Location,
    LocationError,
    parse_location,
    server_folder,
)
from .embedders.base import Embedder, HashingEmbedder
from .embedders.choice import default_embedder
from .errors import SecretRefusedError, StoreError, UnmappedTableError, UnreadableStoreError, WrapsStoresError
from .extras import MissingExtraError
from .formats.registry import FormatMatch, detect_formats
from .journal.log import Journal
from .model import Kind
from .recovery import refuse_unfinished
from .settings import SETTINGS_KEY, StoreSettings
from .source import Source, StoreParts
from .step_lock import step_lock
from .store import MemoryStore

if TYPE_CHECKING:
    from .detect.table_mapping import TableMapping

__all__ = [
    "CHROMA_FILE", "DB_NAME", "built", "create_workspace", "detect", "detect_everything", "open_location",
    "open_store", "remember_mapping", "stores_in",
]

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
_SQLITE_ENDINGS = tuple(SQLITE_SUFFIXES)
# The table a mapping proposal picks must be named like memories for an unmapped file to be
# listed: an application's own database (settings, caches, browser history) is not.
MEMORY_TABLE_NAME = re.compile(r"memor|fact|knowledge|note|recall", re.IGNORECASE)
_NATIVE_LABELS = {Kind.SQLITE: "memory.db", Kind.CHROMA: "Chroma", Kind.MARKDOWN: "markdown"}


def built(parts: StoreParts) -> MemoryStore:
    """The one MemoryStore over what an opener found; MissingExtraError when nothing of it can be
    read without a package the install lacks (an empty store is then never shown)."""
    try:
        unread = [getattr(s, "unread_part", lambda: None)() for s in parts.sources]
        if parts.sources and all(unread):
            raise MissingExtraError([part for part in unread if part is not None])
        store = MemoryStore(parts.root, parts.sources, parts.journal, read_only=parts.read_only, location=parts.location)
    except BaseException:
        parts.close()
        raise
    if parts.opened_as is not None:
        store.opened_as = parts.opened_as
    return store


_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)  # where Path.exists answers False


def open_store(
    path: str | Path, *, read_only: bool = False, credentials: Credentials | None = None, vectors: str | None = None,
    unfinished_ok: bool = False,
) -> MemoryStore:
    """Open whatever memory a file or folder holds, or a server a URL names (open_location below).
    Raises UnreadableStoreError.
    read_only: nothing is written, not even recovery of an interrupted step; every write is refused,
    and a store a killed step left half-applied is refused (UnfinishedStepError) unless
    unfinished_ok (to report it: info, check). credentials: where a server's password comes from
    (the keyring alone by default; the CLI and the app ask a person). vectors: a Chroma server URL
    to hold the vectors of the native store."""
    store = _open_store(path, read_only=read_only, credentials=credentials, vectors=vectors)
    if store.read_only and not unfinished_ok:
        try:
            refuse_unfinished(store)
        except BaseException:
            store.close()
            raise
    return store


def _open_store(
    path: str | Path, *, read_only: bool, credentials: Credentials | None, vectors: str | None
) -> MemoryStore:
    if (isinstance(path, str) and "://" in path) or vectors:
        return built(open_location(path, vectors, read_only=read_only, credentials=credentials))
    path = path if isinstance(path, Path) and not os.fspath(path).startswith("~") else Path(path).expanduser()
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
        if markdown is not None and not (db or chroma or matches or markdown.files()) and markdown.unreadable():
            # workspace markdown and nothing else, none of it readable: no store to show, one message
            raise UnreadableStoreError(next(iter(markdown.unreadable().values())))
        for match in matches:
            opened.append(match.open())
        sources: list[Source] = [s for s in opened if s not in (db, chroma, markdown)]
        if db or chroma or markdown:
            from .native.workspace import NativeWorkspace

            sources.insert(0, NativeWorkspace(root, db, chroma, markdown))
        journal = (
            Journal.in_database(lambda: db.engine, db.db_path, db.reading, home=db)
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
        embedder = embedder or default_embedder()
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
    embedder = embedder or default_embedder()
    with step_lock(root, label=str(root)):  # (two creations of one folder at once: one after the other)
        finish_creation(root)
        if any(root.iterdir()) and (detect(root) or detect_formats(root)):
            raise StoreError(f"{root} already holds a memory store; not overwriting it.")
        _create_in(root, embedder)
    store = open_store(root)
    store.use_embedder(embedder)  # the caller's own, where settings can only name it
    return store


CREATING_DIR = ".mnemoscope-new"


def _create_in(root: Path, embedder: Embedder) -> None:
    """memory.db and vectors/ made whole in a hidden folder, then moved in (memory.db last): a
    creation killed half-way leaves no half-made store, only that folder, which the next
    creation or import finishes or drops (finish_creation)."""
    from .native.chroma.local import ChromaSource
    from .native.db.sqlite_source import SqliteSource
    from .native.workspace import NativeWorkspace

    staging = root / CREATING_DIR
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    db = SqliteSource.open(staging / DB_NAME, create=True)
    chroma = ChromaSource.create(staging / VECTORS_DIR, embedder)
    with built(StoreParts(staging, [NativeWorkspace(staging, db, chroma)],
                          Journal.in_database(lambda: db.engine, db.db_path, db.reading, home=db))) as store:
        store.save_settings(StoreSettings(
            embedder=embedder.name, embedder_url=getattr(embedder, "base_url", None),
            embedder_dimensions=None if isinstance(embedder, HashingEmbedder) else embedder.dimensions,
        ))
    os.rename(staging / VECTORS_DIR, root / VECTORS_DIR)
    _move_database(staging, root)
    shutil.rmtree(staging)


def _move_database(staging: Path, root: Path) -> None:
    """memory.db moved in, its -wal first where one is left (it holds committed pages)."""
    if os.path.lexists(staging / f"{DB_NAME}-wal"):
        os.rename(staging / f"{DB_NAME}-wal", root / f"{DB_NAME}-wal")
    os.rename(staging / DB_NAME, root / DB_NAME)


def finish_creation(root: Path) -> None:
    """A workspace creation killed after moving its vectors in finishes moving memory.db in;
    one killed earlier is dropped (its folder held nothing else)."""
    staging = root / CREATING_DIR
    if not os.path.isdir(staging):
        return
    with step_lock(root, label=str(root)):
        if os.path.isdir(root / VECTORS_DIR) and not os.path.lexists(root / DB_NAME) \
                and os.path.isfile(staging / DB_NAME):
            _move_database(staging, root)
        shutil.rmtree(staging, ignore_errors=True)


# What a path holds: the native kinds, the formats, the stores further down.
def detect(path: Path) -> dict[Kind, Path]:
    """What store kinds a path holds, and where each one lives."""
    path = as_path(path)
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
    found, matches = _DETECTIONS.answer(key, lambda: _detect_everything(as_path(path)))
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
    on_store: Callable[[Path, str], None] | None = None,
) -> list[tuple[Path, str]]:
    """Every store under roots as (path, label), each once, in path order: walked breadth-first,
    a folder that holds a store not walked further. max_folders: stop after looking at that many.
    on_store(path, label): called as each store is found, while the walk's look still holds what
    its detection saw (opening the store there finds it again without asking the file system)."""
    found: dict[str, tuple[Path, str]] = {}
    looked = 0

    def stop() -> bool:
        return cancelled() or (max_folders is not None and looked >= max_folders)

    def seen(folder: Path) -> None:
        nonlocal looked
        looked += 1
        if progress is not None:
            progress(folder)

    # One look for the walk: each folder is listed once for the walk and every detector.
    with one_look():
        for root in roots:
            for path, label in _stores_under(Path(root).expanduser(), max_depth, seen, stop):
                real = os.path.realpath(path)
                if real not in found:
                    found[real] = (path, label)
                    if on_store is not None:
                        on_store(path, label)
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
            elif not is_file(folder):
                listed = entries(folder)
                yield from _memory_tables_in(folder, listed)
                if depth < max_depth:
                    taken = {path for path, _label in hidden}
                    below += [p for p in _subfolders(folder, listed) if p not in taken]
        # What the look saw of the folders the walk leaves is let go: it keeps two levels at most.
        forget(_within({os.fspath(folder) for folder in level}))
        level = below


def _within(folders: set[str]) -> Callable[[str], bool]:
    """Whether a path is one of folders or in one of them."""

    def inside(path: str) -> bool:
        while path not in folders:
            parent = os.path.dirname(path)
            if parent == path:
                return False
            path = parent
        return True

    return inside


def _subfolders(folder: Path, listed: dict[str, os.DirEntry[str]]) -> list[Path]:
    names = sorted(
        name for name, entry in listed.items()
        if name not in SKIPPED and (not name.startswith(".") or name in TOOL_DOT_FOLDERS) and _is_dir(entry)
    )
    return [folder / name for name in names]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:  # vanished
        return False


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


def _memory_tables_in(folder: Path, listed: dict[str, os.DirEntry[str]]) -> Iterator[tuple[Path, str]]:
    """The SQLite files of a folder that holds no store whose memories are one table of theirs."""
    names = sorted(name for name, entry in listed.items()
                   if name.lower().endswith(_SQLITE_ENDINGS) and os.path.splitext(name)[1].lower() in SQLITE_SUFFIXES
                   and _is_file(entry))
    for name in names:
        label = _memory_table_label(folder / name)
        if label:
            yield folder / name, label


def _is_file(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _memory_table_label(path: Path) -> str:
    from .detect.table_mapping import propose_mapping, remembered_mapping
    from .sqlite_files import is_sqlite_file

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
    from .detect.table_mapping import checked, keep_mapping

    if mapping is not None:
        checked(path, mapping)
        found, matches = detect_everything(Path(path))
        if found or matches:
            raise UnreadableStoreError(
                f"{Path(path).name} is already read as {matches[0].label if matches else 'a Mnemoscope store'}; "
                "a table mapping is only for SQLite files no format recognises."
            )
    return keep_mapping(path, mapping)


# Stores on servers: the parts a URL names, with the secret each server asks for.
T = TypeVar("T")
ATTEMPTS = 3


def open_location(
    target: str | Path, vectors: str | None, *, read_only: bool, credentials: Credentials | None,
    create_with: Embedder | None = None,
) -> StoreParts:
    """The parts of the store target names (with vectors: the Chroma server holding its vectors),
    for built. create_with: make the store where it is missing (the schema in an empty
    database, the native collection on a Chroma server), recording that embedder."""
    try:
        location = parse_location(target)
        vector_location = parse_location(vectors) if vectors else None
    except LocationError as exc:
        raise UnreadableStoreError(str(exc)) from None
    credentials = credentials or Credentials()
    if vector_location is not None and vector_location.kind != CHROMA_SERVER:
        raise UnreadableStoreError(
            f"--vectors takes a Chroma server's URL (http(s)://HOST:PORT), not {vector_location.text}."
        )
    if location.kind == PATH:
        raise UnreadableStoreError(
            f"{location.text} is a path: a Chroma server's vectors go with a PostgreSQL store "
            "(postgresql+psycopg://USER@HOST/DATABASE), or open the server alone by its URL."
        )
    if location.kind == REDIS:
        if vector_location is not None:
            raise UnreadableStoreError(f"{location.text} is AgentX's working memory in Redis, which holds no vectors: "
                                       "open it without --vectors.")
        if create_with is not None:
            raise UnreadableStoreError(f"{location.text} is a Redis server: Mnemoscope creates no store there.")
        parts = _with_secret(location, credentials, lambda password: _open_redis(location, password, read_only))
        parts.opened_as = (location.text, None)
        return parts
    if location.kind == CHROMA_SERVER:
        if vector_location is not None:
            raise UnreadableStoreError(f"{location.text} is a Chroma server already: give --vectors with a PostgreSQL store.")
        vector_location = location
    vector_source = None
    if vector_location is not None:
        held = vector_location
        vector_source = _with_secret(
            held, credentials, lambda token: _open_chroma_server(held, token, read_only, create_with))
    try:
        if location.kind == POSTGRESQL:
            shown = location.text + (f" + {vector_location.text}" if vector_location else "")
            parts = _with_secret(location, credentials, lambda password: _open_postgresql(
                location, password, read_only=read_only, vectors=vector_source, shown=shown,
                create=create_with is not None))
        else:
            parts = _chroma_store(location, vector_source, read_only=read_only)
    except BaseException:
        if vector_source is not None:
            vector_source.close()
        raise
    parts.opened_as = (location.text, vector_location.text if vector_location and vector_location != location else None)
    recorded = _recorded_vectors(parts) if location.kind == POSTGRESQL and vector_location is None else None
    if recorded:  # the store names its Chroma server: open the two as one workspace
        parts.close()
        return open_location(target, recorded, read_only=read_only, credentials=credentials)
    return parts


def _recorded_vectors(parts: StoreParts) -> str | None:
    """The Chroma server a store's settings name for its vectors."""
    try:
        return StoreSettings.from_dict(parts.journal.read_setting(SETTINGS_KEY)).vectors_url
    except BaseException:
        parts.close()
        raise


def _with_secret(location: Location, credentials: Credentials, open_with: Callable[[Secret | None], T]) -> T:
    """open_with(secret): the URL's secret, else the keyring's, else none at all until the server
    asks for one; then the person is asked (again after a refusal)."""
    name = credential_name(location.text)
    given = location.secret or credentials.stored(name)
    for _ in range(ATTEMPTS):
        try:
            opened = open_with(given)
        except SecretRefusedError as exc:
            if location.secret:  # written into the URL: asking would not change it
                raise SecretRefusedError(scrubbed(str(exc), given)) from None
            if given is not None:
                credentials.refused(name)
            asked_for = "Token" if location.kind == CHROMA_SERVER else "Password"
            given = credentials.get(name, f"{asked_for} for {location.text}")
            if given is None:
                raise SecretRefusedError(
                    f"{scrubbed(str(exc))} Store the secret with 'mnemoscope credentials set {name}', "
                    "or give it when asked (--password-stdin reads it from stdin)."
                ) from None
            continue
        if given is not None:
            credentials.accepted(name)
        return opened
    raise SecretRefusedError(f"{location.text} refused the secret {ATTEMPTS} times; nothing was opened.")


def _open_postgresql(
    location: Location, password: Secret | None, *, read_only: bool, vectors: Any, shown: str, create: bool
) -> StoreParts:
    try:
        from .native.db.postgres_source import open_postgres_store
    except ImportError as exc:
        raise UnreadableStoreError(
            f"Opening {location.text} needs the PostgreSQL driver, which mnemoscope's install brings and this "
            f"one lacks: pip install 'psycopg[binary]' ({exc})."
        ) from None
    try:
        return open_postgres_store(
            location.driver_url(password), root=server_folder(location), location=shown, read_only=read_only,
            vectors=vectors, create=create,
        )
    except SecretRefusedError:
        raise
    except UnreadableStoreError:  # no Mnemoscope store there: AgentX's tables (seed 002), if it holds them
        from .formats.agentx_postgres import open_agentx_store

        agentx = None if create else open_agentx_store(
            location.driver_url(password), root=server_folder(location), location=location.text,
            read_only=read_only, vectors=vectors,
        )
        if agentx is None:
            raise
        return agentx


def _open_redis(location: Location, password: Secret | None, read_only: bool) -> StoreParts:
    from .formats.agentx_redis import open_agentx_redis

    return open_agentx_redis(location.text, password, root=server_folder(location), location=location.text,
                             read_only=read_only)


def _open_chroma_server(location: Location, token: Secret | None, read_only: bool, create_with: Embedder | None) -> Any:
    from .native.chroma.server import ChromaServerSource

    if create_with is not None:
        return ChromaServerSource.create(location.text, create_with, token=token)
    return ChromaServerSource.open(location.text, token=token, read_only=read_only)


def _chroma_store(location: Location, vectors: Any, *, read_only: bool) -> StoreParts:
    """A Chroma server alone: its collections, with a journal in Mnemoscope's folder for it."""
    from .native.workspace import NativeWorkspace

    root = server_folder(location)
    return StoreParts(
        root, [NativeWorkspace(root, None, vectors, None)], Journal.sidecar(root, read_only=read_only),
        read_only=read_only, location=location.text,
    )
