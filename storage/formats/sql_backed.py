"""Foreign formats whose memories are rows of one SQLite table, read where the data lives.

``FormatSource`` (base.py) turns a whole store into Python objects once per change. A
SQL-backed format answers every read with a query on the owner's file instead: filters,
order, counts, groupings and keyword search run in SQLite on the owner's own indexes, and
only the rows a caller gets back become ``Memory`` objects (their revision is hashed then:
for the rows shown, and for a record about to be written). Nothing is cached between calls
but a keyword search's count of the rows holding each word, kept for BM25 while SQLite's
``data_version`` says no other connection wrote the file; so the next read after an agent's
write sees it, with no reload. No byte of the owner's file is written by a read; the
connection is the read-only one of ``sqlite_files``.

A format describes its table (``TableSpec``) and says how one row becomes a Memory
(``memory_of``) and what a person reads of the text column (``text_of``). The order of every
page is the table's integer key (the owner's insertion order: ``id INTEGER PRIMARY KEY`` or
the rowid), which SQLite reads backwards from its B-tree without sorting; seeking past a row
(``after=``) is a key range. That is every Order's answer for a format whose memories share
one salience and whose times follow the key (a log, appended to as things happen); a format
with a column per order overrides ``_order``. A text filter or search is answered exactly: SQLite first keeps the
rows whose raw column holds the words (``LIKE``), then ``text_of`` decides on those rows only
(a search counts the words there once, for its ranking and for BM25's statistics alike). ``odd_rows`` names rows whose raw text
does not bound what a person reads (not JSON, say): those are always handed to ``text_of``.

LangGraph's SqliteStore (langgraph.py), Google ADK's events (google_adk.py) and CrewAI's long-term
memories (crewai.py: its channel and times are SQL expressions, TableSpec.channel_sql and
created_sql) are read this way too. The mem0 history, Letta's passages, AgenticX and the facts
DBs are SQL too and can move onto this base the same way: a TableSpec, ``memory_of`` and ``text_of``.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import UnsupportedError
from ..model import GLOBAL_CHANNEL, Layer, Memory, Status
from ..query import MemoryQuery, sort_key
from ..sqlite_files import file_identity, read_only_connection, sqlite_error
from ..timeutil import as_utc, parse_time, utcnow
from .base import FormatSource

# strftime directives SQLite's strftime() shares with Python's (the timeline uses %Y %m %d %W).
SQL_STRFTIME = set("YmdHMSjWw%")
# A needle made only of these characters, lower-cased, appears verbatim in a JSON text wherever
# it appears in a string the JSON holds: JSON escapes none of them, and none of them is a
# separator a format may put between two parts of what it shows (newline, parentheses, ", ").
PLAIN_NEEDLE = re.compile(r"[a-z0-9 _\-.!?;#$%&*+<=>@^`|~]+")
WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class TableSpec:
    """Where a format's memories live and which columns filter and order them."""

    table: str
    # An integer column that orders rows as the owner inserted them (the primary key or "rowid").
    key: str = "rowid"
    # The column naming a memory's channel (a session id), if any; else every memory is _global.
    channel: str | None = None
    # The column holding a memory's creation time (ISO text, as CURRENT_TIMESTAMP writes it).
    created: str | None = None
    # The column holding what a memory says (raw: JSON, say), searched with LIKE before text_of.
    text: str = ""
    # What a memory row selects; memory_of reads these.
    select: str = "*"
    # The column whose value names a memory (its id is id_prefix + record_prefix + the value as
    # text), when it is not the key; keyword search ranks ties by that id, as keyword_rank does.
    record: str | None = None
    record_prefix: str = ""
    # An SQL expression in place of record, where no one column names a memory.
    record_sql: str | None = None
    # SQL expressions in place of the channel and created columns, where a format keeps them in
    # JSON or in another form (created_sql: a value julianday() and strftime() read).
    channel_sql: str | None = None
    created_sql: str | None = None


