"""What every foreign format shares: a snapshot of its contents, filtered here.

A foreign store is read through its own files, never through the library that
wrote it. ``FormatSource.load()`` turns the files into canonical records once per
change token; count/page/get/search filter that snapshot. Formats that allow
safe curation override ``read_record``/``write_record`` (the storage protocol's
one write primitive) and say which fields they can hold.

A format whose memories are rows of one SQLite table should not load a snapshot:
``sql_backed.SqlFormatSource`` (a FormatSource) answers every read with SQL on the
owner's file and builds Memory objects for the rows returned only (the OpenAI Agents
SDK session does so; the other SQL formats can move onto it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..detect.looks import as_path, is_file, looked, names
from ..errors import ConflictError, NotFoundError, ReadOnlyError, UnreadableStoreError, UnsupportedError
from ..extras import UnreadPart, installed
from ..model import GLOBAL_CHANNEL, Kind, Layer, Memory, ScratchEntry, Session, SourceRef, Status, Turn
from ..query import MemoryQuery
from ..source import (
    DELETE,
    EDIT,
    PURGE,
    Capabilities,
    Change,
    Plan,
    PlanContext,
    Snapshot,
    bin_by,
    count_by,
    keyword_rank,
    matches,
    page_of,
    revision_of,
    same_record,
)
from ..sqlite_files import (
    files_token,
    is_sqlite_file,
    peek_schema,
    read_only_connection,
    schema_state,
    sqlite_error,
    writing,  # the formats' write transaction (imported from here by each format)
)
from ..timeutil import parse_time, utcnow


def removal_note(operation: str, label: str, what: str) -> str:
    """What a person should know of a delete or a purge in a store that keeps no deleted state."""
    if operation == PURGE:
        return f"{label} has no soft delete: the {what} was removed for good (a purge cannot be undone)."
    return f"{label} has no soft delete: the {what} was removed; undo or restore brings it back."


@dataclass
class Contents:
    """Everything a format holds, in canonical records."""

    memories: list[Memory] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)
    turns: dict[str, list[Turn]] = field(default_factory=dict)
    scratch: list[ScratchEntry] = field(default_factory=list)
    # Things a user should know: drift, dangling index rows, unreadable tables.
    problems: list[str] = field(default_factory=list)
    # The owner's search index against what it indexed, one entry per file or table that drifted
    # (what `mnemoscope check` reports for the format).
    drift: list[IndexDrift] = field(default_factory=list)


INDEX_FILE_GONE = "index-file-gone"  # the file is gone; the index still holds its chunks
INDEX_FILE_CHANGED = "index-file-changed"  # the file changed since it was indexed
INDEX_FILE_UNLISTED = "index-chunks-unlisted"  # chunks of a file the index's file table does not list
INDEX_FTS_DANGLING = "index-fts-dangling"  # full-text entries whose row is gone


@dataclass(frozen=True)
class IndexDrift:
    kind: str  # one of the INDEX_* kinds
    record: str  # the indexed path, or the full-text table
    detail: str


class FormatSource:
    """Base of every foreign-format source. Subclasses set the class attributes
    and implement ``load``; writable ones implement the write primitive too."""

    kind: Kind = Kind.SQLITE
    format: str = ""
    label: str = ""
    id_prefix: str = ""
    editable_fields: tuple[str, ...] = ()
    # Records can be deleted even where no field can be edited.
    deletable: bool = False
    # Why nothing (or, with deletable, no field) can be written.
    read_only_reason: str = ""
    # Messages kept as memories are counted there, not again as turns.
    turns_are_memories: bool = False
    # tag_counts and tagged run over the snapshot (MemoryStore.tag_counts: the tag facet).
    counts_tags: bool = True
    # Which of model.OPTIONAL_FIELDS the owning system keeps; the others are None in its memories.
    keeps: frozenset[str] = frozenset()
    # (import name, mnemoscope extra) of the package without which nothing of it is read (extras.py).
    needs_package: tuple[str, str] | None = None

    def __init__(self, root: Path, files: Sequence[Path]) -> None:
        self.root = as_path(root)
        self.files = [as_path(f) for f in files]
        self._cache: tuple[str, Contents] | None = None

    # -- the snapshot ----------------------------------------------------------------

    def load(self) -> Contents:
        raise NotImplementedError

    def contents(self) -> Contents:
        token = self.change_token()
        if self._cache is None or self._cache[0] != token:
            self._cache = (token, self.load())
        return self._cache[1]

    def invalidate(self) -> None:
        self._cache = None

    def change_token(self) -> str:
        return f"{self.format}:" + files_token(*self.watched())

    def watched(self) -> list[Path]:
        return self.files

    def _writable(self) -> bool:
        return bool(self.editable_fields) or self.deletable

    def close(self) -> None:
        self._cache = None

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            read_only=not self._writable(),
            read_only_reason=self.read_only_reason if not self._writable() else "",
            editable_fields=self.editable_fields,
            keyword_search=True,
            sessions=True,
            scratchpad=True,
        )

    def unread_part(self) -> UnreadPart | None:
        """This part, named as unread, when the package it is read through is not installed."""
        if self.needs_package is None or installed(self.needs_package[0]):
            return None
        where = self.files[0] if self.files else self.root
        return UnreadPart(self.label, str(where), *self.needs_package)

    def describe(self) -> dict[str, Any]:
        """What `info` shows of this format beyond the counts."""
        return {
            "format": self.format,
            "label": self.label,
            "files": [str(f) for f in self.files],
            "read_only": not self._writable(),
            "read_only_reason": self.read_only_reason if not self._writable() else "",
            "editable_fields": list(self.editable_fields),
            "deletable": self._writable(),
            "problems": self.problems(),
        }

    # -- reading ------------------------------------------------------------------------

    def _matching(self, query: MemoryQuery) -> list[Memory]:
        if not query.wants_kind(self.kind):
            return []
        return [m for m in self.contents().memories if matches(m, query)]

    def count(self, query: MemoryQuery) -> int:
        return len(self._matching(query))

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        return page_of(self._matching(query), query, limit, offset)

    def get(self, memory_id: str) -> Memory | None:
        return next((m for m in self.contents().memories if m.id == memory_id), None)

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return count_by(self._matching(query), column)

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str):
        return bin_by(self._matching(query), bin_format, group_by)

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        return keyword_rank(self._matching(query), text_query, k)

    def tag_counts(self, query: MemoryQuery) -> dict[str, int]:
        """Memories the query matches per tag (MemoryStore.tag_counts: the tag facet)."""
        counts: dict[str, int] = {}
        for memory in self._matching(query):
            for tag in memory.tags:
                counts[tag] = counts.get(tag, 0) + 1
        return counts

    def tagged(self, tags: Sequence[str], query: MemoryQuery) -> list[str]:
        """Ids of the memories the query matches that carry every one of tags."""
        return [m.id for m in self._matching(query) if all(t in m.tags for t in tags)]

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        return [s for s in self.contents().sessions if not channels or s.channel in channels]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        return self.contents().turns.get(session_id, [])[offset : offset + limit]

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        if self.turns_are_memories:
            return {}
        counts: dict[str, int] = {}
        for turns in self.contents().turns.values():
            for turn in turns:
                if (since and turn.timestamp < since) or (until and turn.timestamp >= until):
                    continue
                label = turn.timestamp.strftime(bin_format)
                counts[label] = counts.get(label, 0) + 1
        return counts

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return [e for e in self.contents().scratch if session_id is None or e.session_id == session_id]

    def problems(self) -> list[str]:
        return list(self.contents().problems)

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The owning tool's own change log of one memory, where it keeps one."""
        return []

    # -- the write primitive -------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith(self.id_prefix)

    def read_record(self, record_id: str) -> Snapshot | None:
        return None

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        """Edits as the owner writes them (edit_snapshot); deletes remove the record, since
        the owner keeps no deleted state (the journal keeps it for undo and restore)."""
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} in {self.label} at {self.root}.")
        if operation == EDIT:
            new = self.edit_snapshot(snap, fields, context.now)
            return Plan([] if new == snap else [Change(memory.id, snap, new)])
        if operation in (DELETE, PURGE):
            return Plan([Change(memory.id, snap, None)], notes=[removal_note(operation, self.label, "record")])
        raise UnsupportedError(f"{memory.id}: {self.label} cannot {operation} a memory.")

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        raise UnsupportedError(f"{self.label} memories cannot be edited" + (f": {self.read_only_reason}." if self.read_only_reason else "."))

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        raise ReadOnlyError(f"{self.label} at {self.root} is read-only: {self.read_only_reason}.")

    def check_expected(self, record_id: str, current: Snapshot | None, expected: Snapshot | None) -> None:
        if not same_record(current, expected):
            raise ConflictError(
                f"{record_id} changed since it was read ({self.label} wrote to it); "
                "nothing was written. Reload and try again."
            )

    def write_row(
        self,
        path: Path,
        table: str,
        key: dict[str, Any],
        record_id: str,
        expected: Snapshot | None,
        new: Snapshot | None,
        *,
        updates: Sequence[str] = (),
        before: Callable[[sqlite3.Connection, sqlite3.Row | None, Snapshot | None], None] | None = None,
    ) -> Snapshot | None:
        """The write primitive for a format whose record is one SQLite row.

        In one write transaction: the row as it is now must be the row Mnemoscope
        last read (else ConflictError, nothing written); then new=None deletes it,
        a missing row is inserted whole (undo of a delete, same key and values),
        and an existing row gets the ``updates`` columns of new (none: read-only
        fields). ``before(con, current, new)`` may refuse a write the owner would
        not survive. Returns the row after the write.

        The key must name one row: an UPDATE or DELETE that reaches more (a key
        column that is not unique) raises ReadOnlyError inside the transaction,
        which rolls it back, so nothing is written."""
        where = " AND ".join(f'"{column}" = ?' for column in key)
        select = f'SELECT * FROM "{table}" WHERE {where}'
        with writing(path) as con:
            current = con.execute(select, tuple(key.values())).fetchone()
            self.check_expected(record_id, plain_row(current) if current is not None else None, expected)
            if before is not None:
                before(con, current, new)
            if new is None:
                changed = con.execute(f'DELETE FROM "{table}" WHERE {where}', tuple(key.values())).rowcount
                self._one_row(changed, 1 if current is not None else 0, table, key, record_id)
            elif current is None:
                values = row_values(new)
                columns = ", ".join(f'"{c}"' for c in values)
                con.execute(
                    f'INSERT INTO "{table}" ({columns}) VALUES ({", ".join("?" * len(values))})', tuple(values.values())
                )
            elif updates:
                assignments = ", ".join(f'"{c}" = ?' for c in updates)
                changed = con.execute(
                    f'UPDATE "{table}" SET {assignments} WHERE {where}',
                    tuple(row_values(new)[c] for c in updates) + tuple(key.values()),
                ).rowcount
                self._one_row(changed, 1, table, key, record_id)
            else:
                raise ReadOnlyError(f"{self.label}: {self.read_only_reason}.")
            after = con.execute(select, tuple(key.values())).fetchone()
        self.invalidate()
        return plain_row(after) if after is not None else None

    def _one_row(self, changed: int, wanted: int, table: str, key: dict[str, Any], record_id: str) -> None:
        """Refuse (rolling the write transaction back) a write that changed other than wanted rows."""
        if changed != wanted:
            named = ", ".join(f"{column} = {value!r}" for column, value in key.items())
            raise ReadOnlyError(
                f"{record_id}: {changed} rows of {table} have {named}, where one was to be written; "
                f"nothing was written ({self.label} names its rows by a key that is not unique)."
            )



