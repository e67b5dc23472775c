"""How a keyword search asks memory.db's FTS5 index (``memories_fts``, unicode61), and the
statistics BM25 weighs its words by, read from the index's own records instead of a scan.

A word is matched whole and as a prefix (``"42" OR "42"*``: "42" also finds "420", ranked below
a whole "42"). Where the index holds no longer word that begins with it, the prefix phrase
matches exactly what the whole one does, and asking both only walks the word's list of rows
twice: such a word is asked once (``"stripe"``), which ranks the same rows in the same order.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

WORD = re.compile(r"\w+", re.UNICODE)
# A word unicode61 indexes as its lowercase self: ASCII letters and digits only (it folds
# diacritics, splits at "_", ...), so that the vocabulary can be asked about it as it is.
_PLAIN = re.compile(r"[A-Za-z0-9]+")
_LAST = "\U0010ffff"
VOCABULARY = "temp.memories_vocab"


def with_vocabulary(dbapi: sqlite3.Connection) -> None:
    """An fts5vocab table over memories_fts in this connection's temp schema. A reading
    connection is query_only, which refuses temp tables too: it is lifted for that one
    statement, which writes nothing to the file."""
    if dbapi.execute("SELECT 1 FROM temp.sqlite_master WHERE name = 'memories_vocab'").fetchone():
        return
    (query_only,) = dbapi.execute("PRAGMA query_only").fetchone()
    dbapi.execute("PRAGMA query_only = OFF")
    try:
        dbapi.execute(f"CREATE VIRTUAL TABLE {VOCABULARY} USING fts5vocab(main, memories_fts, row)")
    finally:
        dbapi.execute(f"PRAGMA query_only = {'ON' if query_only else 'OFF'}")


def match_expression(dbapi: sqlite3.Connection, text: str) -> str:
    """User text -> a safe FTS5 query: every word quoted, OR-ed, matched whole and as a prefix
    (a word no longer indexed word begins with: whole only, the same rows)."""
    words = WORD.findall(text)
    if not words:
        return ""
    with_vocabulary(dbapi)
    alone = {word: bool(_PLAIN.fullmatch(word)) and not _begins_longer(dbapi, word.lower()) for word in set(words)}
    return " OR ".join(f'"{word}"' if alone[word] else f'"{word}" OR "{word}"*' for word in words)


def _begins_longer(dbapi: sqlite3.Connection, term: str) -> bool:
    """Whether the index holds a word longer than term that begins with it."""
    found = dbapi.execute(f"SELECT 1 FROM {VOCABULARY} WHERE term > ? AND term < ? LIMIT 1", (term, term + _LAST))
    return found.fetchone() is not None


def document_frequencies(dbapi: sqlite3.Connection, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
    """How many rows the index holds, and how many hold a word starting with each term."""
    with_vocabulary(dbapi)
    total = indexed_rows(dbapi)
    found = {}
    for term in terms:
        (docs,) = dbapi.execute(f"SELECT coalesce(sum(doc), 0) FROM {VOCABULARY} WHERE term >= ? AND term < ?",
                                (term, term + _LAST)).fetchone()
        found[term] = min(int(docs), total)
    return total, found


def indexed_rows(dbapi: sqlite3.Connection) -> int:
    """How many rows memories_fts indexes: the first varint of the index's averages record
    (memories_fts_data, id 1), which FTS5 keeps with every change; a count of the memories
    where the record is not there or not readable."""
    found = dbapi.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
    rows = _varint(found[0]) if found and isinstance(found[0], bytes) else None
    if rows is None:
        (rows,) = dbapi.execute("SELECT count(*) FROM memories").fetchone()
    return int(rows)


def _varint(data: bytes) -> int | None:
    """The SQLite varint at the start of data (1 to 9 bytes, big-endian, 7 bits a byte and all
    8 of the ninth), None if data ends first."""
    value = 0
    for at, byte in enumerate(data[:9]):
        if at == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return None
