"""LangGraph's SQLite persistence: ``SqliteStore`` items and ``SqliteSaver`` threads.

SqliteStore (langgraph/store/sqlite/base.py) keeps one row per item in
``store(prefix, key, value, created_at, updated_at, expires_at, ttl_minutes)``:
the namespace tuple dot-joined in ``prefix``, the value as JSON text. With an
index configured, ``store_vectors(prefix, key, field_name, embedding)`` holds one
float32 blob per indexed field (a plain table: sqlite-vec is only needed to
search it, not to read it).

SqliteSaver (langgraph/checkpoint/sqlite) keeps ``checkpoints`` (one row per
step of a thread, serialized by JsonPlusSerializer: msgpack with extension
types, or JSON in older versions) and pending ``writes``. Each thread is shown
as a session: the messages of its latest checkpoint are its turns, the other
channel values its scratchpad. Threads are read per thread by SQL on the checkpoints' key
(langgraph_threads.py): listing them decodes two checkpoints of each, reading one decodes its two.

Items are read with SQL on the file (sql_backed.py): a page, a count or a filter costs what
the query does, and only the items returned become memories.

Curation: store items are editable and deletable as SqliteStore's own put and
delete leave them. Their vectors were computed by the graph's embedder, which
does not run here, so an edit removes the item's vectors (LangGraph search then
ranks it without a vector until the graph puts it again) and undo brings them
back; a delete removes the vectors with the item. Checkpoints are read-only: they
are the history a thread resumes and replays from.

A folder holding several SqliteStore files (a graph's store and a copy of it, two
graphs side by side) lists each file's items under its own ids (``lg:<file>:``),
each item naming its file (``metadata["store_file"]``). What a user expects of a copy
is to see its items once: an item that a file before it holds with the same namespace,
key, value and update time is not listed again (files in order of name length, then name:
a copy's name usually adds to the original's, as in store.backup.db or "store (1).db"); the first file's item says
which files hold it too (``also_in``), and the copy says how many of its items were
folded into the first's (edits go to the file listed, not to the copy). An item the
copies no longer agree on is listed under each file. Two names for one file (a link)
are read once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..errors import UnsupportedError
from ..model import GLOBAL_CHANNEL, Layer, Memory, ScratchEntry, Session, SourceRef, Turn
from ..query import MemoryQuery, Order
from ..retention import CLEAN_UP, Upcoming, preview_of
from ..source import Snapshot
from ..sqlite_files import files_token
from ..timeutil import parse_time, utcnow
from .base import (
    Contents,
    blob_text,
    plain_row,
    reading,
    row_values,
    sqlite_files,
    sqlite_tables,
    writing,
)
from .langgraph_threads import Threads
from .match import FormatMatch
from .sql_backed import SqlFormatSource, TableSpec, row_revision

STORE_COLUMNS = {"prefix", "key", "value"}
CHECKPOINT_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "type", "checkpoint"}
WRITE_COLUMNS = {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"}
TEXT_FIELDS = ("content", "text", "memory", "data", "page_content", "summary")
# An item's id within its file: namespace and key (what keyword ties and every order's ties rank by).
ITEM_ID = "(store.prefix || '/' || store.key)"


@dataclass
class _Folding:
    """How one SqliteStore file's items meet the copies beside it (see the module docstring)."""

    later: list[tuple[str, dict[Any, Any]]]  # each later file's items, by identity
    hidden: list[int] = field(default_factory=list)  # rowids of the items an earlier file lists
    hidden_set: set[int] = field(default_factory=set)
    folded: dict[str, int] = field(default_factory=dict)  # earlier file -> items of this one it lists

    def also_in(self, identity: tuple[Any, Any]) -> list[str]:
        return [name for name, items in self.later if items.get(identity[0]) == identity[1]]


