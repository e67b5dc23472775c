"""The native store's tables on any database: what SqliteSource (memory.db) and PostgresSource
(a PostgreSQL server) do alike. Memories as rows, the write primitive and its plans, the agent's
API, sessions, scratchpad and graph, through SQLAlchemy Core or through SQL the subclass's
DB-API connection runs (``reading()``, with its driver's placeholder ``_mark``). A subclass
supplies the connections, the errors' wording, the change token, keyword search, time bins and
effective salience in its database's own SQL."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, insert, or_, select, text, type_coerce, update
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.types import NullType

from ...errors import (
    ConflictError,
    NotFoundError,
    NothingToDoError,
    UnsupportedError,
)
from ...lazy_page import LazyPage
from ...model import (
    EDITABLE_FIELDS,
    GLOBAL_CHANNEL,
    Entity,
    Kind,
    Layer,
    Memory,
    Provenance,
    Relation,
    RelationType,
    ScratchEntry,
    Session,
    SourceRef,
    Status,
    Turn,
    parse_layer,
    parse_status,
)
from ...query import MemoryQuery, Order, sort_key
from ...salience import PromotionThresholds
from ...source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    REEMBED,
    REINFORCE,
    RESTORE,
    Capabilities,
    Change,
    Plan,
    PlanContext,
    Snapshot,
    page_after_by_key,
    same_record,
)
from ...timeutil import parse_time, to_iso, utcnow
from . import schema
from .positions import Positions

DB_NAME = "memory.db"
RELATION_PREFIX = "relation:"
SCRATCH_PREFIX = "scratch:"  # + JSON [session id, key]: one scratchpad row
_ORDER_COLUMNS = {
    Order.RECENT: schema.memories.c.updated_at,
    Order.CREATED: schema.memories.c.created_at,
    Order.SALIENCE: schema.memories.c.salience,
    Order.ACCESSED: schema.memories.c.last_accessed,
}


_LAYERS = {layer.value: layer for layer in Layer}
_STATUSES = {status.value: status for status in Status}
_NO_PROVENANCE = Provenance()


def _int_column(row: dict[str, Any], name: str, default: int, unreadable: dict[str, str]) -> int:
    value = row[name]
    return value if type(value) is int else int(_number(value, int, default, unreadable, name))


def _real_column(row: dict[str, Any], name: str, default: float, unreadable: dict[str, str]) -> float:
    value = row[name]
    return value if type(value) is float and math.isfinite(value) else float(_number(value, float, default, unreadable, name))


def _stored_time(value: Any, default: datetime | None) -> datetime:
    """A time column's value: ISO text in UTC as Mnemoscope writes it is read directly."""
    if type(value) is str and value.endswith("+00:00"):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    return parse_time(value, default or utcnow())


def new_id(prefix: str = "m") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _json_list(value: Any) -> tuple[str, ...]:
    if not value or value == "[]":
        return ()
    try:
        loaded = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return (str(value),)
    return tuple(str(v) for v in loaded) if isinstance(loaded, list) else (str(loaded),)


def _number(value: Any, kind: type[int] | type[float], default: float, unreadable: dict[str, str], name: str) -> Any:
    """A number column's value. Text or bytes another program stored there read as the default
    and are noted in unreadable (shown with the memory instead of failing the whole read)."""
    if value is None:
        return kind(default)
    if isinstance(value, int) and not isinstance(value, bool):
        return kind(value)
    try:
        if not isinstance(value, (str, float)):
            raise TypeError(value)
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(value)
        return kind(number)
    except (TypeError, ValueError):
        unreadable[name] = repr(value)[:80]
        return kind(default)


def _json_dict(value: Any) -> dict[str, Any]:
    if not value or value == "{}":
        return {}
    try:
        loaded = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}



