"""Any SQLite table of memories that no format recognises, read through a mapping of its columns.

The mapping (storage/detect/table_mapping.py) is proposed from the table's column names and types,
corrected by a person and remembered per file outside it; once one is remembered
``open_store(file)`` opens the table with it.

The table is read with SQL where it lives (sql_backed.py). It is read-only unless the mapping
names an id column that is unique (the table's sole primary key column, or one with a one-column
UNIQUE index): rows are then edited and deleted by that id, with the conflict check and undo
every SQL format has. A row is otherwise named by its rowid, or, in a WITHOUT ROWID table, by its
primary key.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from ..detect.table_mapping import TableMapping, checked, quoted_name, remembered_mapping, table_columns, table_keys
from ..model import GLOBAL_CHANNEL, Layer, Memory, SourceRef
from ..query import MemoryQuery, Order
from ..source import Capabilities, Snapshot
from .base import plain_row
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision


def remembered_match(path: Path) -> FormatMatch | None:
    """How to open a file with its remembered mapping, if it has one."""
    mapping = remembered_mapping(path)
    if mapping is None:
        return None
    mapping = checked(path, mapping)
    return FormatMatch("sqlite-table", f"{mapping.table} table", Path(path),
                       open=partial(TableSource, Path(path), mapping))


# -- the source ----------------------------------------------------------------------------------


class TableSource(SqlFormatSource):
    """One table of a SQLite file, read through a mapping of its columns."""

    format = "sqlite-table"
    seeks = False  # pages run in the mapped columns' order

    def __init__(self, path: Path, mapping: TableMapping) -> None:
        super().__init__(path.parent, [path], path)
        keys = table_keys(path, mapping.table)
        mapping = checked(path, mapping)  # whether its id column is unique, read from the file now
        self.mapping = mapping
        self.columns = mapping.columns
        self.label = f"{mapping.table} table of {path.name}"
        self.id_prefix = f"tbl:{path.name}:{mapping.table}:"
        # Rows are written by the id column only where it names one row; else named by their key.
        self.id_column = self.columns["id"] if mapping.writable else None
        self.editable_fields = ("content",) if self.id_column else ()
        self.keeps = frozenset(name for name in ("salience", "access_count") if self.columns.get(name))
        self.deletable = bool(self.id_column)
        self.read_only_reason = mapping.read_only_reason
        # What names a row when no id column does, and orders rows at equal mapped values: the
        # rowid, or in a WITHOUT ROWID table (which has none) its primary key column.
        self.row_key = keys.row_key
        key = f'"{quoted_name(self.row_key)}"' if self.row_key else "rowid"
        self.key_sql = key
        declared = dict(table_columns(path).get(mapping.table, []))
        created = self.columns.get("created")
        # julianday() reads ISO text; a column of epoch numbers is not filtered by date in SQL.
        sql_time = created if created and not any(t in declared.get(created, "") for t in ("INT", "REAL", "NUM")) else None
        # spec.key is read back from each row by its name (keyword search): a rowid is selected as
        # "rowid" too (SQLite names it after an INTEGER PRIMARY KEY column otherwise).
        self.spec = TableSpec(
            mapping.table, key=self.row_key or "rowid", channel=self.columns.get("channel"), created=sql_time,
            text=self.columns["content"],
            select=f'{key} AS "$rowid", *' if self.row_key else 'rowid AS "$rowid", rowid AS "rowid", *',
            record=self.id_column, record_prefix="" if self.id_column else "row",
        )

    def _column(self, row: sqlite3.Row, memory_field: str) -> Any:
        column = self.columns.get(memory_field)
        return row[column] if column is not None else None

    def _record(self, row: sqlite3.Row) -> str:
        return str(row[self.id_column]) if self.id_column else f"row{row['$rowid']}"

    def memory_of(self, row: sqlite3.Row) -> Memory:
        created = self.time_of(self._column(row, "created")) if self.columns.get("created") else None
        updated = self.time_of(self._column(row, "updated")) if self.columns.get("updated") else None
        accessed = self.time_of(self._column(row, "accessed")) if self.columns.get("accessed") else None
        created = created or updated or self.time_of(None)
        updated = updated or created
        category = self._column(row, "category")
        channel = self._column(row, "channel")
        salience = _number(self._column(row, "salience"))
        used = set(self.columns.values())
        hidden = {"$rowid", "rowid"} if self.row_key is None else {"$rowid"}
        metadata = {k: row[k] for k in row.keys() if k not in used and k not in hidden and not isinstance(row[k], bytes)}
        if salience is not None:
            metadata[self.columns["salience"]] = salience
        record = self._record(row)
        return Memory.built(
            id=self.id_prefix + record,
            source=SourceRef(self.kind, f"{self.path.name}:{self.mapping.table}/{record}", path=self.path.name,
                             format=self.format),
            layer=Layer.SEMANTIC,
            channel=str(channel) if channel not in (None, "") else GLOBAL_CHANNEL,
            content=self.text_of(self._column(row, "content")),
            created_at=created,
            updated_at=updated,
            last_accessed=accessed or updated,
            access_count=int(_number(self._column(row, "access_count")) or 0) if self.columns.get("access_count") else None,
            salience=max(0.0, min(1.0, salience)) if salience is not None else None,
            tags=(str(category),) if category not in (None, "") else (),
            metadata=metadata,
            revision=row_revision(row),
        )

    def _order(self, query: MemoryQuery) -> str:
        direction = "DESC" if query.descending else "ASC"
        wanted = {
            Order.CREATED: ("created",), Order.SALIENCE: ("salience",),
            Order.ACCESSED: ("accessed", "updated", "created"), Order.RECENT: ("updated", "created"),
        }[query.order]
        column = next((self.columns[f] for f in wanted if f in self.columns), None)
        order = f'"{quoted_name(column)}" {direction}, ' if column else ""
        return f"{order}{self.key_sql} {direction}"

    def where_id(self) -> str:
        if self.id_column:
            return f'CAST("{quoted_name(self.id_column)}" AS TEXT) = ?'
        if self.row_key:
            return f"CAST({self.key_sql} AS TEXT) = ?"
        return "rowid = ?"

    def _id_value(self, record_id: str) -> Any:
        record = record_id[len(self.id_prefix):]
        if self.id_column:
            return record
        if self.row_key:
            return record.removeprefix("row")
        return int(record.removeprefix("row") or -1)

    def record_key(self, record_id: str) -> Any:
        rows = self.rows(f'SELECT {self.key_sql} FROM "{quoted_name(self.mapping.table)}" WHERE {self.where_id()}',
                         [self._id_value(record_id)])
        return rows[0][0] if rows else -1

    def get(self, memory_id: str) -> Memory | None:
        if not self.owns(memory_id):
            return None
        try:
            value = self._id_value(memory_id)
        except ValueError:
            return None
        rows = self.rows(f'SELECT {self.spec.select} FROM "{quoted_name(self.mapping.table)}" WHERE {self.where_id()}',
                         [value])
        return self.memory_of(rows[0]) if rows else None

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        # One table of memories: no sessions, turns or scratchpad (FormatSource reads those from
        # load(), which a table read with SQL where it lives has not).
        return replace(super().capabilities(record_id), sessions=False, scratchpad=False)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "table": self.mapping.table, "mapping": self.mapping.to_dict()["columns"]}

    def problems(self) -> list[str]:
        if "id" in self.columns and not self.id_column:
            return [f"{self.path.name}: read-only, {self.read_only_reason}"]
        return []

    # -- the write primitive (with an id column) ----------------------------------------------

    def read_record(self, record_id: str) -> Snapshot | None:
        if not self.id_column:
            return None
        rows = self.rows(f'SELECT * FROM "{quoted_name(self.mapping.table)}" WHERE {self.where_id()}',
                         [self._id_value(record_id)])
        return plain_row(rows[0]) if rows else None

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        return {**snap, self.columns["content"]: requested["content"]}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        if not self.id_column:
            return super().write_record(record_id, expected, new)
        known = expected if expected is not None else new
        assert known is not None
        return self.write_row(
            self.path, self.mapping.table, {self.id_column: known[self.id_column]}, record_id, expected, new,
            updates=(self.columns["content"],),
        )


def _number(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        return None