class SqlFormatSource(FormatSource):
    """Base of a foreign format read with SQL on the owner's table (see the module docstring).

    Subclasses set ``spec`` in __init__ and implement ``memory_of`` and ``text_of``; the layer
    and status of every memory are the format's constants ``layer`` and ``status``."""

    seeks = True  # page() takes after=: a key range, as fast deep in the table as at its top
    counts_tags = False  # no tag facet: its reads are SQL, not a snapshot (FormatSource.tag_counts)
    layer: Layer = Layer.SEMANTIC
    status: Status = Status.ACTIVE
    # SQL true for rows whose raw text column does not hold every plain needle of what text_of
    # reads from it; odd_rows_for() may widen it for some needles.
    odd_rows: str = "0"

    spec: TableSpec

    def __init__(self, root: Path, files: Sequence[Path], path: Path) -> None:
        super().__init__(root, files)
        self.path = path
        self.real_path = os.path.realpath(path)  # resolved once, for each connection and change token
        self._con: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._lock = threading.RLock()
        self._times: dict[Any, datetime] = {}
        # (terms, where, data_version) of the last keyword pass on this connection, and how many
        # rows held each term: BM25 asks for those counts right after the search.
        self._last_pass: tuple[tuple[Any, ...], list[int]] | None = None

    # -- what a format supplies -----------------------------------------------------------

    def memory_of(self, row: sqlite3.Row) -> Memory:
        raise NotImplementedError

    def text_of(self, raw: Any) -> str:
        """What a person reads of the text column's value (the memory's content)."""
        return "" if raw is None else str(raw)

    def time_of(self, value: Any) -> datetime:
        """A time column's value as a datetime (now when unreadable), remembered for the rows of
        one source: the items of one turn share their second."""
        found = self._times.get(value)
        if found is None:
            found = parse_time(value)
            if found is None:
                return utcnow()
            if len(self._times) > 4096:
                self._times.clear()
            self._times[value] = found
        return found

    def odd_rows_for(self, needles: Sequence[str]) -> str:
        """SQL true for the rows whose raw text may lack one of these (plain, lower-case) needles
        while the text shown holds it: those text_of decides on whatever their raw text says."""
        return self.odd_rows

    def record_key(self, record_id: str) -> int:
        """The table key of a record id (id_prefix + key); UnsupportedError if it names none."""
        try:
            return int(record_id[len(self.id_prefix):])
        except ValueError:
            raise UnsupportedError(f"{record_id} is not a {self.label} record id.") from None

    # -- the connection ---------------------------------------------------------------------

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """All rows of one read-only query on the owner's file (StoreError on a SQLite error)."""
        with self._lock:
            try:
                return self._connection().execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as exc:
                raise sqlite_error(self.path, exc) from None

    def _connection(self) -> sqlite3.Connection:
        """The source's one read-only connection, opened again when the file was replaced
        (a backup put back, say): an open connection would go on reading the old file."""
        identity = file_identity(self.path)
        if self._con is not None and identity != self._identity:
            self._con.close()
            self._con = None
        if self._con is None:
            self._last_pass = None  # its data_version counts on the connection it was read with
            try:
                con = read_only_connection(self.real_path, real=True)
            except sqlite3.Error as exc:
                raise sqlite_error(self.path, exc) from None
            con.row_factory = sqlite3.Row
            con.create_function("mnemoscope_text", 1, self._lower_text, deterministic=True)
            self._con, self._identity = con, identity
        return self._con

    def _lower_text(self, raw: Any) -> str:
        return self.text_of(raw).lower()

    def close(self) -> None:
        with self._lock:
            if self._con is not None:
                self._con.close()
                self._con = None
            self._last_pass = None
        super().close()

    # -- the query, in SQL ------------------------------------------------------------------

    def where(self, query: MemoryQuery) -> tuple[str, list[Any]] | None:
        """The WHERE clause and parameters of a query; None when no row can match."""
        spec = self.spec
        if not query.wants_kind(self.kind):
            return None
        if query.statuses and self.status not in query.statuses:
            return None
        if query.layers and self.layer not in query.layers:
            return None
        parts: list[str] = []
        params: list[Any] = []
        if query.channels:
            channel = self.channel_expr()
            if channel is None:
                if GLOBAL_CHANNEL not in query.channels:
                    return None
            else:
                among = f'{channel} IN ({", ".join("?" * len(query.channels))})'
                if GLOBAL_CHANNEL in query.channels:  # a row with no channel is shown as _global
                    among = f'({among} OR {channel} IS NULL OR {channel} = \'\')'
                parts.append(among)
                params += query.channels
        for bound, op in ((query.since, ">="), (query.until, "<")):
            if bound is not None:
                created = self.created_expr()
                if created is None:
                    return None
                # (a time that does not read is shown as now: time_of, make_memory)
                parts.append(f"coalesce(julianday({created}), julianday('now')) {op} julianday(?)")
                params.append(as_utc(bound).strftime("%Y-%m-%d %H:%M:%S.%f"))
        if query.contains:
            clause, values = self._contains(query.contains.lower())
            parts.append(clause)
            params += values
        if query.ids:
            keys = self._keys_of(query.ids)
            if not keys:
                return None
            parts.append(f'"{spec.key}" IN (SELECT value FROM json_each(?))')
            params.append(json.dumps(keys))
        return " AND ".join(parts), params

    def _keys_of(self, ids: Sequence[str]) -> list[Any]:
        """The table keys of those of ids that name records of this source."""
        keys = []
        for record_id in ids:
            if self.owns(record_id):
                try:
                    keys.append(self.record_key(record_id))
                except UnsupportedError:
                    continue
        return keys

    def _contains(self, needle: str) -> tuple[str, list[Any]]:
        text = self.text_sql()
        exact = f"instr(mnemoscope_text({text}), ?) > 0"
        if PLAIN_NEEDLE.fullmatch(needle):
            odd = self.odd_rows_for([needle])
            return f"({text} LIKE ? ESCAPE '\\' OR {odd}) AND {exact}", [f"%{_like_escaped(needle)}%", needle]
        return exact, [needle]

    def text_sql(self) -> str:
        """The text column as SQL (a format storing its text as a BLOB reads it as TEXT: LIKE
        compares a BLOB's bytes case-sensitively)."""
        return f'"{self.spec.text}"'

    def _from(self, clause: str) -> str:
        """FROM the table, WHERE clause if there is one (count(*) with no WHERE reads the
        table's smallest index; SQLite counts no faster than that)."""
        return f'FROM "{self.spec.table}"' + (f" WHERE {clause}" if clause else "")

    def _order(self, query: MemoryQuery) -> str:
        return f'"{self.spec.key}" {"DESC" if query.descending else "ASC"}'

    def count(self, query: MemoryQuery) -> int:
        where = self.where(query)
        if where is None:
            return 0
        clause, params = where
        return int(self.rows(f"SELECT count(*) {self._from(clause)}", params)[0][0])

    def page(self, query: MemoryQuery, limit: int, offset: int = 0, after: Memory | None = None) -> list[Memory]:
        """limit memories in key order (newest first when descending) from offset; with after,
        counted from the row after that memory."""
        where = self.where(query)
        if where is None or limit <= 0:
            return []
        if after is not None and not self.owns(after.id):
            return self._page_after_other(query, limit, offset, after)
        clause, params = where
        if after is not None:
            seek = f'"{self.spec.key}" {"<" if query.descending else ">"} ?'
            clause = f"{clause} AND {seek}" if clause else seek
            params = [*params, self.record_key(after.id)]
        rows = self.rows(
            f"SELECT {self.spec.select} {self._from(clause)} "
            f"ORDER BY {self._order(query)} LIMIT ? OFFSET ?",
            [*params, limit, offset],
        )
        return [self.memory_of(row) for row in rows]

    def _page_seeking(self, query: MemoryQuery, limit: int, offset: int, where: tuple[str, list[Any]], table: str,
                      time_sql: str | None, id_sql: str, rowid: int) -> list[Memory]:
        """limit memories from offset past table's row rowid, in the order ORDER BY time_sql, id_sql
        (both one way; no time_sql: by id_sql alone), that row's place found by seek_sql."""
        bound = self.rows(f"SELECT {time_sql or 'NULL'}, {id_sql} FROM {table} WHERE {table}.rowid = ?", (rowid,))[0]
        seek, seek_params = seek_sql(time_sql, query.descending, bound[0], bound[1], id_sql)
        clause, params = where
        rows = self.rows(
            f"SELECT {self.spec.select} FROM {table} WHERE {clause + ' AND ' if clause else ''}{seek} "
            f"ORDER BY {self._order(query)} LIMIT ? OFFSET ?",
            [*params, *seek_params, limit, offset],
        )
        return [self.memory_of(row) for row in rows]

    def _page_after_other(self, query: MemoryQuery, limit: int, offset: int, after: Memory) -> list[Memory]:
        """A page after another source's memory (merging several stores): this source's pages,
        passed over in Python up to that memory's place in the query's order."""
        key = sort_key(query.order)
        bound = key(after)
        found: list[Memory] = []
        start, size = 0, max(256, offset + limit)
        while len(found) < offset + limit:
            memories = self.page(query, size, start)
            found += [m for m in memories if (key(m) < bound if query.descending else key(m) > bound)]
            if len(memories) < size:
                break
            start, size = start + size, size * 2
        return found[offset : offset + limit]

    def get(self, memory_id: str) -> Memory | None:
        if not self.owns(memory_id):
            return None
        try:
            key = self.record_key(memory_id)
        except UnsupportedError:
            return None
        rows = self.rows(f'SELECT {self.spec.select} FROM "{self.spec.table}" WHERE "{self.spec.key}" = ?', [key])
        return self.memory_of(rows[0]) if rows else None

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        where = self.where(query)
        if where is None:
            return {}
        clause, params = where
        channel = self.channel_expr()
        if column == "channel" and channel is not None:
            counts: dict[str, int] = {}
            for value, n in self.rows(f"SELECT {channel}, count(*) {self._from(clause)} GROUP BY 1", params):
                label = str(value) if value else GLOBAL_CHANNEL
                counts[label] = counts.get(label, 0) + n
            return counts
        n = self.count(query)
        return {self._constant(column): n} if n else {}

    def channel_expr(self) -> str | None:
        """The channel as SQL: the spec's expression, or its column; None: every memory is _global."""
        spec = self.spec
        return spec.channel_sql or (f'"{spec.channel}"' if spec.channel is not None else None)

    def created_expr(self) -> str | None:
        """The creation time as SQL julianday() reads: the spec's expression, or its column."""
        spec = self.spec
        return spec.created_sql or (f'"{spec.created}"' if spec.created is not None else None)

    def _constant(self, column: str) -> str:
        values = {"kind": self.kind.value, "layer": self.layer.value, "status": self.status.value}
        return values.get(column, GLOBAL_CHANNEL)

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """Memories per (time bin, group), grouped by SQLite where it formats times as Python does."""
        where = self.where(query)
        if where is None:
            return {}
        clause, params = where
        spec = self.spec
        channel, created = self.channel_expr(), self.created_expr()
        group = channel if group_by == "channel" and channel is not None else "NULL"
        directives = set(re.findall(r"%(.)", bin_format))
        counts: dict[tuple[str, str], int] = {}
        now_label = utcnow().strftime(bin_format)  # a memory with no readable time was created now
        if created is not None and directives <= SQL_STRFTIME:
            sql = f"SELECT strftime(?, {created}), {group}, count(*) {self._from(clause)} GROUP BY 1, 2"
            found = [(label or now_label, value, n) for label, value, n in self.rows(sql, [bin_format, *params])]
        else:
            if spec.created_sql is not None:  # read as ISO text, which parse_time reads
                created = f"strftime('%Y-%m-%dT%H:%M:%f', {spec.created_sql})"
            sql = f"SELECT {created or 'NULL'}, {group} {self._from(clause)}"
            found = []
            for value, grouped in self.rows(sql, params):
                when = parse_time(value)
                found.append((when.strftime(bin_format) if when else now_label, grouped, 1))
        for label, value, n in found:
            name = (str(value) if value else GLOBAL_CHANNEL) if group != "NULL" else self._constant(group_by)
            counts[(label, name)] = counts.get((label, name), 0) + n
        return counts

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        """keyword_rank's answer (word hits in the content, most first, then id), in one pass.

        SQLite keeps the rows whose raw column holds one of the words (plain words: JSON writes
        them verbatim; odd rows always), and text_of counts the words in each of those. The same
        pass counts the rows holding each word, which BM25 asks for next (document_frequencies)."""
        words = [w.lower() for w in WORDS.findall(text_query)]
        where = self.where(query)
        if not words or where is None or k <= 0:
            return []
        terms = list(dict.fromkeys(words))
        best, _held = self._keyword_pass(terms, where, [words.count(t) for t in terms], k)
        keys = [key for _, _, key in best]
        rows = self.rows(
            f'SELECT {self.spec.select} FROM "{self.spec.table}" '
            f'WHERE "{self.spec.key}" IN ({", ".join("?" * len(keys))})',
            keys,
        )
        found = {row[self.spec.key]: row for row in rows}
        best.sort(key=lambda t: (-t[0], t[1].value))
        return [self.memory_of(found[key]) for _, _, key in best if key in found]

    def document_frequencies(self, terms: Sequence[str], query: MemoryQuery) -> tuple[int, dict[str, int]]:
        """The memories the query keeps, and how many of them hold each term in their content:
        the statistics BM25 weighs terms by (views/search.py). Counted by the keyword search that
        just read those rows when the file has not changed since, else in one pass of its own."""
        where = self.where(query)
        if where is None or not terms:
            return 0, dict.fromkeys(terms, 0)
        lowered = list(dict.fromkeys(t.lower() for t in terms))
        with self._lock:
            held = self._held_remembered(lowered, where)
            if held is None:
                _best, held = self._keyword_pass(lowered, where, [0] * len(lowered), 0)
        per_term = dict(zip(lowered, held, strict=True))
        return self.count(query), {t: per_term[t.lower()] for t in terms}

    def _held_remembered(self, terms: list[str], where: tuple[str, list[Any]]) -> list[int] | None:
        """The last pass's count of rows holding each term, if it was over these terms and
        where on this connection and no other connection has written the file since."""
        with self._lock:
            if self._last_pass is None:
                return None
            try:
                con = self._connection()  # (forgets the last pass if it opens another connection)
                version = con.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error as exc:
                raise sqlite_error(self.path, exc) from None
            if self._last_pass is None:
                return None
            asked, held = self._last_pass
            return held if asked == (tuple(terms), where[0], tuple(where[1]), version) else None

    def _keyword_pass(
        self, terms: list[str], where: tuple[str, list[Any]], weights: list[int], k: int
    ) -> tuple[list[tuple[int, _Desc, Any]], list[int]]:
        """The k rows under where with the highest sum over terms of weight x the term's hits in
        the content, as a min-heap of (score, id, key), and how many rows hold each term (kept
        for _held_remembered)."""
        clause, params = where
        spec = self.spec
        text, key = self.text_sql(), f'"{spec.key}"'
        record = f", {spec.record_sql}" if spec.record_sql else f', "{spec.record}"' if spec.record else ""
        if all(PLAIN_NEEDLE.fullmatch(t) for t in terms):
            hit = "(" + " OR ".join(f"{text} LIKE ? ESCAPE '\\'" for _ in terms) + f" OR {self.odd_rows_for(terms)})"
            hit_params: list[Any] = [f"%{_like_escaped(t)}%" for t in terms]
        else:  # a word JSON may escape (non-ASCII): text_of decides on every row
            hit, hit_params = "", []
        sql = f"SELECT {key}, {text}{record} {self._from(' AND '.join(c for c in (clause, hit) if c))}"
        held = [0] * len(terms)
        best: list[tuple[int, _Desc, Any]] = []
        prefix, text_of, push, replace = self.id_prefix + spec.record_prefix, self.text_of, heapq.heappush, heapq.heapreplace
        with self._lock:
            try:
                con = self._connection()
                version = con.execute("PRAGMA data_version").fetchone()[0]
                cursor = con.cursor()
                cursor.row_factory = None
                for row_key, raw, *named in cursor.execute(sql, (*params, *hit_params)):
                    body = text_of(raw).lower()
                    score = 0
                    for i, term in enumerate(terms):
                        hits = body.count(term)
                        if hits:
                            held[i] += 1
                            score += hits * weights[i]
                    if not score or not k:
                        continue
                    if len(best) < k:
                        push(best, (score, _Desc(prefix + str(named[0] if named else row_key)), row_key))
                    elif score >= best[0][0]:
                        record_id = prefix + str(named[0] if named else row_key)
                        if score > best[0][0] or record_id < best[0][1].value:
                            replace(best, (score, _Desc(record_id), row_key))
            except sqlite3.Error as exc:
                raise sqlite_error(self.path, exc) from None
            self._last_pass = ((tuple(terms), clause, tuple(params), version), held)
        return best, held