def make_memory(
    source: FormatSource,
    record_id: str,
    content: str,
    *,
    location: str,
    path: str = "",
    created: Any = None,
    updated: Any = None,
    layer: Layer = Layer.SEMANTIC,
    channel: str = GLOBAL_CHANNEL,
    tags: Sequence[str] = (),
    metadata: dict[str, Any] | None = None,
    snapshot: Snapshot | None = None,
    status: Status = Status.ACTIVE,
    accessed: Any = None,
    access_count: int | None = None,
    revision: str | None = None,
) -> Memory:
    """A canonical memory for a foreign record; times default to each other, then now. Its
    revision hashes snapshot unless given (a hash of the bytes stored, where a format has them:
    far cheaper than a snapshot's canonical JSON)."""
    created_at = parse_time(created) or parse_time(updated) or utcnow()
    updated_at = parse_time(updated) or created_at
    return Memory(
        id=source.id_prefix + record_id,
        source=SourceRef(source.kind, location, path=path, format=source.format),
        layer=layer,
        channel=channel or GLOBAL_CHANNEL,
        content=content,
        created_at=created_at,
        updated_at=updated_at,
        last_accessed=parse_time(accessed) or updated_at,
        access_count=access_count,
        metadata=metadata or {},
        tags=tuple(tags),
        status=status,
        revision=revision if revision is not None else revision_of(snapshot) if snapshot is not None else "",
    )