class LangGraphSource(SqlFormatSource):
    """One LangGraph SQLite file: SqliteStore's items read with SQL where they live (sql_backed.py),
    SqliteSaver's threads read per thread as sessions (langgraph_threads.py).

    Pages run in the query's order on the store's own columns (updated_at, created_at: the
    CURRENT_TIMESTAMP text SqliteStore writes, ordered as text), ties by item id; a namespace
    filter uses SqliteStore's index on prefix. Items of a copy folded into an earlier file's are
    kept out of every read by their rowids, found once per change of the files."""

    format = "langgraph"
    label = "LangGraph"
    read_only_reason = "LangGraph checkpoints are the history a thread resumes from; they are shown, not edited"
    # Pages seek past a row in the query's order (time, then id), as fast deep as at the top.
    seeks = True
    orders_by_effective_salience = True  # SqliteStore keeps no salience: that order is the ids'

    def __init__(
        self, path: Path, tables: dict[str, set[str]], siblings: tuple[Path, ...] = (), links: tuple[str, ...] = ()
    ) -> None:
        super().__init__(path.parent, [path], path)
        # The folder's other SqliteStore files, in name order; and other names of this very file.
        self.siblings = siblings
        self.links = links
        self.has_store = STORE_COLUMNS <= tables.get("store", set())
        self.has_vectors = "store_vectors" in tables
        self.has_checkpoints = CHECKPOINT_COLUMNS <= tables.get("checkpoints", set())
        self.has_writes = WRITE_COLUMNS <= tables.get("writes", set())
        self.id_prefix = f"lg:{path.name}:"
        self.editable_fields = ("content",) if self.has_store else ()
        self.has_ttl = {"expires_at", "ttl_minutes"} <= tables.get("store", set())
        self.keeps_retention_rule = self.has_ttl  # SqliteSaver's checkpoints have no TTL
        self._columns = tables.get("store", set())
        indexed = (
            ", (SELECT json_group_array(field_name) FROM (SELECT field_name FROM store_vectors AS v "
            'WHERE v.prefix = store.prefix AND v.key = store.key ORDER BY field_name)) AS "$indexed"'
            if self.has_vectors else ""
        )
        self.spec = TableSpec(
            "store", key="rowid", channel="prefix", created="created_at" if "created_at" in self._columns else None,
            text="value", select=f'store.rowid AS "rowid", store.*{indexed}', record_sql=ITEM_ID,
        )
        self._location = f"{path.name}:store/"
        self._folding: tuple[str, _Folding] | None = None
        self.threads = (
            Threads(self.real_path, self.rows, self.has_writes, decode_checkpoint, unpack,
                    message_text)
            if self.has_checkpoints else None
        )

    def watched(self) -> list[Path]:
        return self.files + list(self.siblings)  # an item folded into a sibling's shows when they part

    # -- items as memories ------------------------------------------------------------------

    def memory_of(self, row: sqlite3.Row) -> Memory:
        keys = row.keys()
        value = _json(row["value"])
        item_id = f"{row['prefix']}/{row['key']}"
        metadata: dict[str, Any] = {"namespace": row["prefix"], "key": row["key"]}
        if isinstance(value, dict):
            metadata.update({k: v for k, v in value.items() if k not in TEXT_FIELDS})
        for extra in ("expires_at", "ttl_minutes"):
            if extra in keys and row[extra] is not None:
                metadata[extra] = row[extra]
        if "$indexed" in keys and row["$indexed"] not in (None, "[]"):
            metadata["indexed_fields"] = bounded_json.loads(row["$indexed"])
        if self.siblings:
            metadata["store_file"] = self.path.name
            also = self._folding_now().also_in(_identity(row))
            if also:
                metadata["also_in"] = also
        created_at = parse_time(row["created_at"]) if "created_at" in keys else None
        updated = parse_time(row["updated_at"]) if "updated_at" in keys else None
        created = created_at or updated or utcnow()
        updated = updated or created
        return Memory(
            id=self.id_prefix + item_id,
            source=SourceRef(self.kind, self._location + item_id, path=self.path.name, format=self.format),
            layer=Layer.SEMANTIC,
            channel=row["prefix"] or GLOBAL_CHANNEL,
            content=item_text(value),
            created_at=created,
            updated_at=updated,
            last_accessed=updated,
            metadata=metadata,
            revision=row_revision(row),
        )

    def text_of(self, raw: Any) -> str:
        return item_text(_json(raw))

    def text_sql(self) -> str:
        return "CAST(store.value AS TEXT)"  # SqliteStore writes orjson's bytes: a BLOB

    def odd_rows_for(self, needles: Sequence[str]) -> str:
        """Values with no text field are shown as json.dumps writes them (", " and ": " between
        parts, keys sorted), which SqliteStore's orjson does not: those rows text_of decides on."""
        text = self.text_sql()
        fields = " OR ".join(f"json_type({text}, '$.{f}') = 'text'" for f in TEXT_FIELDS)
        return f"(json_valid({text}) AND json_type({text}) IN ('object', 'array') AND NOT ({fields}))"

    def where(self, query: MemoryQuery) -> tuple[str, list[Any]] | None:
        if not self.has_store:
            return None
        found = super().where(query)
        hidden = self._folding_now().hidden if self.siblings else []
        if found is None or not hidden:
            return found
        clause, params = found
        fold = "store.rowid NOT IN (SELECT value FROM json_each(?))"
        return (f"{clause} AND {fold}" if clause else fold), [*params, json.dumps(hidden)]

    def _order(self, query: MemoryQuery) -> str:
        direction = "DESC" if query.descending else "ASC"
        column = self._time_column(query)
        return f"{f'store.{column} {direction}, ' if column else ''}{ITEM_ID} {direction}"

    def _time_column(self, query: MemoryQuery) -> str | None:
        """The column a query's order runs on before the item id (none for the saliences: kept by no item)."""
        column = {Order.CREATED: "created_at", Order.SALIENCE: None, Order.EFFECTIVE_SALIENCE: None}.get(
            query.order, "updated_at")  # recent and accessed: SqliteStore's update time (a read is no write)
        return column if column in self._columns else None

    def page(self, query: MemoryQuery, limit: int, offset: int = 0, after: Memory | None = None) -> list[Memory]:
        if after is None or not self.owns(after.id):
            return super().page(query, limit, offset, after)
        where = self.where(query)
        column = self._time_column(query)
        found = self._item_row(after.id)
        if where is None or limit <= 0:
            return []
        if found is None:  # gone since it was shown: its place is found by its time and id
            return self._page_after_other(query, limit, offset, after)
        return self._page_seeking(query, limit, offset, where, "store", f"store.{column}" if column else None, ITEM_ID,
                                  int(found[0]))

    def record_key(self, record_id: str) -> int:
        """The rowid of the item a record id names; -1 when the file holds none."""
        found = self._item_row(record_id)
        return int(found[0]) if found is not None else -1

    def _item_row(self, record_id: str) -> tuple[int, str, str] | None:
        """(rowid, prefix, key) of the item a record id names. The id joins namespace and key with
        "/", which either may hold: each way to split it is looked up (SqliteStore's primary key)."""
        if not self.has_store or not record_id.startswith(self.id_prefix):
            return None
        item_id = record_id[len(self.id_prefix):]
        for at in (i for i, c in enumerate(item_id) if c == "/"):
            rows = self.rows("SELECT rowid, prefix, key FROM store WHERE prefix = ? AND key = ?",
                             (item_id[:at], item_id[at + 1:]))
            if rows:
                return int(rows[0][0]), rows[0][1], rows[0][2]
        return None

    def get(self, memory_id: str) -> Memory | None:
        found = self._item_row(memory_id) if self.owns(memory_id) else None
        if found is None or (self.siblings and found[0] in self._folding_now().hidden_set):
            return None
        rows = self.rows(f"SELECT {self.spec.select} FROM store WHERE store.rowid = ?", (found[0],))
        return self.memory_of(rows[0]) if rows else None

    # -- copies in one folder ----------------------------------------------------------------

    def _folding_now(self) -> _Folding:
        token = files_token(self.path, *self.siblings)
        if self._folding is None or self._folding[0] != token:
            self._folding = (token, self._fold())
        return self._folding[1]

    def _fold(self) -> _Folding:
        """Which items of this file an earlier file holds the same (not listed here), and which
        later files hold each of this file's items the same (its also_in)."""
        earlier: list[tuple[str, dict[Any, Any]]] = []
        later: list[tuple[str, dict[Any, Any]]] = []
        for sibling in self.siblings:
            try:
                with reading(sibling) as con:
                    items = dict(map(_identity, con.execute("SELECT prefix, key, value, updated_at FROM store")))
            except Exception:  # a sibling that cannot be read folds nothing; its own source says why
                continue
            (earlier if _file_order(sibling) < _file_order(self.path) else later).append((sibling.name, items))
        folding = _Folding(later)
        if earlier:
            for row in self.rows("SELECT rowid, prefix, key, value, updated_at FROM store"):
                identity = _identity(row)
                first = next((name for name, items in earlier if items.get(identity[0]) == identity[1]), None)
                if first is not None:
                    folding.hidden.append(row[0])
                    folding.folded[first] = folding.folded.get(first, 0) + 1
        folding.hidden_set = set(folding.hidden)
        return folding

    # -- threads, problems ---------------------------------------------------------------------

    def load(self) -> Contents:
        contents = Contents()
        contents.problems += [
            f"{link} is another name of {self.path.name} (the same file): its items are listed once" for link in self.links
        ]
        return contents

    def problems(self) -> list[str]:
        found = super().problems()
        if self.threads is not None:
            found += self.threads.problems()
        if self.siblings and self.has_store:
            for first, count in self._folding_now().folded.items():
                found.append(
                    f"{count} item{'s' if count != 1 else ''} of {self.path.name} {'are' if count != 1 else 'is'} the same "
                    f"(namespace, key, value, update time) as in {first}, a copy: listed once, under {first} "
                    f"(an edit there changes {first} only)"
                )
        return found

    # -- SqliteSaver's threads, by SQL per thread (langgraph_threads.py) ------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        return self.threads.sessions(channels) if self.threads is not None else []

    def holds_session(self, session_id: str) -> bool:
        """Whether a thread is shown under session_id: one lookup on the key's index."""
        return self.threads is not None and self.threads.holds(session_id)

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        return self.threads.turns(session_id, limit, offset) if self.threads is not None else []

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        return self.threads.scratch_entries(session_id) if self.threads is not None else []

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        return self.threads.turn_bin_counts(bin_format, since, until) if self.threads is not None else {}

    # -- TTLs ---------------------------------------------------------------------------------

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        """Items whose TTL runs out before until: SqliteStore.sweep_ttl deletes every item whose
        expires_at has passed (expired items are still returned until then)."""
        if not self.has_ttl:
            return []
        with reading(self.path) as con:
            rows = con.execute(
                "SELECT rowid, prefix, key, value, expires_at, ttl_minutes FROM store WHERE expires_at IS NOT NULL"
            ).fetchall()
        hidden = self._folding_now().hidden_set if self.siblings else set()
        found = []
        for row in rows:
            when = parse_time(row["expires_at"])
            if when is None or when > until or row["rowid"] in hidden:
                continue  # (an item of a copy folded into an earlier file's is listed there, as in the table)
            found.append(Upcoming(
                self.id_prefix + f"{row['prefix']}/{row['key']}", CLEAN_UP, when, ttl_rule(row["ttl_minutes"]),
                self.label, preview_of(item_text(_json(row["value"]))),
            ))
        return found

    # -- the write primitive (store items only) ---------------------------------------------

    def _snapshot(self, con, prefix: str, key: str) -> Snapshot | None:
        row = con.execute("SELECT * FROM store WHERE prefix = ? AND key = ?", (prefix, key)).fetchone()
        if row is None:
            return None
        vectors = []
        if self.has_vectors:
            vectors = con.execute(
                "SELECT * FROM store_vectors WHERE prefix = ? AND key = ? ORDER BY field_name", (prefix, key)
            ).fetchall()
        return item_snapshot(row, vectors)

    def _key_of(self, record_id: str, *snapshots: Snapshot | None) -> tuple[str, str]:
        found = self._item_row(record_id)
        if found is not None:
            return found[1], found[2]
        # An item a delete removed: its snapshot still names it (undo, restore).
        for snap in snapshots:
            if snap is not None:
                return snap["prefix"], snap["key"]
        prefix, _, key = record_id[len(self.id_prefix):].rpartition("/")
        return prefix, key

    def read_record(self, record_id: str) -> Snapshot | None:
        prefix, key = self._key_of(record_id)
        with reading(self.path) as con:
            return self._snapshot(con, prefix, key)

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        value = _json(blob_text(snap["value"]))
        text = requested["content"]
        if isinstance(value, dict) and any(isinstance(value.get(f), str) for f in TEXT_FIELDS):
            field = next(f for f in TEXT_FIELDS if isinstance(value.get(f), str))
            new_value: Any = {**value, field: text}
        else:
            try:
                new_value = bounded_json.loads(text)
            except json.JSONDecodeError:
                raise UnsupportedError(
                    "This LangGraph item's value has no text field; give the whole value as JSON."
                ) from None
        if new_value == value:
            return snap
        return {
            **snap,
            # SqliteStore writes orjson bytes, so the value stays a BLOB of UTF-8 JSON.
            "value": {"$blob": json.dumps(new_value, ensure_ascii=False).encode("utf-8").hex()},
            "updated_at": now.replace("T", " ")[:19],
            "vectors": [],
        }

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        prefix, key = self._key_of(record_id, expected, new)
        with writing(self.path) as con:
            self.check_expected(record_id, self._snapshot(con, prefix, key), expected)
            if self.has_vectors:
                con.execute("DELETE FROM store_vectors WHERE prefix = ? AND key = ?", (prefix, key))
            con.execute("DELETE FROM store WHERE prefix = ? AND key = ?", (prefix, key))
            if new is not None:
                row = row_values({k: v for k, v in new.items() if k != "vectors"})
                con.execute(
                    f"INSERT INTO store ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
                )
                for vector in map(row_values, new.get("vectors", [])):
                    con.execute(
                        f"INSERT INTO store_vectors ({', '.join(vector)}) VALUES ({', '.join('?' * len(vector))})",
                        tuple(vector.values()),
                    )
            actual = self._snapshot(con, prefix, key)
        self.invalidate()
        return actual


