"""A person's mapping of one SQLite table's columns onto memory fields, proposed, corrected and
remembered per file.

``propose_mapping(path)`` picks the table that looks most like memories and maps its columns onto
memory fields by name and declared type (``content``/``text``/``body`` -> content, ``category``/
``kind``/``type`` -> category, ``created_at``/``ts`` -> created, ``importance``/``score`` -> salience,
``user_id``/``scope`` -> channel, ...). A person checks it and corrects it (``mnemoscope map``, the
app's mapping dialog); the mapping accepted is remembered per file, keyed by its absolute path,
in Mnemoscope's own data folder (``table-mappings.json``; MNEMOSCOPE_HOME relocates it, as it
does the app's settings), never in the owner's file. formats/sqlite_table.py reads the table
through it.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..atomic_file import atomic_write_bytes
from ..data_folder import data_folder
from ..errors import UnreadableStoreError
from ..sqlite_files import read_only_connection

# The memory fields a column can stand for, in the order they are proposed and shown.
FIELDS = ("content", "id", "category", "created", "updated", "accessed", "access_count", "salience", "channel")
FIELD_LABELS = {
    "content": "Content", "id": "Id", "category": "Category", "created": "Created", "updated": "Updated",
    "accessed": "Last accessed", "access_count": "Access count", "salience": "Salience", "channel": "Channel",
}
# Column names for each field, best first; a name holding one of these as a word matches less well.
NAMES: dict[str, tuple[str, ...]] = {
    "content": ("content", "memory", "text", "body", "fact", "note", "value", "message", "summary", "document", "data"),
    "id": ("id", "uuid", "memory_id", "fact_id", "note_id", "key"),
    "category": ("category", "kind", "type", "memory_type", "topic", "label", "tag", "tags"),
    "created": ("created_at", "created", "creation_time", "inserted_at", "timestamp", "ts", "time", "date"),
    "updated": ("updated_at", "updated", "modified_at", "modified", "mtime", "last_modified"),
    "accessed": ("last_accessed", "last_accessed_at", "accessed_at", "last_access", "last_used", "last_used_at",
                 "last_seen", "last_read"),
    "access_count": ("access_count", "accesses", "use_count", "uses", "hits", "hit_count", "recall_count",
                     "retrieval_count", "times_accessed"),
    "salience": ("salience", "importance", "score", "weight", "priority", "relevance", "decay_score", "strength"),
    "channel": ("channel", "scope", "namespace", "project", "user_id", "agent_id", "session_id", "thread_id",
                "user", "agent"),
}
NUMERIC_FIELDS = ("access_count", "salience")
MAPPINGS_FILE = "table-mappings.json"
# What follows "<virtual table>_" in the name of a table an extension keeps for one of its virtual
# tables (FTS3/4/5, R*Tree and sqlite-vec shadow tables). A table so named is only a shadow table
# when the virtual table it is named after exists: agent_data alone is a table of its own.
SHADOW_SUFFIX = re.compile(
    r"content|data|idx|docsize|config|segments|segdir|stat|rowids|chunks|info|node|parent|rowid|auxiliary"
    r"|vector_chunks\d+|metadatachunks\d+|metadatatext\d+"
)
# The table options after a CREATE TABLE's last parenthesis (STRICT, WITHOUT ROWID).
WITHOUT_ROWID = re.compile(r"\bWITHOUT\s+ROWID\b", re.IGNORECASE)
NO_ID_REASON = "no id column is mapped, so a row cannot be named safely for a write (map one: id=COLUMN)"


@dataclass(frozen=True)
class TableMapping:
    """Which column of one table stands for each memory field (content is required)."""

    table: str
    columns: dict[str, str] = field(default_factory=dict)
    # Set from the file by checked() and propose_mapping(): the id column names one row at most
    # (the table's sole PRIMARY KEY column, or a column with a one-column UNIQUE index). A write
    # by a column that may name several rows would change or delete all of them.
    id_unique: bool = field(default=False, compare=False)

    @property
    def writable(self) -> bool:
        return "id" in self.columns and self.id_unique

    @property
    def read_only_reason(self) -> str:
        """Why memories read through this mapping cannot be written ("" when they can)."""
        if "id" not in self.columns:
            return NO_ID_REASON
        if not self.id_unique:
            return (
                f"the id column {self.columns['id']} is neither the primary key of {self.table} nor UNIQUE, so "
                "one id may name several rows (map a unique column: id=COLUMN)"
            )
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "columns": {f: self.columns[f] for f in FIELDS if f in self.columns}}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TableMapping:
        return cls(str(data["table"]), {str(k): str(v) for k, v in dict(data.get("columns", {})).items()})

    def describe(self) -> str:
        return ", ".join(f"{f}={self.columns[f]}" for f in FIELDS if f in self.columns)


# -- the tables of a file and the proposal ----------------------------------------------------


@dataclass(frozen=True)
class TableKeys:
    """What names one row of a table: its primary key columns (in key order), the columns each of
    which holds no value twice (the sole primary key column, one-column UNIQUE indexes), and
    whether the table is WITHOUT ROWID (then it has no rowid to name a row by)."""

    primary_key: tuple[str, ...] = ()
    unique: frozenset[str] = frozenset()
    without_rowid: bool = False

    @property
    def row_key(self) -> str | None:
        """The column that names a row where the table has no rowid (None: the rowid does, or,
        for a WITHOUT ROWID table with a key of several columns, no one column does)."""
        if not self.without_rowid:
            return None
        return self.primary_key[0] if len(self.primary_key) == 1 else None


@contextlib.contextmanager
def _database(path: Path, what: str = "") -> Iterator[sqlite3.Connection]:
    """A read-only connection to path; a SQLite error (not a database, gone, locked past the busy
    timeout) becomes UnreadableStoreError."""
    try:
        con = read_only_connection(path)
    except sqlite3.Error as exc:
        raise UnreadableStoreError(f"{Path(path).name} cannot be read as a SQLite database: {exc}.") from None
    try:
        yield con
    except sqlite3.Error as exc:
        raise UnreadableStoreError(
            f"{what} in {Path(path).name} cannot be read: {exc}." if what
            else f"{Path(path).name} cannot be read as a SQLite database: {exc}."
        ) from None
    finally:
        con.close()


# peek_schema (sqlite_files.py) cannot serve table_columns as it is: it keeps column names only, in
# no order and without their declared types, and does not tell virtual tables from plain ones.
# Given (declared type, order, type in sqlite_master and sql) it could, and this loop could go.
def table_columns(path: Path) -> dict[str, list[tuple[str, str]]]:
    """Each plain table of the file (not SQLite's, nor a virtual table's shadow) -> [(column, declared type)]."""
    with _database(path) as con:
        tables = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()
        virtual = {name for name, sql in tables if str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL")}
        found = {}
        for name, _sql in tables:
            if name in virtual or _internal(name, virtual):
                continue
            info = con.execute(f"PRAGMA table_info(\"{quoted_name(name)}\")").fetchall()
            found[name] = [(str(r[1]), str(r[2] or "").upper()) for r in info]
        return found


def _internal(name: str, virtual: set[str]) -> bool:
    """Whether a table is SQLite's own or a shadow table of one of the file's virtual tables."""
    if name.lower().startswith("sqlite_"):
        return True
    return any(name.startswith(v + "_") and SHADOW_SUFFIX.fullmatch(name[len(v) + 1:]) for v in virtual)


def table_keys(path: Path, table: str) -> TableKeys:
    """What names one row of table (see TableKeys)."""
    with _database(path, table) as con:
        return _table_keys(con, table)


def _table_keys(con: sqlite3.Connection, table: str) -> TableKeys:
    quoted = quoted_name(table)
    info = con.execute(f'PRAGMA table_info("{quoted}")').fetchall()
    primary_key = tuple(str(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
    unique = set(primary_key) if len(primary_key) == 1 else set()
    for index in con.execute(f'PRAGMA index_list("{quoted}")').fetchall():
        # seq, name, unique, origin, partial: a partial index keeps only some rows unique.
        if not index[2] or (len(index) > 4 and index[4]):
            continue
        columns = con.execute(f'PRAGMA index_info("{quoted_name(str(index[1]))}")').fetchall()
        if len(columns) == 1 and columns[0][2] is not None:  # not an index on an expression
            unique.add(str(columns[0][2]))
    row = con.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
    options = str(row[0] or "").rsplit(")", 1)[-1] if row else ""
    return TableKeys(primary_key, frozenset(unique), bool(WITHOUT_ROWID.search(options)))


def _with_keys(mapping: TableMapping, keys: TableKeys) -> TableMapping:
    return replace(mapping, id_unique=mapping.columns.get("id") in keys.unique)


def propose_mapping(path: Path, table: str | None = None) -> TableMapping:
    """The mapping proposed for table (default: the table that looks most like memories)."""
    tables = table_columns(path)
    if not tables:
        raise UnreadableStoreError(f"{Path(path).name} holds no table to read memories from.")
    if table is None:
        proposals = [TableMapping(name, _proposed_columns(cols)) for name, cols in tables.items()]
        table = max(proposals, key=lambda m: ("content" in m.columns, len(m.columns), -len(tables[m.table]))).table
    elif table not in tables:
        raise UnreadableStoreError(f"{Path(path).name} has no table {table!r} (it has {', '.join(tables)}).")
    keys = table_keys(path, table)
    return _with_keys(TableMapping(table, _proposed_columns(tables[table], keys.unique)), keys)


def _proposed_columns(columns: list[tuple[str, str]], unique: frozenset[str] = frozenset()) -> dict[str, str]:
    """Each field's best column by name and type; the id, where a column by an id's name is
    unique, the best of those (a write by an id that is not unique would reach several rows)."""
    taken: set[str] = set()
    mapped: dict[str, str] = {}
    for memory_field in FIELDS:
        best: tuple[int, str] | None = None
        for name, declared in columns:
            if name in taken or not _type_fits(memory_field, declared):
                continue
            score = _name_score(memory_field, name.lower())
            if score and memory_field == "id" and name in unique:
                score += 1000
            if score and (best is None or score > best[0]):
                best = (score, name)
        if best is not None:
            mapped[memory_field] = best[1]
            taken.add(best[1])
    if "content" not in mapped:  # no column says so: the first text column not taken
        text = [n for n, t in columns if n not in taken and ("CHAR" in t or "TEXT" in t or "CLOB" in t)]
        if text:
            mapped["content"] = text[0]
    return mapped


def _name_score(memory_field: str, name: str) -> int:
    names = NAMES[memory_field]
    if name in names:
        return 100 - names.index(name)
    words = set(re.split(r"[^a-z0-9]+", name))
    return next((50 - i for i, wanted in enumerate(names) if wanted in words), 0)


def _type_fits(memory_field: str, declared: str) -> bool:
    text = "CHAR" in declared or "TEXT" in declared or "CLOB" in declared
    if memory_field == "content":
        return text or declared == ""
    if memory_field in NUMERIC_FIELDS:
        return any(t in declared for t in ("INT", "REAL", "FLOA", "DOUB", "NUM", "DEC")) or declared == ""
    return "BLOB" not in declared


def checked(path: Path, mapping: TableMapping) -> TableMapping:
    """mapping, if the file's table still has every column it names, with id_unique read from the
    file; else UnreadableStoreError."""
    tables = table_columns(path)
    if mapping.table not in tables:
        raise UnreadableStoreError(f"{Path(path).name} has no table {mapping.table!r} (it has {', '.join(tables)}).")
    names = {n for n, _t in tables[mapping.table]}
    unknown = {f: c for f, c in mapping.columns.items() if f not in FIELDS or c not in names}
    if unknown:
        raise UnreadableStoreError(
            f"{mapping.table} in {Path(path).name} cannot be mapped so: "
            + ", ".join(f"{f}={c}" for f, c in unknown.items())
            + f" (fields: {', '.join(FIELDS)}; columns: {', '.join(sorted(names))})."
        )
    if "content" not in mapping.columns:
        raise UnreadableStoreError(f"A mapping of {mapping.table} needs a content column (content=COLUMN).")
    keys = table_keys(path, mapping.table)
    if keys.without_rowid and keys.row_key is None:
        raise UnreadableStoreError(
            f"{mapping.table} in {Path(path).name} is a WITHOUT ROWID table whose primary key has several columns "
            f"({', '.join(keys.primary_key)}): Mnemoscope cannot name its rows one by one, so it cannot read it."
        )
    return _with_keys(mapping, keys)


def corrected(mapping: TableMapping, assignments: dict[str, str]) -> TableMapping:
    """mapping with fields set to columns (an empty column unmaps the field)."""
    columns = dict(mapping.columns)
    for memory_field, column in assignments.items():
        if column:
            columns[memory_field] = column
        else:
            columns.pop(memory_field, None)
    return TableMapping(mapping.table, columns)  # id_unique: checked() reads it for the new columns


def parse_assignments(text: str) -> dict[str, str]:
    """``content=body,created=ts,category=`` as {field: column} (an empty column unmaps)."""
    found: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        memory_field, sep, column = part.partition("=")
        if not sep or memory_field.strip() not in FIELDS:
            raise UnreadableStoreError(f"{part!r} is not FIELD=COLUMN (fields: {', '.join(FIELDS)}).")
        found[memory_field.strip()] = column.strip()
    return found


def preview(path: Path, mapping: TableMapping, limit: int = 5) -> list[dict[str, Any]]:
    """The first rows of the table as the mapping reads them: {field: value}."""
    columns = [f for f in FIELDS if f in mapping.columns]
    if not columns:
        return []
    select = ", ".join(f'"{quoted_name(mapping.columns[f])}"' for f in columns)
    with _database(path, mapping.table) as con:
        rows = con.execute(f'SELECT {select} FROM "{quoted_name(mapping.table)}" LIMIT {int(limit)}').fetchall()
    return [dict(zip(columns, row, strict=True)) for row in rows]


def quoted_name(name: str) -> str:
    return name.replace('"', '""')


# -- remembered mappings ---------------------------------------------------------------------------


def mappings_file() -> Path:
    """Where accepted mappings are kept: Mnemoscope's data folder (MNEMOSCOPE_HOME relocates it)."""
    return data_folder() / MAPPINGS_FILE


def _file_key(path: Path) -> str:
    return str(Path(path).expanduser().resolve())


def _remembered() -> dict[str, Any]:
    try:
        data = json.loads(mappings_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, dict) else {}


def remembered_mapping(path: Path) -> TableMapping | None:
    entry = _remembered().get(_file_key(path))
    try:
        return TableMapping.from_dict(entry) if isinstance(entry, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def keep_mapping(path: Path, mapping: TableMapping | None) -> Path:
    """Write mapping for the file into the mappings file (None: forget it); unchecked: callers go
    through opening.remember_mapping. Returns the file it is kept in."""
    files = _remembered()
    if mapping is None:
        files.pop(_file_key(path), None)
    else:
        files[_file_key(path)] = mapping.to_dict()
    target = mappings_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, (json.dumps({"version": 1, "files": files}, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return target
