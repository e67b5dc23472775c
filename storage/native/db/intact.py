"""Whether a memory.db is intact enough to write to, and what is checked when.

A write must not spread damage, nor leave half a step (its journal entry) in a damaged file:

- Opening reads the header and the schema only, writable or not.
- ``PRAGMA quick_check`` (every page read once: O(size), 4.8 s at 1M memories), then every
  write the schema's tables get compiled, triggers included (schema.write_probes), runs before
  a migration, and before the first write that could leave something behind if it failed
  half-way (SqliteSource.ensure_intact: a step's intent in the journal, its rehearsal, the
  agent's API, the journal's own writes), once per source, and only when this file, in this
  state, has no remembered verdict.
- A curation step written whole in one transaction with its journal entry (memory.db rows
  only: rm, undo, edits, bulk steps of a store without copies) is not checked first: SQLite
  reads every page the step touches, checks each cell (cell_size_check) and reports
  SQLITE_CORRUPT on a damaged one; the transaction then rolls back, its entry with it.
- Verdicts are kept in Mnemoscope's data folder (never in the owner's file), keyed by the
  file's identity and change markers: real path, device, inode, size, mtime and ctime, SQLite's
  file change counter, and the same of its -wal (when it holds frames), with the SQLite
  library's version (what the probes compile against). Any write by another program, a copy,
  a restore from a backup or a bit flip by a tool that keeps mtime changes the ctime at least,
  so the file is checked again.
- A source that wrote rows itself to a file known intact remembers the state it leaves at
  close as intact (SQLite checked every page those writes touched).
- ``mnemoscope check`` reads the whole file on demand.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path

from ...atomic_file import folder_lock
from ...data_folder import data_folder
from ...errors import UnreadableStoreError
from ...sqlite_files import PROBE_TIMEOUT, FileLook, read_only_connection, sqlite_error
from . import schema

VERDICTS_FILE = "intact-sqlite.json"
KEPT = 64  # remembered files; the oldest is forgotten first


def check_intact(db_path: Path) -> bool:
    """Refuse to write into a damaged database (see the module's docstring): raises
    UnreadableStoreError. Returns whether the whole file was read (no verdict remembered)."""
    if remembered_intact(db_path):  # the schema, and so what its probes compile, is part of the file's state
        return False
    try:
        with contextlib.closing(read_only_connection(db_path, PROBE_TIMEOUT)) as con:
            verdict = con.execute("PRAGMA quick_check(1)").fetchone()[0]
            if verdict == "ok":
                # (a view named like a table is probed, and refused: it cannot take the writes)
                present = {r[0] for r in con.execute("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')")}
                for probe in schema.write_probes(present):
                    con.execute(probe).fetchall()
    except UnicodeDecodeError:  # the schema's text, decoded by a probe, is damaged
        raise UnreadableStoreError(
            f"{db_path} is damaged (its schema holds text that is not UTF-8); Mnemoscope does not write to it. "
            "Make a copy and repair it with sqlite3's .recover."
        ) from None
    except sqlite3.Error as exc:
        if isinstance(exc, sqlite3.OperationalError) and "no such" in str(exc):
            raise UnreadableStoreError(
                f"{db_path} cannot be written: a trigger on it fails ({exc}); nothing was written."
            ) from None
        raise sqlite_error(db_path, exc) from None
    if verdict != "ok":
        raise UnreadableStoreError(
            f"{db_path} is damaged ({verdict}); Mnemoscope does not write to it. "
            "Make a copy and repair it with sqlite3's .recover."
        )
    remember_intact(db_path)
    return True


def remember_intact(db_path: Path) -> None:
    """Keep "intact" for db_path in its present state (a full check just read it, or this
    process's own writes to a file known intact just ended). Best effort: a data folder that
    cannot be written only means the next open checks again."""
    key = _state(db_path)
    if key is None:
        return
    folder = data_folder()
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        with folder_lock(folder):
            verdicts = _load(folder / VERDICTS_FILE)
            verdicts.pop(key[0], None)
            verdicts[key[0]] = key[1]
            while len(verdicts) > KEPT:
                del verdicts[next(iter(verdicts))]
            # replaced whole, not synced: a verdict lost to a crash only means one more full check
            scratch = folder / f".{VERDICTS_FILE}.{os.getpid()}"
            scratch.write_bytes(json.dumps(verdicts).encode("utf-8"))
            os.replace(scratch, folder / VERDICTS_FILE)


def remembered_intact(db_path: Path) -> bool:
    """Whether db_path, in its present state, is remembered intact."""
    return is_remembered(_state(db_path))


def file_key(look: FileLook) -> tuple[str, list[object]]:
    """A file's state as verdicts are keyed (see the module's docstring), from the look an open
    took at it (stats only), to be looked up later (is_remembered), when a write first needs it."""
    markers: list[object] = [sqlite3.sqlite_version, *look.state]
    for st in (look.stat, look.wal):
        if st is not None and st.st_size:  # an empty -wal holds nothing; every connection touches it
            markers.append(st.st_ctime_ns)
    return look.real, markers


def is_remembered(key: tuple[str, list[object]] | None) -> bool:
    """Whether the file was remembered intact in the state key (file_key) describes."""
    return key is not None and _read(data_folder() / VERDICTS_FILE).get(key[0]) == key[1]


def _state(db_path: Path) -> tuple[str, list[object]] | None:
    """The real path, and the markers that change with any change to the file or its -wal."""
    look = FileLook.at(os.path.realpath(db_path))
    return None if look is None else file_key(look)


def _read(path: Path) -> dict[str, list[object]]:
    """The verdicts, parsed again only when the file was replaced: a verdict, once written,
    stays true of the state it names, so a file read a moment stale only costs a check."""
    try:
        st = os.stat(path)
    except OSError:
        return {}
    stamp = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if _READ and _READ[0][0] == stamp:
        return _READ[0][1]
    verdicts = _load(path)
    _READ[:] = [(stamp, verdicts)]
    return verdicts


_READ: list[tuple[tuple[int, ...], dict[str, list[object]]]] = []  # the verdicts file's stat and content, last read


def _load(path: Path) -> dict[str, list[object]]:
    try:
        loaded = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}