class NativeDb:
    """The native store's tables on one database (see the module's docstring).

    Beyond the Source protocol it is the API an agent embeds to write its
    memory: add_session, add_turns, set_scratch, add_memory, add_entity,
    add_relation, touch.
    """

    kind = Kind.SQLITE  # the kind of a memory kept as a row of the native tables, on any database
    format = "mnemoscope"
    label = "Mnemoscope memory.db"
    seeks = True
    schema_version: int
    _mark = "?"  # the DB-API driver's placeholder, for the SQL reading() runs
    # A column among the ids of a JSON array given as one parameter (any number of ids, one variable).
    _among_json = "{column} IN (SELECT value FROM json_each({mark}))"
    _where = DB_NAME  # where a memory's row lives, as its SourceRef names it
    _nullable_orders: set[Order] = set()
    _positions: Positions
    orders_by_effective_salience = True  # in SQL, by effective_salience_key_sql (not sought: counted)

    # -- what a database supplies ----------------------------------------------------------

    @property
    def engine(self) -> Engine:
        raise NotImplementedError

    def reading(self) -> contextlib.AbstractContextManager[Any]:
        """A DB-API connection for the read paths that render their SQL themselves."""
        raise NotImplementedError

    def errors(self) -> contextlib.AbstractContextManager[None]:
        """Turns the driver's errors into one readable StoreError."""
        raise NotImplementedError

    def write_transaction(self) -> contextlib.AbstractContextManager[Connection]:
        """A transaction in which what is read (a conflict check) cannot change before it is written."""
        raise NotImplementedError

    def rehearsal(self) -> contextlib.AbstractContextManager[Connection]:
        """A write_transaction that is always rolled back."""
        raise NotImplementedError

    def change_token(self) -> str:
        raise NotImplementedError

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        raise NotImplementedError

    def time_bin_sql(self, bin_format: str, column: str) -> tuple[str, list[Any]]:
        """SQL (and its parameters) labelling a time column's value with a strftime format."""
        raise NotImplementedError

    def effective_salience(self, rate: float, boost: float, at: datetime) -> Any:
        """Effective salience as an SQL expression, matching SalienceModel.effective_raw."""
        raise NotImplementedError

    def salience_bucket(self, effective: Any, bins: int) -> Any:
        """Which of bins equal buckets of [0, 1] an effective salience falls in, as SQL."""
        raise NotImplementedError

    def effective_salience_key_sql(self, ln_rate: float, boost: float) -> str:
        """query.effective_salience_key as SQL over a memories row (ln_rate: ln of the decay rate)."""
        raise NotImplementedError

    def _not_found(self) -> str:
        """Where a missing memory was looked for, for messages."""
        raise NotImplementedError

    # -- the Source protocol ------------------------------------------------------------------
    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            editable_fields=EDITABLE_FIELDS,
            can_promote=True,
            can_soft_delete=True,
            can_reinforce=True,
            keyword_search=True,
            sessions=True,
            scratchpad=True,
            graph=True,
            reembed=True,
        )

    def problems(self) -> list[str]:
        return []

    def _filter(self, query: MemoryQuery, prefix: str = "") -> tuple[list[str], list[Any]]:
        """The query's conditions on memories as SQL (with the driver's placeholders, columns
        prefixed by prefix) and their values: one rendering for pages, counts and searches,
        so that they always agree."""
        mark = self._mark
        clauses: list[str] = []
        params: list[Any] = []

        def among(column: str, values: Sequence[str]) -> None:
            clauses.append(f"{prefix}{column} IN ({', '.join([mark] * len(values))})")
            params.extend(values)

        if query.channels:
            among("channel", query.channels)
        if query.layers:
            among("layer", [layer.value for layer in query.layers])
        if query.statuses:
            among("status", [status.value for status in query.statuses])
        if query.since is not None:
            clauses.append(f"{prefix}created_at >= {mark}")
            params.append(to_iso(query.since))
        if query.until is not None:
            clauses.append(f"{prefix}created_at < {mark}")
            params.append(to_iso(query.until))
        if query.contains:
            clauses.append(f"lower({prefix}content) LIKE lower({mark}) ESCAPE '\\'")
            params.append(f"%{_escape_like(query.contains)}%")
        if query.ids:
            clauses.append(self._among_json.format(column=f"{prefix}id", mark=mark))
            params.append(json.dumps(list(query.ids)))
        return clauses, params

    def _where_sql(self, query: MemoryQuery, *more: str) -> tuple[str, list[Any]]:
        clauses, params = self._filter(query)
        clauses += more
        return (f" WHERE {' AND '.join(clauses)}" if clauses else ""), params

    @staticmethod
    def _fetch(dbapi: Any, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[Any]]:
        """sql's column names and rows."""
        cursor = dbapi.cursor()
        try:
            cursor.execute(sql, tuple(params))
            rows = list(cursor.fetchall())
            return [d[0] for d in cursor.description], rows
        finally:
            cursor.close()

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self.reading() as dbapi:
            return self._fetch(dbapi, sql, params)[1]

    def count(self, query: MemoryQuery) -> int:
        if not query.wants_kind(self.kind):
            return 0
        where, params = self._where_sql(query)
        return int(self._query(f"SELECT count(*) FROM memories{where}", params)[0][0])

    seeks = True

    def page(self, query: MemoryQuery, limit: int, offset: int = 0, after: Memory | None = None) -> Sequence[Memory]:
        """limit memories in the query's order, skipping offset of them; with after, those that
        come after that memory (a seek on the order's index, as fast at row 900,000 as at row 0).
        Without after, a page seeks from the nearest row an earlier page read (see positions).
        The rows are decoded into memories as they are read (see LazyPage)."""
        if not query.wants_kind(self.kind) or limit <= 0:
            return []
        if after is not None and query.order is Order.EFFECTIVE_SALIENCE:  # after may be another source's
            return page_after_by_key(self, query, limit, offset, after)
        with self.reading() as conn:
            seekable = query.order not in self._nullable_orders and query.order is not Order.EFFECTIVE_SALIENCE
            bound: tuple[Any, str] | None = None
            start, before = None, False  # the position of the first row asked for, when it is known
            if after is not None:
                if seekable:
                    bound = self._stored_key(conn, query.order, after)
                else:
                    offset += self._position_after(conn, query, after)
            elif seekable:
                start = offset
                token, bound, offset = self._positions.nearest(query, offset)
                if bound is not None and offset * 2 > start:
                    # Past a seek SQLite tests each skipped row against the key (about twice what
                    # plain OFFSET pays a row): from a row far behind, OFFSET from the top is faster.
                    bound, offset = None, start
                before = offset > 0  # read the row before too, to remember where it is
                if before:
                    offset, limit = offset - 1, limit + 1
            sql, params = self._ordered(query, bound)
            names, rows = self._fetch(conn, f"{sql} LIMIT {self._mark} OFFSET {self._mark}", (*params, limit, offset))
        if start is not None and rows:
            at, id_at = names.index(_ORDER_COLUMNS[query.order].name), names.index("id")
            if before:
                self._positions.learn(query, token, start - 1, (rows[0][at], rows[0][id_at]))
                rows = rows[1:]
            if rows:
                self._positions.learn(query, token, start + len(rows) - 1, (rows[-1][at], rows[-1][id_at]))
        now = utcnow()
        return LazyPage(rows, lambda row: self._memory(dict(zip(names, row, strict=True)), now), names.index("id"))

    def _ordered(self, query: MemoryQuery, bound: tuple[Any, str] | None = None, columns: str = "*") -> tuple[str, list[Any]]:
        """SELECT columns of the query's memories in its order, only those past bound (value,
        id) if given."""
        if query.order is Order.EFFECTIVE_SALIENCE:
            column = self.effective_salience_key_sql(math.log(query.decay.decay_rate), query.decay.access_boost)
        else:
            column = _ORDER_COLUMNS[query.order].name
        direction = "DESC" if query.descending else "ASC"
        past = []
        if bound is not None:
            past.append(f"({column}, id) {'<' if query.descending else '>'} ({self._mark}, {self._mark})")
        where, params = self._where_sql(query, *past)
        if bound is not None:
            params += bound
        return f"SELECT {columns} FROM memories{where} ORDER BY {column} {direction}, id {direction}", params

    def _stored_key(self, conn: Any, order: Order, memory: Memory) -> tuple[Any, str]:
        """memory's (order value, id) as this file holds it; as Mnemoscope writes it when the
        memory is not here (it comes from another source, or was deleted meanwhile)."""
        column = _ORDER_COLUMNS[order].name
        rows = self._fetch(conn, f"SELECT {column} FROM memories WHERE id = {self._mark}", (memory.id,))[1]
        if rows:
            return rows[0][0], memory.id
        value = sort_key(order)(memory)[0]
        return (to_iso(value) if isinstance(value, datetime) else value), memory.id

    def _position_after(self, conn: Any, query: MemoryQuery, memory: Memory) -> int:
        """How many of the query's memories come up to and including memory (a column that may
        hold NULLs cannot be sought: the rows are counted)."""
        sql, params = self._ordered(query, columns="id")
        for n, (found,) in enumerate(self._fetch(conn, sql, params)[1], 1):
            if found == memory.id:
                return n
        return 0

    def get(self, memory_id: str) -> Memory | None:
        row = self._memory_row(memory_id)
        return self._memory(row) if row else None

    def _memory_row(self, memory_id: str) -> dict[str, Any] | None:
        stmt = select(schema.memories).where(schema.memories.c.id == memory_id)
        with self.errors(), self.engine.connect() as conn:
            row = conn.execute(stmt).first()
        return dict(row._mapping) if row else None

    def _memory(self, row: Any, now: datetime | None = None) -> Memory:
        """A memory from a memories row (a mapping of its columns). Pages build a hundred of
        these per screen: the common case (values as Mnemoscope writes them) takes fast paths."""
        row = row if type(row) is dict else dict(row)
        created = _stored_time(row["created_at"], now)
        unreadable: dict[str, str] = {}
        access_count = _int_column(row, "access_count", 0, unreadable)
        salience = _real_column(row, "salience", 0.5, unreadable)
        confidence = _real_column(row, "confidence", 1.0, unreadable)
        conversations = _int_column(row, "conversations", 0, unreadable)
        metadata = _json_dict(row["metadata"])
        if row.get("md_file"):
            metadata["md_file"] = row["md_file"]
        metadata["vector_state"] = row["vector_state"]
        if unreadable:
            metadata["unreadable_values"] = unreadable
        derived_from, promoted_from, imported_from = row["derived_from"], row["promoted_from"], row["imported_from"]
        return Memory.built(
            id=row["id"],
            source=SourceRef.built(kind=Kind.SQLITE, location=f"{self._where}:memories/{row['id']}", path=self._where),
            layer=_LAYERS.get(row["layer"]) or parse_layer(row["layer"]),
            channel=row["channel"],
            content=row["content"],
            created_at=created,
            updated_at=_stored_time(row["updated_at"], created),
            last_accessed=_stored_time(row["last_accessed"], created),
            access_count=access_count,
            salience=salience,
            confidence=confidence,
            conversations=conversations,
            tags=_json_list(row["tags"]),
            metadata=metadata,
            status=_STATUSES.get(row["status"]) or parse_status(row["status"]),
            provenance=_NO_PROVENANCE
            if derived_from == "[]" and promoted_from is None and imported_from is None
            else Provenance(promoted_from=promoted_from, derived_from=_json_list(derived_from), imported_from=imported_from),
            revision=_row_revision(row),
        )

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        if not query.wants_kind(self.kind):
            return {}
        if column == "kind":
            return {self.kind.value: self.count(query)}
        name = schema.memories.c[column].name
        where, params = self._where_sql(query)
        return {str(k): int(v) for k, v in self._query(f"SELECT {name}, count(*) FROM memories{where} GROUP BY {name}", params)}

    def counts_by_columns(self, columns: Sequence[str], query: MemoryQuery) -> dict[str, dict[str, int]]:
        """counts_by for several columns from one GROUP BY of them all (one pass over the
        status, channel, layer index for the sidebar's counts)."""
        if not query.wants_kind(self.kind):
            return {column: {} for column in columns}
        grouped = ", ".join(schema.memories.c[c].name for c in columns if c != "kind")
        names = [c for c in columns if c != "kind"]
        where, params = self._where_sql(query)
        out: dict[str, dict[str, int]] = {column: {} for column in columns}
        total = 0
        for *values, n in self._query(f"SELECT {grouped}, count(*) FROM memories{where} GROUP BY {grouped}", params):
            total += n
            for column, value in zip(names, values, strict=True):
                out[column][str(value)] = out[column].get(str(value), 0) + n
        if "kind" in columns:
            out["kind"] = {self.kind.value: total}
        return out

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        if not query.wants_kind(self.kind):
            return {}
        grouped = group_by in ("layer", "channel", "status")
        group = group_by if grouped else f"'{self.kind.value}'"
        bin_sql, bin_params = self.time_bin_sql(bin_format, "created_at")
        where, params = self._where_sql(query)
        sql = (f"SELECT {bin_sql} AS bin, {group}, count(*) FROM memories{where} "
               f"GROUP BY bin{f', {group}' if grouped else ''}")
        return {(str(b), str(g)): int(n) for b, g, n in self._query(sql, [*bin_params, *params])}

    def stale_vector_ids(self) -> list[str]:
        """Memories whose vector copy no longer matches their content."""
        m = schema.memories.c
        with self.errors(), self.engine.connect() as conn:
            return [r[0] for r in conn.execute(select(m.id).where(m.vector_state == "stale").order_by(m.id))]

    def memories_with_markdown_copies(self) -> list[tuple[str, str]]:
        """(md_file, content) of every memory that keeps a copy in workspace markdown."""
        m = schema.memories.c
        stmt = select(m.md_file, m.content).where(m.md_file.is_not(None))
        with self.errors(), self.engine.connect() as conn:
            return [(str(f), str(c)) for f, c in conn.execute(stmt)]

    def memory_with_markdown_copy(self, md_file: str, content: str) -> str | None:
        """The memory whose markdown copy is this block of md_file, if one is."""
        m = schema.memories.c
        wanted = " ".join(content.split()).casefold()
        stmt = select(m.id, m.content).where(m.md_file == md_file)
        with self.errors(), self.engine.connect() as conn:
            for memory_id, text in conn.execute(stmt):
                if " ".join(str(text).split()).casefold() == wanted:
                    return str(memory_id)
        return None

    # -- the write primitive ---------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return not record_id.startswith(("md:", "vec:"))

    def _row_for(self, record_id: str) -> tuple[Any, Any]:
        """The table a record id names and the condition that selects its row."""
        if record_id.startswith(SCRATCH_PREFIX):
            session_id, key = scratch_key(record_id)
            sp = schema.scratchpad.c
            return schema.scratchpad, and_(sp.session_id == session_id, sp.key == key)
        if record_id.startswith(RELATION_PREFIX):
            return schema.relations, schema.relations.c.id == record_id[len(RELATION_PREFIX) :]
        return schema.memories, schema.memories.c.id == record_id

    def read_record(self, record_id: str) -> Snapshot | None:
        table, where = self._row_for(record_id)
        with self.errors(), self.engine.connect() as conn:
            return _read_row(conn, table, where)

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        with self.errors(), self.write_transaction() as conn:
            return self._write_row(conn, record_id, expected, new)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        """Run a step's memory.db writes in a transaction that is rolled back, before the journal
        holds the step: a trigger another program added that refuses them, a constraint, a full
        disk or a lock fail here, and nothing is written."""
        mine = [c for c in changes if self.owns(c.record)]
        if not mine:
            return
        with self.errors(), self.rehearsal() as conn:
            for change in mine:
                self._write_row(conn, change.record, change.before, change.after)

    def _write_row(
        self, conn: Connection, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        table, where = self._row_for(record_id)
        current = _read_row(conn, table, where, lock=True)
        if not same_record(current, expected):
            raise ConflictError(
                f"{record_id} changed since it was read (another writer touched it); "
                "nothing was written. Reload and try again."
            )
        if new is None:
            conn.execute(delete(table).where(where))
        elif current is None:
            conn.execute(insert(table).values(_as_stored(new)))
        else:
            changed = {name: value for name, value in new.items() if name not in current or current[name] != value}
            if changed:
                conn.execute(update(table).where(where).values(_as_stored(changed)))
        return _read_row(conn, table, where)

    # -- planning (rows only; the workspace adds their vector and markdown copies) ----------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        row = self.read_record(memory.id)
        if row is None:
            raise NotFoundError(f"No memory {memory.id} in {self._not_found()}.")
        if operation == EDIT:
            new_row = dict(row)
            for name, value in fields.items():
                if name == "tags":
                    new_row["tags"] = json.dumps(list(value), ensure_ascii=False)
                elif name == "layer":
                    new_row["layer"] = Layer(value).value
                else:
                    new_row[name] = value
            if new_row == row:
                return Plan()
            return Plan([Change(memory.id, row, {**new_row, "updated_at": context.now})])
        if operation in (DELETE, RESTORE):
            status = Status.DELETED if operation == DELETE else Status.ACTIVE
            return Plan([Change(memory.id, row, {**row, "status": status.value, "updated_at": context.now})])
        if operation == PURGE:
            changes = [Change(memory.id, row, None)]
            for relation in self.relations(touching=memory.id):
                rid = RELATION_PREFIX + relation.id
                changes.append(Change(rid, self.read_record(rid), None))
            return Plan(changes)
        if operation == REINFORCE:
            new_row = {**row, "access_count": row["access_count"] + 1, "last_accessed": context.now}
            return Plan([Change(memory.id, row, new_row)])
        if operation == REEMBED:
            return Plan([Change(memory.id, row, {**row, "vector_state": "fresh"})], embed_text=row["content"])
        if operation == PROMOTE:
            return self._plan_promote(memory, row, fields["to"], fields.get("reason", ""), context.now)
        raise UnsupportedError(f"{memory.id}: {operation} is not something a memory.db row can do.")

    def _plan_promote(self, memory: Memory, row: Snapshot, to: str, reason: str, now: str) -> Plan:
        """A copy in channel ``to`` linked to the original by PROMOTED_FROM; the original stays
        (seed 002). The copy's access clock starts now, so that it does not start out idle."""
        if memory.channel == to:
            raise NothingToDoError(f"{memory.id} is already in channel {to}.")
        promoted_id = new_id()
        metadata = {**_json_dict(row["metadata"]), **({"promotion_reason": reason} if reason else {})}
        promoted = {
            **row,
            "id": promoted_id,
            "channel": to,
            "promoted_from": memory.id,
            "created_at": now,
            "updated_at": now,
            "last_accessed": now,
            "import_key": None,
            "metadata": json.dumps(metadata, sort_keys=True),
        }
        relation_id = new_id("r")
        relation = relation_row(
            Relation(relation_id, promoted_id, memory.id, RelationType.PROMOTED_FROM.value, to, 1.0, parse_time(now))
        )
        return Plan(
            [Change(promoted_id, None, promoted), Change(RELATION_PREFIX + relation_id, None, relation)],
            new_id=promoted_id,
        )

    # -- the agent's API -------------------------------------------------------

    def add_session(
        self,
        session_id: str,
        *,
        channel: str = "_global",
        title: str = "",
        user_id: str = "",
        started_at: datetime | None = None,
    ) -> None:
        with self.errors(), self.engine.begin() as conn:
            conn.execute(
                insert(schema.sessions).values(
                    id=session_id,
                    channel=channel,
                    title=title,
                    user_id=user_id,
                    started_at=to_iso(started_at or utcnow()),
                )
            )

    def add_turns(self, session_id: str, turns: Iterable[tuple[str, str, datetime]]) -> None:
        """Append (role, content, timestamp) turns to a session."""
        with self.errors(), self.engine.begin() as conn:
            start = conn.execute(
                select(func.coalesce(func.max(schema.turns.c.idx) + 1, 0)).where(
                    schema.turns.c.session_id == session_id
                )
            ).scalar_one()
            rows = [
                {
                    "session_id": session_id,
                    "idx": start + i,
                    "role": role,
                    "content": content,
                    "timestamp": to_iso(ts),
                }
                for i, (role, content, ts) in enumerate(turns)
            ]
            if rows:
                conn.execute(insert(schema.turns), rows)

    def set_scratch(
        self, session_id: str, key: str, value: Any, updated_at: datetime | None = None
    ) -> None:
        stored = scratch_text(value)
        when = to_iso(updated_at or utcnow())
        with self.errors(), self.engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO scratchpad(session_id, key, value, updated_at) "
                    "VALUES (:s, :k, :v, :t) ON CONFLICT(session_id, key) "
                    "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"
                ),
                {"s": session_id, "k": key, "v": stored, "t": when},
            )

    def add_memory(self, content: str, **fields: Any) -> str:
        """Insert one memory; fields as for memory_row. Returns its id."""
        row = self.memory_row(content, **fields)
        self.insert_memory_rows([row])
        return row["id"]

    @staticmethod
    def memory_row(
        content: str,
        *,
        layer: Layer = Layer.SEMANTIC,
        channel: str = "_global",
        memory_id: str | None = None,
        created_at: datetime | None = None,
        last_accessed: datetime | None = None,
        access_count: int = 0,
        salience: float = 0.5,
        confidence: float = 1.0,
        conversations: int = 0,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
        derived_from: Sequence[str] = (),
        imported_from: str | None = None,
        import_key: str | None = None,
        md_file: str | None = None,
        vector_state: str = "none",
        status: Status = Status.ACTIVE,
        promoted_from: str | None = None,
        updated_at: datetime | None = None,
    ) -> dict[str, Any]:
        created = created_at or utcnow()
        return {
            "id": memory_id or new_id(),
            "layer": Layer(layer).value,
            "channel": channel,
            "content": content,
            "created_at": to_iso(created),
            "updated_at": to_iso(updated_at or created),
            "last_accessed": to_iso(last_accessed or created),
            "access_count": int(access_count),
            "salience": float(salience),
            "confidence": float(confidence),
            "conversations": int(conversations),
            "tags": json.dumps(list(tags), ensure_ascii=False),
            "metadata": json.dumps(metadata or {}, ensure_ascii=False, sort_keys=True),
            "status": Status(status).value,
            "promoted_from": promoted_from,
            "derived_from": json.dumps(list(derived_from)),
            "imported_from": imported_from,
            "import_key": import_key,
            "md_file": md_file,
            "vector_state": vector_state,
        }

    def insert_memory_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        with self.errors(), self.engine.begin() as conn:
            conn.execute(insert(schema.memories), list(rows))

    def existing_values(self, column: str, keys: Sequence[str]) -> set[str]:
        """Which of these values a memories column already holds (ids, import keys)."""
        found: set[str] = set()
        col = schema.memories.c[column]
        with self.errors(), self.engine.connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                found.update(r[0] for r in conn.execute(select(col).where(col.in_(chunk))))
        return found

    def touch(self, memory_id: str, at: datetime | None = None) -> None:
        """Reinforce on retrieval: one more access, last accessed now."""
        m = schema.memories.c
        with self.errors(), self.engine.begin() as conn:
            result = conn.execute(
                update(schema.memories)
                .where(m.id == memory_id)
                .values(access_count=m.access_count + 1, last_accessed=to_iso(at or utcnow()))
            )
            if result.rowcount == 0:
                raise NotFoundError(f"No memory {memory_id}.")

    def add_entity(self, entity: Entity) -> None:
        with self.errors(), self.engine.begin() as conn:
            conn.execute(
                insert(schema.entities).values(
                    id=entity.id,
                    name=entity.name,
                    type=entity.type,
                    channel=entity.channel,
                    description=entity.description,
                    aliases=json.dumps(list(entity.aliases)),
                    salience=entity.salience,
                    access_count=entity.access_count,
                    first_seen=to_iso(entity.first_seen) if entity.first_seen else None,
                    last_accessed=to_iso(entity.last_accessed) if entity.last_accessed else None,
                )
            )

    def add_relation(self, relation: Relation) -> None:
        with self.errors(), self.engine.begin() as conn:
            conn.execute(insert(schema.relations).values(**relation_row(relation)))

    # -- sessions, scratchpad, graph -------------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        s, t = schema.sessions.c, schema.turns.c
        turn_count = (
            select(func.count()).where(t.session_id == s.id).correlate(schema.sessions)
        ).scalar_subquery()
        stmt = select(schema.sessions, turn_count.label("turn_count")).order_by(s.started_at.desc())
        if channels:
            stmt = stmt.where(s.channel.in_(channels))
        with self.errors(), self.engine.connect() as conn:
            return [
                Session(
                    id=r.id,
                    channel=r.channel,
                    title=r.title,
                    started_at=parse_time(r.started_at, utcnow()),
                    turn_count=int(r.turn_count),
                    user_id=r.user_id,
                )
                for r in conn.execute(stmt)
            ]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        t = schema.turns.c
        stmt = (
            select(schema.turns)
            .where(t.session_id == session_id)
            .order_by(t.idx)
            .limit(limit)
            .offset(offset)
        )
        with self.errors(), self.engine.connect() as conn:
            return [
                Turn(r.session_id, r.idx, r.role, r.content, parse_time(r.timestamp, utcnow()))
                for r in conn.execute(stmt)
            ]

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        bin_sql, params = self.time_bin_sql(bin_format, '"timestamp"')
        clauses = []
        if since is not None:
            clauses.append(f'"timestamp" >= {self._mark}')
            params.append(to_iso(since))
        if until is not None:
            clauses.append(f'"timestamp" < {self._mark}')
            params.append(to_iso(until))
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {bin_sql} AS bin, count(*) FROM turns{where} GROUP BY bin"
        return {str(b): int(n) for b, n in self._query(sql, params)}

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        sp = schema.scratchpad.c
        stmt = select(schema.scratchpad).order_by(sp.session_id, sp.key)
        if session_id:
            stmt = stmt.where(sp.session_id == session_id)
        with self.errors(), self.engine.connect() as conn:
            return [self.scratch_entry(dict(r._mapping)) for r in conn.execute(stmt)]

    # -- the scratchpad as records of the write primitive (a person's edits, through Curator) ----

    scratch_note = ""

    def scratch_record(self, session_id: str, key: str) -> str:
        return SCRATCH_PREFIX + json.dumps([session_id, key], ensure_ascii=False)

    def is_scratch_record(self, record_id: str) -> bool:
        return record_id.startswith(SCRATCH_PREFIX)

    def scratch_snapshot(self, current: Snapshot | None, session_id: str, key: str, value: Any, now: str) -> Snapshot:
        """The row set_scratch writes for value (current itself when it already holds that value:
        the same text, or JSON that reads back as the same value)."""
        try:
            stored = scratch_text(value)
        except (TypeError, ValueError):
            raise UnsupportedError(f"The value of {key} is not JSON; the scratchpad keeps text and JSON only.") from None
        if current is not None and (current["value"] == stored or _same_json(current["value"], value)):
            return current
        return {"session_id": session_id, "key": key, "value": stored, "updated_at": now}

    @staticmethod
    def scratch_entry(snapshot: Snapshot) -> ScratchEntry:
        value = snapshot["value"]
        return ScratchEntry(
            snapshot["session_id"], snapshot["key"], value if isinstance(value, str) else str(value),
            parse_time(snapshot["updated_at"], utcnow()),
        )

    def entities(self, channels: Sequence[str] = ()) -> list[Entity]:
        e = schema.entities.c
        stmt = select(schema.entities).order_by(e.name)
        if channels:
            stmt = stmt.where(e.channel.in_(channels))
        with self.errors(), self.engine.connect() as conn:
            return [
                Entity(
                    id=r.id,
                    name=r.name,
                    type=r.type,
                    channel=r.channel,
                    description=r.description,
                    aliases=_json_list(r.aliases),
                    salience=_number(r.salience, float, 0.5, {}, "salience"),
                    access_count=_number(r.access_count, int, 0, {}, "access_count"),
                    first_seen=parse_time(r.first_seen),
                    last_accessed=parse_time(r.last_accessed),
                )
                for r in conn.execute(stmt)
            ]

    def relations(
        self, types: Sequence[str] = (), channels: Sequence[str] = (), touching: str | None = None
    ) -> list[Relation]:
        r = schema.relations.c
        stmt = select(schema.relations).order_by(r.id)
        if types:
            stmt = stmt.where(r.type.in_(types))
        if channels:
            stmt = stmt.where(r.channel.in_(channels))
        if touching:
            stmt = stmt.where(or_(r.source_id == touching, r.target_id == touching))
        with self.errors(), self.engine.connect() as conn:
            return [
                Relation(
                    id=row.id,
                    source_id=row.source_id,
                    target_id=row.target_id,
                    type=row.type,
                    channel=row.channel,
                    weight=_number(row.weight, float, 1.0, {}, "weight"),
                    created_at=parse_time(row.created_at),
                )
                for row in conn.execute(stmt)
            ]

    def memories_about(self, entity_id: str, limit: int = 50) -> list[Memory]:
        r, m = schema.relations.c, schema.memories.c
        stmt = (
            select(schema.memories)
            .join(schema.relations, and_(r.source_id == m.id, r.type == "ABOUT"))
            .where(r.target_id == entity_id)
            .order_by(m.salience.desc())
            .limit(limit)
        )
        with self.errors(), self.engine.connect() as conn:
            return [self._memory(row._mapping) for row in conn.execute(stmt)]

    def salience_histogram(self, rate: float, boost: float, at: datetime, bins: int) -> list[int]:
        bucket = self.salience_bucket(self.effective_salience(rate, boost, at), bins)
        stmt = (
            select(bucket, func.count())
            .where(schema.memories.c.status == Status.ACTIVE.value)
            .group_by(bucket)
        )
        counts = [0] * bins
        with self.errors(), self.engine.connect() as conn:
            for b, n in conn.execute(stmt):
                counts[int(b)] += int(n)
        return counts

    def lowest_salience(self, rate: float, boost: float, at: datetime, limit: int) -> list[Memory]:
        eff = self.effective_salience(rate, boost, at)
        stmt = (
            select(schema.memories)
            .where(schema.memories.c.status == Status.ACTIVE.value)
            .order_by(eff.asc(), schema.memories.c.id)
            .limit(limit)
        )
        with self.errors(), self.engine.connect() as conn:
            return [self._memory(row._mapping) for row in conn.execute(stmt)]

    def promotion_candidates(self, thresholds: PromotionThresholds, limit: int) -> list[Memory]:
        """Active project-channel memories that meet every promotion threshold and have no
        promoted copy yet, the most confident first (seed 002's promote_prominent_facts)."""
        sql = (
            "SELECT * FROM memories WHERE status = ? AND channel != ? AND confidence >= ? AND access_count >= ? "
            "AND conversations >= ? AND id NOT IN (SELECT promoted_from FROM memories WHERE promoted_from IS NOT NULL "
            "AND status != ?) ORDER BY confidence DESC, access_count DESC, id LIMIT ?"
        ).replace("?", self._mark)
        params = (Status.ACTIVE.value, GLOBAL_CHANNEL, thresholds.confidence, thresholds.access_count,
                  thresholds.conversations, Status.DELETED.value, limit)
        with self.reading() as conn:
            names, rows = self._fetch(conn, sql, params)
        now = utcnow()
        return [self._memory(dict(zip(names, row, strict=True)), now) for row in rows]

    def table_counts(self) -> dict[str, int]:
        names = ("sessions", "turns", "scratchpad", "memories", "entities", "relations", "audit")
        with self.reading() as dbapi:
            return {name: int(dbapi.execute(f"SELECT count(*) FROM {name}").fetchone()[0]) for name in names}