# -- SQLite files written by other tools ------------------------------------------------------


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write a byte of someone else's database."""
    con = read_only_connection(path)
    con.row_factory = sqlite3.Row
    return con


@contextlib.contextmanager
def reading(path: Path) -> Iterator[sqlite3.Connection]:
    try:
        con = connect_read_only(path)
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from None
    try:
        yield con
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from None
    finally:
        con.close()


class KeptReading:
    """reading(path) on one connection per thread kept until close (HeldReaders): a source read
    several times by one command (whether it holds a session, then that session's turns) opens
    the file and parses its schema once. An idle connection holds no lock."""

    def __init__(self, path: Path) -> None:
        from ..native.db.readers import HeldReaders

        self.path = path
        self._readers = HeldReaders(lambda: connect_read_only(path), path)

    @contextlib.contextmanager
    def __call__(self) -> Iterator[sqlite3.Connection]:
        try:
            with self._readers.reading() as con:
                yield con
        except sqlite3.Error as exc:
            raise sqlite_error(self.path, exc) from None

    def close(self) -> None:
        self._readers.close()


def sqlite_tables(path: Path) -> dict[str, set[str]]:
    """Table name -> column names of a SQLite file; {} for anything that is not one.
    Raises LockedError when another program holds it locked (the open fails at once)."""
    tables: dict[str, set[str]] = looked("tables", path, lambda: _sqlite_tables(path), state=schema_state)
    return {name: set(columns) for name, columns in tables.items()}