def _file_order(path: Path) -> tuple[int, str]:
    return len(path.name), path.name


def _identity(row: Any) -> tuple[tuple[str, str], tuple[Any, Any]]:
    """(namespace, key) -> (value, update time): what makes two files' items the same item."""
    return (row["prefix"], row["key"]), (blob_text(row["value"]), row["updated_at"])


def ttl_rule(minutes: Any) -> str:
    """SqliteStore's TTL in words: what sets expires_at, what moves it, and what deletes the item."""
    ttl = f"{minutes:g} minutes" if isinstance(minutes, (int, float)) else "a TTL"
    return (f"LangGraph TTL: {ttl} after its last write; a get or search refreshes it when the store's ttl "
            "config has refresh_on_read (LangGraph's default); deleted by the TTL sweeper (sweep_ttl) once past")


def item_snapshot(row: Any, vectors: list[Any]) -> Snapshot:
    """An item and its vector rows: what an edit or delete changes together."""
    return {**plain_row(row), "vectors": [plain_row(v) for v in vectors]}


def item_text(value: Any) -> str:
    if isinstance(value, dict):
        for field in TEXT_FIELDS:
            if isinstance(value.get(field), str):
                return value[field]
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def message_text(message: dict[str, Any]) -> str:
    """A message's text, then each tool call it makes as name(arguments) (an AI message that
    only calls tools has no text of its own)."""
    content = message.get("content")
    if isinstance(content, list):  # content blocks
        text = "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content)
    else:
        text = str(content or "")
    calls = [
        f"{call.get('name', '?')}({json.dumps(call.get('args') or {}, ensure_ascii=False, default=str)})"
        for call in message.get("tool_calls") or []
        if isinstance(call, dict)
    ]
    return "\n".join(part for part in (text, *calls) if part)


