"""memory.db's FTS5 index (``memories_fts``, external content, kept by triggers) against
the memory rows it indexes.

An index entry is read back from the index itself (an ``fts5vocab`` instance table in the
connection's temp schema): its tokens, per column, in order. Joined by spaces they
tokenize to the very same entries, so that snapshot is what a ``'delete'`` command needs
to take the entry out again. That makes an entry a record like any other (``fts:<rowid>``,
read and written by the SQLite source), so a repair is an ordinary, undoable step.

Finding the entries that differ asks FTS5's own integrity check first (the index against
its content table, checksummed in one pass, on a copy: see index_consistent); only when that reports a difference is the real
index compared entry by entry with one built in the temp schema from the rows as they are now
(same tokenizer), in SQL: nothing is loaded whole.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ...sqlite_files import is_database_error
from .schema_sql import FTS_INSERT_TRIGGER

FTS_TABLE = "memories_fts"
FTS_PREFIX = "fts:"
_COLUMNS = ("content", "tags")
_TERMS = "temp.mnemoscope_fts_terms"
_EXPECTED = "mnemoscope_fts_expected"
_EXPECTED_TERMS = "temp.mnemoscope_fts_expected_terms"
_COPY = "mnemoscope_fts_copy"
_COPY_ROWS = "mnemoscope_fts_rows"
_SHADOWS = ("data", "idx", "docsize", "config")


def fts_record(rowid: int) -> str:
    return f"{FTS_PREFIX}{rowid}"


def fts_rowid(record_id: str) -> int:
    return int(record_id[len(FTS_PREFIX):])


def has_fts(conn: Any) -> bool:
    if conn.dialect.name != "sqlite":
        return False
    found = conn.exec_driver_sql("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,))
    return found.first() is not None


@contextlib.contextmanager
def _temp_tables(conn: Any) -> Iterator[None]:
    """Writes to the connection's temp schema only: a query-only connection (how a store opened
    read-only reads) refuses those too, so it allows them meanwhile; the database file is never
    written by these statements."""
    query_only = conn.exec_driver_sql("PRAGMA query_only").scalar()
    if query_only:
        conn.exec_driver_sql("PRAGMA query_only = OFF")
    try:
        yield
    finally:
        if query_only:
            conn.exec_driver_sql("PRAGMA query_only = ON")


def _terms_table(conn: Any) -> None:
    with _temp_tables(conn):
        conn.exec_driver_sql(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {_TERMS} USING fts5vocab(main, {FTS_TABLE}, instance)"
        )


def read_entry(conn: Any, rowid: int) -> dict[str, Any] | None:
    """The index entry of one rowid as its tokens, per column (None: the index holds none)."""
    _terms_table(conn)
    rows = conn.exec_driver_sql(
        f"SELECT col, term FROM {_TERMS} WHERE doc = ? ORDER BY col, offset", (rowid,)
    ).fetchall()
    if not rows:
        return None
    tokens: dict[str, list[str]] = {column: [] for column in _COLUMNS}
    for column, term in rows:
        tokens.setdefault(column, []).append(term)
    return {"rowid": rowid, **{column: " ".join(words) for column, words in tokens.items()}}


def write_entry(conn: Any, rowid: int, current: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any] | None:
    """Replace the index entry of rowid (current: as read_entry read it) with new's text."""
    if current is not None:
        conn.exec_driver_sql(
            f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, content, tags) VALUES ('delete', ?, ?, ?)",
            (rowid, current["content"], current["tags"]),
        )
    if new is not None:
        conn.exec_driver_sql(
            f"INSERT INTO {FTS_TABLE}(rowid, content, tags) VALUES (?, ?, ?)", (rowid, new["content"], new["tags"])
        )
    return read_entry(conn, rowid)


def _normalized(sql: str) -> str:
    return " ".join(sql.replace("IF NOT EXISTS ", "").split())


@contextlib.contextmanager
def indexed_in_bulk(conn: Any) -> Iterator[None]:
    """Memories inserted in the block are put in the index by one statement at its end, not by the
    insert trigger row by row (four times faster on a bulk import). Inside the caller's transaction:
    the trigger is dropped and made again within it, so a rollback (or a kill) leaves it as it was,
    and no other writer can insert meanwhile. A trigger that is not the schema's own is left alone."""
    found = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'memories_fts_ai'"
    ).scalar()
    if found is None or _normalized(found) != _normalized(FTS_INSERT_TRIGGER):
        yield
        return
    before = conn.exec_driver_sql("SELECT coalesce(max(rowid), 0) FROM main.memories").scalar()
    conn.exec_driver_sql("DROP TRIGGER memories_fts_ai")
    yield
    # New rows take rowids above every existing one (no other writer runs inside this transaction).
    conn.exec_driver_sql(
        f"INSERT INTO {FTS_TABLE}(rowid, content, tags) SELECT rowid, content, tags FROM main.memories "
        "WHERE rowid > ?", (before,),
    )
    conn.exec_driver_sql(found)