def _sqlite_tables(path: Path) -> dict[str, set[str]]:
    if not is_sqlite_file(path):
        return {}
    try:
        return {name: set(columns) for name, (_kind, columns) in peek_schema(path).items()}
    except (sqlite3.Error, UnicodeDecodeError):
        return {}


def require_tables(path: Path, tables: dict[str, set[str]], wanted: dict[str, set[str]], label: str) -> None:
    for table, columns in wanted.items():
        missing = columns - tables.get(table, set())
        if table not in tables or missing:
            raise UnreadableStoreError(
                f"{path.name} looks like {label} but lacks {table}({', '.join(sorted(missing or columns))})."
            )


def index_drift(
    hashes: dict[str, str], chunks: Sequence[Any], resolve: Callable[[str], Path | None], index_name: str
) -> tuple[list[IndexDrift], list[str], list[Any]]:
    """Where a search index of markdown no longer matches the files it indexed.

    ``hashes`` maps each indexed path to the sha256 of the text indexed, ``chunks``
    are rows with ``path`` and ``text``; ``resolve`` finds an indexed path on disk
    (None: it cannot be looked for from here). Returns the drift per file, the problems
    (each drift's detail, and what could not be looked at), and the chunks whose file is
    gone or cannot be found: their text lives nowhere else.
    """
    by_path: dict[str, list[Any]] = {}
    for chunk in chunks:
        by_path.setdefault(chunk["path"], []).append(chunk)
    drift: list[IndexDrift] = []
    orphans: list[Any] = []
    unresolved = 0
    for path in sorted(set(by_path) | set(hashes)):
        rows = by_path.get(path, [])
        file = resolve(path)
        if file is None:
            unresolved += 1
            orphans += rows
            continue
        if not file.is_file():
            drift.append(IndexDrift(INDEX_FILE_GONE, path, f"{path} no longer exists; {index_name} still holds "
                                                             f"{len(rows)} chunk(s) of it (shown as memories)"))
            orphans += rows
            continue
        if path not in hashes:
            drift.append(IndexDrift(INDEX_FILE_UNLISTED, path, f"{len(rows)} chunk(s) of {path} have no file row in {index_name}"))
            continue
        text = file.read_text(encoding="utf-8", errors="replace")
        if hashlib.sha256(text.encode("utf-8")).hexdigest() == hashes[path]:
            continue
        missing = [c for c in rows if c["text"] not in text]
        detail = f"; {len(missing)} chunk(s) hold text no longer in the file" if missing else ""
        drift.append(IndexDrift(INDEX_FILE_CHANGED, path, f"{path} changed since it was indexed in {index_name}{detail}"))
    problems = [d.detail for d in drift]
    if unresolved:
        problems.append(f"{unresolved} indexed file(s) cannot be looked for from here (workspace not found); their chunks are shown as memories")
    return drift, problems, orphans