class _Desc:
    """An id that orders backwards, so that a min-heap of (score, _Desc(id)) evicts the worst:
    the lowest score, and at equal scores the highest id (keyword_rank keeps the lowest)."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Desc) -> bool:
        return self.value > other.value

    def __gt__(self, other: _Desc) -> bool:
        return self.value < other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)


def seek_sql(column: str | None, descending: bool, time: Any, item: str, item_sql: str) -> tuple[str, list[Any]]:
    """SQL keeping the rows after (time, item) in the order ORDER BY column, item_sql (both one
    way), where SQLite puts a NULL time before every other; no column: by item_sql alone."""
    if column is None:
        return f"{item_sql} {'<' if descending else '>'} ?", [item]
    if time is None:
        if descending:
            return f"({column} IS NULL AND {item_sql} < ?)", [item]
        return f"({column} IS NOT NULL OR {item_sql} > ?)", [item]
    op = "<" if descending else ">"
    past_nulls = f" OR {column} IS NULL" if descending else ""
    return f"({column} {op} ?{past_nulls} OR ({column} = ? AND {item_sql} {op} ?))", [time, time, item]


def _like_escaped(needle: str) -> str:
    return needle.replace("%", r"\%").replace("_", r"\_")


def row_revision(row: sqlite3.Row) -> str:
    """A memory's revision from the row it was read from: a hash of the row's values, cheap
    enough for every row shown (a page holds the rows a person can select and then write).
    Any change to the row changes it; it is compared only with another row_revision."""
    return hashlib.sha1(repr(tuple(row)).encode("utf-8", "surrogatepass")).hexdigest()[:12]
