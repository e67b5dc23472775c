"""Reading the native tables on any database (see tables.py): the Source protocol's reads of
memories, and the sessions, scratchpad, graph and salience an agent's memory holds, through SQL
the subclass's DB-API connection runs (``reading()``, with its driver's placeholder ``_mark``), or
through SQLAlchemy Core where a read is rarer than the import (imported in the method: a command
that pages, gets or writes rows never loads it). A subclass supplies the connections, the errors'
wording, the change token, keyword search, time bins and effective salience in its database's own
SQL."""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ...lazy_page import LazyPage
from ...model import (
    EDITABLE_FIELDS,
    GLOBAL_CHANNEL,
    Entity,
    Kind,
    Layer,
    Memory,
    Relation,
    ScratchEntry,
    Session,
    Status,
    Turn,
    parse_layer,
    parse_status,
)
from ...query import MemoryQuery, Order, sort_key
from ...salience import PromotionThresholds
from ...source import Capabilities, Snapshot, page_after_by_key
from ...sqlite_engine import AnyConnection as Connection
from ...sqlite_engine import AnyEngine as Engine
from ...sqlite_files import escape_like
from ...timeutil import parse_time, to_iso, utcnow
from . import salience_now_order, schema
from .graph import GraphReads
from .lowest_salience import lowest_rows, memories_of
from .positions import Positions
from .rows import (
    DB_NAME,
    ORDER_COLUMNS,
    json_list,
    memory_dict_from_row,
    memory_from_row,
    number,
    values_revision,
)

# Counted as each row is read (rows.memory_from_row): a stored layer or status Mnemoscope does not
# know (another tool's spelling, a damaged page) counts as semantic or active, never as a value
# no filter can name.
_READ_AS = {"layer": lambda value: parse_layer(value).value, "status": lambda value: parse_status(value).value}