def drift_findings(source: FormatSource) -> list[Any]:
    """consistency_checks() of a format that fills Contents.drift: one finding per drifted file."""
    from ..consistency_report import Finding

    return [Finding(d.kind, d.record, d.detail, source=source.format) for d in source.contents().drift]


def vec0_tables(con: sqlite3.Connection) -> dict[str, int]:
    """sqlite-vec ``vec0`` tables and how many vectors each holds, counted from the
    plain shadow table ``<name>_rowids`` (the vectors need the extension to read)."""
    found: dict[str, int] = {}
    for (name,) in con.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING vec0%'"
    ).fetchall():
        try:
            (found[name],) = con.execute(f'SELECT count(*) FROM "{name}_rowids"').fetchone()
        except sqlite3.Error:
            found[name] = -1
    return found


def vec0_note(path: Path, table: str, count: int) -> str:
    how_many = f"its {count} vector(s)" if count >= 0 else "its vectors"
    return (
        f"{path.name}: {table} is a sqlite-vec (vec0) table; {how_many} were not read (that needs the sqlite-vec "
        "extension); text, keyword search and everything else were read"
    )


def sqlite_files(path: Path, suffixes: tuple[str, ...] = (".db", ".sqlite", ".sqlite3")) -> list[Path]:
    """SQLite files a path names or holds directly (not recursively)."""
    return list(looked(f"sqlite files {suffixes}", path, lambda: _sqlite_files(as_path(path), suffixes)))


def _sqlite_files(path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    if is_file(path):
        return [path] if is_sqlite_file(path) else []
    candidates = sorted(name for name in names(path) if name.endswith(suffixes) and name not in suffixes)
    return [p for p in (path / name for name in candidates) if is_file(p) and is_sqlite_file(p)]


def plain_row(row: sqlite3.Row) -> Snapshot:
    """A row as a JSON-safe snapshot: BLOBs become {"$blob": hex} so the journal
    keeps them byte for byte (and undo writes back a BLOB, not its repr)."""
    return {k: ({"$blob": v.hex()} if isinstance(v, bytes) else v) for k, v in zip(row.keys(), tuple(row), strict=False)}


def row_values(snapshot: Snapshot) -> dict[str, Any]:
    """The column values a plain_row snapshot stands for."""
    return {
        k: (bytes.fromhex(v["$blob"]) if isinstance(v, dict) and "$blob" in v else v) for k, v in snapshot.items()
    }


def json_object(text: Any) -> dict[str, Any]:
    """A JSON object column's value; anything else (bad JSON, a list, NULL) is {}."""
    try:
        value = bounded_json.loads(text) if text else {}
    except (TypeError, json.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def blob_text(value: Any) -> Any:
    """The text inside a snapshot value that may be a {"$blob": hex} BLOB."""
    if isinstance(value, dict) and "$blob" in value:
        return bytes.fromhex(value["$blob"]).decode("utf-8", "replace")
    return value
