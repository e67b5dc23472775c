"""Whether a memories row, once written, holds exactly the values it was written with, so that a
bulk step need not read its rows back (a tenth of a 10k step's time).

SQLite stores a bound value as it is unless the column's affinity converts it (an int into a TEXT
column becomes text, an int into a REAL one a float, a numeric string into a numeric column a
number, a NaN NULL) or something else writes the row as well: a trigger another program added, a
generated column. Both are read from the schema, once per schema version (PRAGMA schema_version
changes with any CREATE, DROP or ALTER, by any connection).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .schema_sql import FTS_SQLITE

NONE = type(None)
# The types a column of each affinity stores unchanged (bytes are stored as a BLOB whatever it is).
_KEPT = {
    "TEXT": (str, bytes, NONE),
    "INTEGER": (int, bytes, NONE),
    "REAL": (float, bytes, NONE),
    "NUMERIC": (int, bytes, NONE),
    "BLOB": (str, int, float, bytes, NONE),
}
# Our own triggers, as sqlite_master keeps them: they write the FTS index, never a memories row.
_OWN_TRIGGERS = frozenset(
    sql.replace(" IF NOT EXISTS", "", 1) for sql in FTS_SQLITE if sql.startswith("CREATE TRIGGER")
)

Kept = Mapping[str, tuple[type, ...]]


def affinity(declared: str) -> str:
    """A column's affinity from its declared type (SQLite's rules, section 3.1 of "Datatypes")."""
    name = declared.upper()
    if "INT" in name:
        return "INTEGER"
    if any(word in name for word in ("CHAR", "CLOB", "TEXT")):
        return "TEXT"
    if not name or "BLOB" in name:
        return "BLOB"
    if any(word in name for word in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


class StoredAsBound:
    """The memories table's kept types (column -> the types it stores unchanged) of one database,
    or None when rows must be read back: a trigger not ours, a generated column."""

    def __init__(self) -> None:
        self._seen: tuple[int, Kept | None] | None = None

    def kept(self, dbapi: Any) -> Kept | None:
        version = dbapi.execute("PRAGMA schema_version").fetchone()[0]
        if self._seen is None or self._seen[0] != version:
            self._seen = (version, _kept(dbapi))
        return self._seen[1]


def _kept(dbapi: Any) -> Kept | None:
    triggers = [sql for (sql,) in dbapi.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'memories'")]
    if any(sql not in _OWN_TRIGGERS for sql in triggers):
        return None
    columns = dbapi.execute("PRAGMA table_xinfo(memories)").fetchall()
    if not columns or any(hidden for *_, hidden in columns):  # generated (2, 3) or hidden (1) columns
        return None
    return {name: _KEPT[affinity(declared or "")] for _cid, name, declared, *_ in columns}


def as_written(row: Mapping[str, Any], kept: Kept) -> bool:
    """Whether every value of row (column -> value) is stored as it is bound."""
    for name, value in row.items():
        types = kept.get(name)
        if types is None or type(value) not in types or value != value:  # noqa: PLR0124 (NaN is stored as NULL)
            return False
    return True