class NativeReads(GraphReads):
    """What the native tables read alike on any database: memories (pages, counts, bins), sessions,
    the scratchpad, the graph and salience; and what a database supplies (connections, errors,
    change token, keyword search, time bins, effective salience in its own SQL)."""

    kind = Kind.SQLITE  # a row of the native tables in SQLite (PostgresSource: Kind.POSTGRESQL)
    format = "mnemoscope"
    label = "Mnemoscope memory.db"
    seeks = True
    schema_version: int
    _mark = "?"  # the DB-API driver's placeholder, for the SQL reading() runs
    # A column among the ids of a JSON array given as one parameter (any number of ids, one variable).
    _among_json = "{column} IN (SELECT value FROM json_each({mark}))"
    _where = DB_NAME  # where a memory's row lives, as its SourceRef names it
    _nullable_orders: set[Order] = set()
    # salience, last_accessed and access_count NOT NULL: "Salience now" pages may start from candidates
    _salience_now_columns_not_null = False
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
            if Layer.SEMANTIC in query.layers:  # and what names no layer Mnemoscope knows, read as semantic
                known = [layer.value for layer in Layer]
                clauses[-1] = (f"({clauses[-1]} OR lower({prefix}layer) NOT IN ({', '.join([mark] * len(known))}) "
                               f"OR {prefix}layer IS NULL)")
                params.extend(known)
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
            params.append(f"%{escape_like(query.contains)}%")
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
        if query.order is Order.EFFECTIVE_SALIENCE and self._salience_now_columns_not_null:
            with self.reading() as conn:
                first = self._first_by_salience_now(conn, query, offset + limit)
            if first is not None:
                names, rows = first
                return self._lazy_page(names, rows[offset:])
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
            at, id_at = names.index(ORDER_COLUMNS[query.order]), names.index("id")
            if before:
                self._positions.learn(query, token, start - 1, (rows[0][at], rows[0][id_at]))
                rows = rows[1:]
            if rows:
                self._positions.learn(query, token, start + len(rows) - 1, (rows[-1][at], rows[-1][id_at]))
        return self._lazy_page(names, rows)

    def _lazy_page(self, names: list[str], rows: list[Any]) -> LazyPage:
        now = utcnow()
        where, kind = self._where, self.kind
        return LazyPage(rows, lambda row: self._memory(dict(zip(names, row, strict=True)), now), names.index("id"),
                        values_revision, names.index("content"),
                        lambda row: memory_dict_from_row(row, names, where, now, kind))

    def _first_by_salience_now(self, conn: Any, query: MemoryQuery, n: int) -> tuple[list[str], list[Any]] | None:
        """The first n rows in "Salience now" order from candidates off the salience and
        last-access indexes, when they prove enough (salience_now_order.py); else None."""
        rate, boost = query.decay.decay_rate, query.decay.access_boost  # (0 < rate <= 1: SalienceModel)
        where, params = self._where_sql(query)
        return salience_now_order.first_rows(
            lambda sql, values: self._fetch(conn, sql, values), where, params,
            self.effective_salience_key_sql(math.log(rate), boost), descending=query.descending, n=n,
            rate=rate, boost=boost)

    def revisions(self, ids: Sequence[str]) -> dict[str, str]:
        """The revision of each memory of ids held here (as its Memory.revision says it), from one
        SELECT over the ids: each row is hashed as read, none is decoded into a memory."""
        if not ids:
            return {}
        sql = f"SELECT * FROM memories WHERE {self._among_json.format(column='id', mark=self._mark)}"
        with self.reading() as conn:
            names, rows = self._fetch(conn, sql, (json.dumps(list(ids)),))
        at = names.index("id")
        return {row[at]: values_revision(row) for row in rows}

    def _ordered(self, query: MemoryQuery, bound: tuple[Any, str] | None = None, columns: str = "*") -> tuple[str, list[Any]]:
        """SELECT columns of the query's memories in its order, only those past bound (value,
        id) if given."""
        if query.order is Order.EFFECTIVE_SALIENCE:
            column = self.effective_salience_key_sql(math.log(query.decay.decay_rate), query.decay.access_boost)
        else:
            column = ORDER_COLUMNS[query.order]
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
        column = ORDER_COLUMNS[order]
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

    def get_many(self, memory_ids: Sequence[str]) -> dict[str, Memory]:
        """get() of each id held here, from one SELECT over them all."""
        if not memory_ids:
            return {}
        by_id = self._rows_read(memory_ids)
        now = utcnow()
        return {memory_id: self._memory(row, now) for memory_id, row in by_id.items()}

    def _rows_read(self, memory_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The memories rows of memory_ids, by id, from one SELECT, kept as just_read."""
        sql = f"SELECT * FROM memories WHERE {self._among_json.format(column='id', mark=self._mark)}"
        token, state = self.change_token(), self.read_state()  # both before the read
        with self.reading() as conn:
            names, rows = self._fetch(conn, sql, (json.dumps(list(dict.fromkeys(memory_ids))),))
        by_id = {row["id"]: row for row in (dict(zip(names, row, strict=True)) for row in rows)}
        self.just_read = (token, by_id, state)  # the rows a curation step plans from next (see plan_many)
        return by_id

    just_read: tuple[str, dict[str, Any], object] | None = None

    def read_state(self) -> object:
        """What changes with every commit to the database by any connection, exactly enough that
        a write transaction that finds it as it was before a read may write over that read's rows
        without reading them again; None where it cannot tell (no lock over the whole database)."""
        return None

    def _memory_row(self, memory_id: str) -> dict[str, Any] | None:
        with self.reading() as conn:
            names, rows = self._fetch(conn, f"SELECT * FROM memories WHERE id = {self._mark}", (memory_id,))
        return dict(zip(names, rows[0], strict=True)) if rows else None

    def _memory(self, row: Any, now: datetime | None = None) -> Memory:
        """A memory from a memories row (see rows.memory_from_row)."""
        return memory_from_row(row, self._where, now, self.kind)

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        if not query.wants_kind(self.kind):
            return {}
        if column == "kind":
            return {self.kind.value: self.count(query)}
        name = schema.column_of("memories", column)
        where, params = self._where_sql(query)
        out: dict[str, int] = {}
        read_as = _READ_AS.get(column, str)
        for value, n in self._query(f"SELECT {name}, count(*) FROM memories{where} GROUP BY {name}", params):
            key = read_as(value)
            out[key] = out.get(key, 0) + int(n)
        return out

    def counts_by_columns(self, columns: Sequence[str], query: MemoryQuery) -> dict[str, dict[str, int]]:
        """counts_by for several columns from one GROUP BY of them all (one pass over the
        status, channel, layer index for the sidebar's counts)."""
        if not query.wants_kind(self.kind):
            return {column: {} for column in columns}
        grouped = ", ".join(schema.column_of("memories", c) for c in columns if c != "kind")
        names = [c for c in columns if c != "kind"]
        if not names:  # the kind alone: every row is of this source's kind
            return {"kind": {self.kind.value: n} if (n := self.count(query)) else {}}
        where, params = self._where_sql(query)
        out: dict[str, dict[str, int]] = {column: {} for column in columns}
        total = 0
        for *values, n in self._query(f"SELECT {grouped}, count(*) FROM memories{where} GROUP BY {grouped}", params):
            total += n
            for column, value in zip(names, values, strict=True):
                key = _READ_AS.get(column, str)(value)
                out[column][key] = out[column].get(key, 0) + n
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
        from sqlalchemy import select

        m = schema.memories.c
        with self.errors(), self.engine.connect() as conn:
            return [r[0] for r in conn.execute(select(m.id).where(m.vector_state == "stale").order_by(m.id))]

    def memories_with_markdown_copies(self) -> list[tuple[str, str]]:
        """(md_file, content) of every memory that keeps a copy in workspace markdown."""
        from sqlalchemy import select

        m = schema.memories.c
        stmt = select(m.md_file, m.content).where(m.md_file.is_not(None))
        with self.errors(), self.engine.connect() as conn:
            return [(str(f), str(c)) for f, c in conn.execute(stmt)]

    def memory_with_markdown_copy(self, md_file: str, content: str) -> str | None:
        """The memory whose markdown copy is this block of md_file, if one is."""
        from sqlalchemy import select

        m = schema.memories.c
        wanted = " ".join(content.split()).casefold()
        stmt = select(m.id, m.content).where(m.md_file == md_file)
        with self.errors(), self.engine.connect() as conn:
            for memory_id, text in conn.execute(stmt):
                if " ".join(str(text).split()).casefold() == wanted:
                    return str(memory_id)
        return None

    # -- sessions, scratchpad, graph -------------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        from sqlalchemy import func, select

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
        from sqlalchemy import select

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
        from sqlalchemy import select

        sp = schema.scratchpad.c
        stmt = select(schema.scratchpad).order_by(sp.session_id, sp.key)
        if session_id:
            stmt = stmt.where(sp.session_id == session_id)
        with self.errors(), self.engine.connect() as conn:
            return [self.scratch_entry(dict(r._mapping)) for r in conn.execute(stmt)]

    @staticmethod
    def scratch_entry(snapshot: Snapshot) -> ScratchEntry:
        value = snapshot["value"]
        return ScratchEntry(
            snapshot["session_id"], snapshot["key"], value if isinstance(value, str) else str(value),
            parse_time(snapshot["updated_at"], utcnow()),
        )

    def entities(self, channels: Sequence[str] = ()) -> list[Entity]:
        from sqlalchemy import select

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
                    aliases=json_list(r.aliases),
                    salience=number(r.salience, float, 0.5, {}, "salience"),
                    access_count=number(r.access_count, int, 0, {}, "access_count"),
                    first_seen=parse_time(r.first_seen),
                    last_accessed=parse_time(r.last_accessed),
                )
                for r in conn.execute(stmt)
            ]

    def relations(
        self, types: Sequence[str] = (), channels: Sequence[str] = (), touching: str | None = None
    ) -> list[Relation]:
        params: list[Any] = []
        where = "1 = 1" + self._among("type", types, params) + self._among("channel", channels, params)
        if touching:
            where += f" AND (source_id = {self._mark} OR target_id = {self._mark})"
            params += [touching, touching]
        sql = f"SELECT id, source_id, target_id, type, channel, weight, created_at FROM relations WHERE {where} ORDER BY id"
        with self.errors(), self.engine.connect() as conn:
            return [
                Relation(
                    id=row.id,
                    source_id=row.source_id,
                    target_id=row.target_id,
                    type=row.type,
                    channel=row.channel,
                    weight=number(row.weight, float, 1.0, {}, "weight"),
                    created_at=parse_time(row.created_at),
                )
                for row in conn.exec_driver_sql(sql, tuple(params))
            ]

    def memories_about(self, entity_id: str, limit: int = 50) -> list[Memory]:
        from sqlalchemy import and_, select

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
        from sqlalchemy import func, select

        if bins <= 0:
            return []
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
        """The active memories of least effective salience, weakest first: from a few candidates
        off the salience and last-access indexes when they prove enough (lowest_salience.py)."""
        if limit <= 0:
            return []
        with self.errors(), self.engine.connect() as conn:
            rows, _candidates = lowest_rows(conn, self.effective_salience(rate, boost, at), rate, boost, at, limit)
        return memories_of(rows, self._memory)

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