def scratch_text(value: Any) -> str:
    """A scratchpad value as memory.db keeps it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def scratch_key(record_id: str) -> tuple[str, str]:
    """The (session id, key) a scratchpad record id names."""
    try:
        session_id, key = json.loads(record_id[len(SCRATCH_PREFIX) :])
    except (ValueError, TypeError):
        raise NotFoundError(f"{record_id} names no scratchpad key.") from None
    return str(session_id), str(key)


def _same_json(stored: Any, value: Any) -> bool:
    """Whether stored text is JSON that reads back as value (key order and spacing aside)."""
    if isinstance(value, str) or not isinstance(stored, str):
        return False
    try:
        return json.dumps(json.loads(stored), sort_keys=True) == json.dumps(value, sort_keys=True)
    except (ValueError, TypeError):
        return False


def relation_row(relation: Relation) -> dict[str, Any]:
    return {
        "id": relation.id,
        "source_id": relation.source_id,
        "target_id": relation.target_id,
        "type": relation.type,
        "channel": relation.channel,
        "weight": relation.weight,
        "created_at": to_iso(relation.created_at) if relation.created_at else None,
    }


def _as_stored(values: Snapshot) -> dict[str, Any]:
    """Values bound as they were read, without the column type's conversion: a row another
    program wrote text into a number column of is written back as it was, not refused."""
    return {name: type_coerce(value, NullType()) for name, value in values.items()}


def _read_row(conn: Connection, table: Any, where: Any, *, lock: bool = False) -> dict[str, Any] | None:
    """The row where selects; with lock, held against other writers until the transaction ends
    (SELECT ... FOR UPDATE where the database has it; SQLite's write lock holds the whole file)."""
    statement = select(table).where(where)
    row = conn.execute(statement.with_for_update() if lock else statement).first()
    return dict(row._mapping) if row else None


def _row_revision(row: dict[str, Any]) -> str:
    """A short hash of every column of a row as SQLite returned it (in the table's column order):
    it changes whenever any of them does (repr tells 1 from 1.0 and text from bytes)."""
    return hashlib.sha1(repr(tuple(row.values())).encode("utf-8")).hexdigest()[:12]


def _escape_like(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