def _json(text: Any) -> Any:
    try:
        return bounded_json.loads(text)
    except (TypeError, json.JSONDecodeError):
        return text


def decode_checkpoint(kind: str | None, blob: Any) -> dict[str, Any]:
    """A checkpoint as plain data (see unpack)."""
    out = unpack(kind, blob)
    if not isinstance(out, dict):
        raise ValueError("not a checkpoint mapping")
    return out


def unpack(kind: str | None, blob: Any) -> Any:
    """A value LangGraph's serializer wrote, as plain data, without LangGraph: msgpack extension
    types (LangChain messages, pydantic models, datetimes) become dicts of their constructor
    arguments."""
    if kind == "msgpack":
        import msgpack

        def ext(code: int, data: bytes) -> Any:
            value = msgpack.unpackb(data, ext_hook=ext, raw=False, strict_map_key=False)
            if isinstance(value, (list, tuple)) and len(value) >= 3 and isinstance(value[2], dict):
                return {"__class__": value[1], **value[2]}
            if isinstance(value, (list, tuple)) and len(value) >= 3:
                return value[2]
            return value

        try:
            out = msgpack.unpackb(blob, ext_hook=ext, raw=False, strict_map_key=False)
        except Exception as exc:  # msgpack raises several types on bad input
            raise ValueError(f"bad msgpack: {exc}") from None
    elif kind in ("json", None):
        try:
            out = bounded_json.loads(blob)
        except (TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"bad JSON: {exc}") from None
    else:
        raise ValueError(f"serialization {kind!r} is not one Mnemoscope reads")
    return out


def detect(path: Path) -> list[FormatMatch]:
    found: list[tuple[Path, dict[str, set[str]]]] = []
    links: dict[Path, list[str]] = {}
    seen: dict[tuple[int, int], Path] = {}
    for candidate in sqlite_files(path):
        tables = sqlite_tables(candidate)
        if STORE_COLUMNS <= tables.get("store", set()) or CHECKPOINT_COLUMNS <= tables.get("checkpoints", set()):
            try:
                stat = candidate.stat()
            except OSError:
                continue
            first = seen.setdefault((stat.st_dev, stat.st_ino), candidate)
            if first != candidate:  # a hard or symbolic link to a file already found
                links.setdefault(first, []).append(candidate.name)
                continue
            found.append((candidate, tables))
    stores = sorted((c for c, tables in found if STORE_COLUMNS <= tables.get("store", set())), key=_file_order)
    return [
        FormatMatch(
            "langgraph", "LangGraph", candidate,
            open=partial(LangGraphSource, candidate, tables, tuple(s for s in stores if s != candidate and candidate in stores),
                         tuple(links.get(candidate, ()))),
        )
        for candidate, tables in found
    ]