def optimize(conn: Any) -> None:
    """Merge the index into one segment. An entry taken out of an FTS5 index stays in its older
    segments, and its 'delete' entry holds the same tokens, until a merge: after a purge, no
    segment may keep the removed text's tokens (the pages freed are zeroed: secure_delete)."""
    conn.exec_driver_sql(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')")


def index_consistent(conn: Any) -> bool:
    """Whether FTS5's integrity check finds the index consistent, within itself and with the
    memory rows it indexes (False: it found a difference, or could not run).

    The check runs on a copy of the index in the connection's temp schema (its shadow tables
    copied as they are, over a view of the rows): FTS5 runs it as an INSERT, which a file
    opened read-only refuses and which would hold the file's write lock meanwhile."""
    shadows = [str(name) for (name,) in conn.exec_driver_sql(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?, ?)",
        tuple(f"{FTS_TABLE}_{part}" for part in _SHADOWS),
    )]
    try:
        with _temp_tables(conn):
            _drop_copy(conn)
            conn.exec_driver_sql(f"CREATE TEMP VIEW {_COPY_ROWS}(rid, content, tags) "
                                 "AS SELECT rowid, content, tags FROM main.memories")
            conn.exec_driver_sql(f"CREATE VIRTUAL TABLE temp.{_COPY} USING fts5(content, tags, "
                                 f"content='{_COPY_ROWS}', content_rowid='rid', tokenize='unicode61')")
            for shadow in shadows:
                part = shadow[len(FTS_TABLE):]
                conn.exec_driver_sql(f"DELETE FROM temp.{_COPY}{part}")
                conn.exec_driver_sql(f"INSERT INTO temp.{_COPY}{part} SELECT * FROM main.{shadow}")
            conn.exec_driver_sql(f"INSERT INTO temp.{_COPY}({_COPY}, rank) VALUES ('integrity-check', 1)")
        return True
    except Exception as exc:
        if not is_database_error(exc):
            raise
        return False
    finally:
        with _temp_tables(conn):
            _drop_copy(conn)


def _drop_copy(conn: Any) -> None:
    conn.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{_COPY}")
    conn.exec_driver_sql(f"DROP VIEW IF EXISTS temp.{_COPY_ROWS}")


def differing_entries(conn: Any) -> Iterator[tuple[int, str | None, str]]:
    """(rowid, memory id or None when the row is gone, kind) of every entry that differs from
    what the rows say now: "missing-fts" (the row has text and no entry) or "stale-fts"."""
    if index_consistent(conn):
        return
    with _temp_tables(conn):
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {_EXPECTED_TERMS}")
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS temp.{_EXPECTED}")
        conn.exec_driver_sql(f"CREATE VIRTUAL TABLE temp.{_EXPECTED} USING fts5(content, tags, tokenize='unicode61')")
        conn.exec_driver_sql(
            f"INSERT INTO temp.{_EXPECTED}(rowid, content, tags) SELECT rowid, content, tags FROM main.memories"
        )
        conn.exec_driver_sql(f"CREATE VIRTUAL TABLE {_EXPECTED_TERMS} USING fts5vocab(temp, {_EXPECTED}, instance)")
    _terms_table(conn)
    entry = "SELECT term, doc, col, offset FROM {}"
    differing = conn.exec_driver_sql(
        "SELECT doc, sum(extra), sum(lacking) FROM ("
        f"SELECT doc, 1 AS extra, 0 AS lacking FROM ({entry.format(_TERMS)} EXCEPT {entry.format(_EXPECTED_TERMS)}) "
        f"UNION ALL SELECT doc, 0, 1 FROM ({entry.format(_EXPECTED_TERMS)} EXCEPT {entry.format(_TERMS)})"
        ") GROUP BY doc ORDER BY doc"
    ).fetchall()
    if not differing:
        return
    docs = [int(doc) for doc, _, _ in differing]
    owners: dict[int, str] = {}
    expected_counts: dict[int, int] = {}
    for start in range(0, len(docs), 500):
        chunk = docs[start : start + 500]
        marks = ",".join("?" * len(chunk))
        owners.update(
            (int(r), str(i))
            for r, i in conn.exec_driver_sql(f"SELECT rowid, id FROM main.memories WHERE rowid IN ({marks})", tuple(chunk))
        )
        expected_counts.update(
            (int(d), int(n))
            for d, n in conn.exec_driver_sql(
                f"SELECT doc, count(*) FROM {_EXPECTED_TERMS} WHERE doc IN ({marks}) GROUP BY doc", tuple(chunk)
            )
        )
    for doc, extra, lacking in differing:
        rowid = int(doc)
        missing = rowid in owners and not extra and lacking == expected_counts.get(rowid)
        yield rowid, owners.get(rowid), "missing-fts" if missing else "stale-fts"
