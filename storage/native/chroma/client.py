"""chromadb's client, which Mnemoscope starts only to write, and whether it may.

Reading never needs chromadb (files.py); its client writes to chroma.sqlite3 as it opens, and
migrates a database an older Chroma wrote for good. Here: chromadb imported late, a client
closed, the client's failures turned into one StoreFileError, and the checks made before it
starts: whether a directory reads as a Chroma database at all, whether its migrations are the
ones this chromadb wrote (an older Chroma's directory is read-only, a newer one's refused), and
whether a link in it leads out of the store.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...atomic_file import atomic_write_bytes
from ...errors import StoreError, StoreFileError, UnreadableStoreError
from ...sqlite_files import is_sqlite_file, sqlite_error
from .files import ChromaFiles


def import_chromadb():
    """chromadb and its Settings, imported only when a client is about to start (importing
    chromadb costs about a second, and reading never needs it)."""
    try:
        import chromadb
        from chromadb.config import Settings
    except ImportError as exc:  # pragma: no cover - chromadb is a hard dependency
        raise StoreError(f"chromadb is not installed ({exc}).") from None
    return chromadb, Settings


# One applied migration as chromadb checks it on open: (dir, version, filename, hash, sha256 of its SQL).
MigrationRow = tuple[str, int, str, str, str]


@functools.lru_cache(maxsize=1)
def _known_migrations() -> tuple[MigrationRow, ...]:
    """The migrations this chromadb writes. They are read off a throwaway database once
    per chromadb version (the Rust bindings carry their own migrations; the package's .sql files
    lag) and kept in the user's cache folder: importing chromadb and creating a client holds the
    GIL for about a second."""
    import tempfile  # (these two and importlib.metadata's email parser: only when Chroma is read)
    from importlib.metadata import PackageNotFoundError, version

    try:
        chroma_version = version("chromadb")
    except PackageNotFoundError:  # pragma: no cover - chromadb is a hard dependency
        chroma_version = "unknown"
    from platformdirs import user_cache_dir

    cache = Path(user_cache_dir("mnemoscope", "Mnemoscope")) / f"chroma-migration-rows-{chroma_version}.json"
    try:
        return tuple((str(d), int(v), str(f), str(h), str(s)) for d, v, f, h, s in json.loads(cache.read_text()))
    except (OSError, ValueError, TypeError):
        pass
    chromadb, Settings = import_chromadb()
    with tempfile.TemporaryDirectory(prefix="mnemoscope-chroma-probe-") as tmp:
        close_client(chromadb.PersistentClient(path=tmp, settings=Settings(anonymized_telemetry=False)))
        known = _migration_rows(ChromaFiles(Path(tmp)))
    try:
        atomic_write_bytes(cache, json.dumps(known).encode())
    except OSError:
        pass  # a read-only home: probe again next time
    return known


def close_client(client: Any) -> None:
    """Stop a client's system: chromadb keeps it (its SQLite connections and index files open)
    in a process-wide registry until the last client of its folder closes."""
    close = getattr(client, "close", None)  # chromadb 1.4 and later
    if close is not None:
        close()


def _migration_rows(files: ChromaFiles) -> tuple[MigrationRow, ...]:
    rows = files.rows("SELECT dir, version, filename, hash, sql FROM migrations ORDER BY dir, version")
    return tuple(
        (str(d), int(v), str(f), str(h), hashlib.sha256(str(sql).encode("utf-8", "replace")).hexdigest())
        for d, v, f, h, sql in rows
    )


def _latest(rows: tuple[MigrationRow, ...]) -> dict[str, int]:
    latest: dict[str, int] = {}
    for directory, number, *_rest in rows:
        latest[directory] = max(number, latest.get(directory, 0))
    return latest


def migration_versions(files: ChromaFiles) -> dict[str, int]:
    rows = files.rows("SELECT dir, max(version) FROM migrations GROUP BY dir")
    return {str(d): int(v) for d, v in rows}


def migration_fault(files: ChromaFiles) -> str:
    """How the directory's migrations table differs from what this chromadb wrote ("" when it
    does not): its client refuses such a database, after writing to it."""
    found, known = _migration_rows(files), _known_migrations()
    if found == known:
        return ""
    differing = next((f for f, k in zip(found, known, strict=False) if f != k), None)
    if differing is None:
        return f"its migrations table holds {len(found)} migrations where this chromadb wrote {len(known)}"
    return f"its record of Chroma migration {differing[0]}/{differing[2]} is not what chromadb wrote"


def write_refusal(files: ChromaFiles) -> str:
    """Why this chromadb must not write the directory ("" when it may): a client would
    migrate an older Chroma's database for good. A newer Chroma's is refused outright: its
    tables may mean what this version cannot know."""
    found = migration_versions(files)
    known = _latest(_known_migrations())
    newer = {d: v for d, v in found.items() if v > known.get(d, 0)}
    if newer:
        raise UnreadableStoreError(
            f"{files.path} was written by a newer Chroma than the chromadb installed here "
            f"({', '.join(f'{d} v{v}' for d, v in sorted(newer.items()))}); upgrade chromadb to open it."
        )
    if any(found.get(d, 0) < v for d, v in known.items()):
        return "written by an older Chroma; writing would migrate it for good"
    return ""


def link_out_of(folder: Path) -> str:
    """Why chromadb must not write the directory ("" when nothing stops it): a file or segment
    folder in it is a link that leads out of it, where its client would write."""
    real = Path(os.path.realpath(folder))
    try:
        entries = list(folder.iterdir())
        entries += [inner for entry in entries if entry.is_dir() and not entry.is_symlink() for inner in entry.iterdir()]
    except OSError:
        return ""  # reading reports what cannot be listed
    for entry in entries:
        target = Path(os.path.realpath(entry))
        if entry.is_symlink() and not target.is_relative_to(real):
            return f"{entry.relative_to(folder)} in it leads out of it, to {target} (Mnemoscope writes only inside the store)"
    return ""


@contextlib.contextmanager
def chroma_refusal(what: str, *, only_its_own: bool = False) -> Iterator[None]:
    """chromadb's failures as one StoreFileError: what it refused is the directory's files. It
    raises many types, and its Rust core panics (not an Exception); only_its_own: leave other
    exceptions (our arguments) alone."""
    from chromadb.errors import ChromaError

    own = (ChromaError, sqlite3.Error, OSError) if only_its_own else (Exception,)
    try:
        yield
    except StoreError:
        raise
    except own as exc:
        raise StoreFileError(f"{what}: {exc}") from None
    except BaseException as exc:
        if type(exc).__name__ != "PanicException":
            raise
        raise StoreFileError(f"{what}: Chroma's core gave up ({exc})") from None


def check_chroma_dir(path: Path, *, may_recover: bool = True) -> ChromaFiles:
    """The directory's files, once they read as a Chroma database."""
    return checked_files(ChromaFiles(Path(path), may_recover=may_recover))


def checked_files(files: ChromaFiles) -> ChromaFiles:
    if not is_sqlite_file(files.db):
        raise UnreadableStoreError(f"{files.db} is not a Chroma database (not SQLite, or truncated).")
    try:
        missing = {"collections", "segments", "embeddings", "embedding_metadata"} - files.tables()
        migration_versions(files)
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorname", "") == "SQLITE_READONLY_ROLLBACK":  # (a writer killed mid-write)
            raise sqlite_error(files.db, exc) from None
        raise UnreadableStoreError(f"{files.db} is not a readable Chroma database ({exc}).") from None
    if missing:
        raise UnreadableStoreError(f"{files.db} is not a Chroma database (no {', '.join(sorted(missing))} table).")
    return files
