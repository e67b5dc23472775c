"""AgentX's PostgreSQL database (seed 002, "PostgreSQL Schema"), opened by its URL.

AgentX keeps in PostgreSQL what its Neo4j graph and Redis do not: ``conversation_logs`` (every
turn), ``memory_timeline`` (one row per memory event, with ``importance_score``, ``access_count``,
``channel``, ``archived`` and a pgvector ``embedding``), ``tool_invocations``, ``user_profiles``,
the ``memory_audit_log`` partitioned by range on its timestamp, and ``schema_version``.

They map onto the canonical model so:
- each memory_timeline row is a Memory (``agentx:<id>``): its summary the content, its
  ``memory_type`` the layer (the seed's subsystems, episodic/semantic/procedural/working, and
  its node types, turn/fact/entity/strategy/goal...), importance the salience, archived ->
  Status.ARCHIVED, event_time its creation (AgentX keeps no update time);
- each conversation_id of conversation_logs is a Session, its rows Turns; a tool invocation is a
  Turn of kind "tool" in its conversation, after the message of the same turn_index;
- each user profile is a scratchpad of its own (``user_profile:<user_id>``), one entry per
  JSONB column (preferences, expertise_areas, communication_style, metadata);
- the audit rows naming a memory (``metadata.affected_ids``, as ``log_write`` records them, or
  ``metadata.memory_id``/``fact_id``; by timeline id or Neo4j node id) are its owner history,
  read through the parent table, so every partition is searched;
- vector search is pgvector's cosine distance (``<=>``) on memory_timeline.embedding, exact (a
  sequential scan: the seed's ivfflat index would answer approximately); a query vector of
  another dimension than the column's finds nothing and is reported.

By AgentX's own rules, in modules of their own: the conversations each memory was seen in and the
promotion candidates (agentx_counts), promotion to ``_global`` (agentx_promotion), goals'
lifecycle and strategies' success rates and tool stats (agentx_goals), the 90-day archive and the
entity cleanup ahead (agentx_retention); the audit log store-wide is ``owner_audit``. Its
retrieval always merges the active channel with ``_global`` (``retrieval_channels``), which a
search filtered by channel notes.

Curation (agentx_curation) writes memory_timeline only; everything else is read-only. The
change token is cheap rather than exact: the newest ids and the server's row counters.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..credentials import Secret
from ..errors import NotFoundError, UnreadableStoreError
from ..journal.log import Journal
from ..model import GLOBAL_CHANNEL, Kind, Layer, Memory, Provenance, ScratchEntry, Session, SourceRef, Status, Turn
from ..native.db.postgres_source import postgres_engine, postgres_errors
from ..query import MemoryQuery, Order
from ..retention import Upcoming
from ..salience import OWNERS_DECAY, declare_salience
from ..source import Capabilities, Change, Plan, PlanContext, Snapshot, StoreParts
from ..timeutil import as_utc, utcnow
from . import agentx_counts as counts
from . import agentx_curation as curation
from . import agentx_goals as goals
from . import agentx_retention as retention
from .agentx_tables import (
    AUDIT,
    LAYER_OF_TYPE,
    LOGS,
    PROFILE_KEYS,
    PROFILE_SESSION,
    PROFILES,
    TIMELINE,
    TOOL_COLUMNS,
    TOOLS,
    VERSION,
    Column,
    Tables,
    is_agentx,
    layer_of,
    read_tables,
)

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ..salience import PromotionThresholds

FORMAT = "agentx"
# memory_timeline.importance_score is set when AgentX writes the row and never decayed by it (its decay
# job fades Neo4j entities' salience and inferred facts' confidence): shown as stored, not decayed here.
declare_salience(FORMAT, OWNERS_DECAY, "AgentX's importance score")
READ_ONLY_PARTS = {
    LOGS: "AgentX's record of what was said (its Neo4j Turn nodes mirror it); a changed log would no longer be "
          "what happened",
    TOOLS: "AgentX's log of tool calls, the evidence its procedural learning counts successes from",
    PROFILES: "written by AgentX's own user model; Mnemoscope shows it",
    AUDIT: "an audit trail is appended to, never changed (Mnemoscope appends a row for each write it makes)",
}
_WORD = re.compile(r"\w+", re.UNICODE)




class AgentxSource:
    """AgentX's tables in one PostgreSQL database, read with SQL where they live."""

    kind = Kind.POSTGRESQL
    format = FORMAT
    label = "AgentX PostgreSQL"
    id_prefix = "agentx:"
    editable_fields = ("content", "salience", "channel")
    keeps = frozenset({"access_count", "salience", "confidence"})  # importance_score is its salience
    seeks = False
    # AgentX's retrieval always queries the active channel and _global, merged (seed 002).
    retrieval_channels = (GLOBAL_CHANNEL,)

    def __init__(self, engine: Engine, *, root: Path, location: str, secret: Secret | None, read_only: bool,
                 tables: Tables, schema_version: int | None) -> None:
        self._engine = engine
        self.root = Path(root)
        self.location = location
        self._secret = secret
        self._read_only = read_only
        self.tables = tables
        self.schema_version = schema_version
        self._notes: list[str] = []  # what a search found out (a query vector of another dimension)

    @classmethod
    def open(cls, url: str, *, root: Path, location: str, read_only: bool) -> AgentxSource | None:
        """The source over the database url names; None when it holds no AgentX tables."""
        from sqlalchemy.engine import make_url

        password = make_url(url).password
        secret = Secret(str(password)) if password else None
        engine = postgres_engine(url, read_only=read_only)
        try:
            with postgres_errors(location, secret):
                pooled = engine.raw_connection()
                try:
                    from psycopg.rows import dict_row

                    connection: Any = pooled.driver_connection
                    with connection.cursor(row_factory=dict_row) as cursor:
                        tables = read_tables(cursor)
                        version = _schema_version(cursor, tables)
                finally:
                    pooled.close()
        except BaseException:
            engine.dispose()
            raise
        if not is_agentx(tables):
            engine.dispose()
            return None
        return cls(engine, root=root, location=location, secret=secret, read_only=read_only, tables=tables,
                   schema_version=version)

    def close(self) -> None:
        self._engine.dispose()

    # -- connections -------------------------------------------------------------------------

    def reading(self) -> contextlib.AbstractContextManager[Any]:
        """A psycopg cursor (dict rows, times in UTC) in a transaction rolled back at the end."""
        return self._cursor(commit=False)

    def writing(self) -> contextlib.AbstractContextManager[Any]:
        """A cursor in one transaction, committed when the block ends without an error."""
        return self._cursor(commit=True)

    @contextlib.contextmanager
    def _cursor(self, *, commit: bool) -> Iterator[Any]:
        from psycopg.rows import dict_row

        with postgres_errors(self.location, self._secret):
            pooled = self._engine.raw_connection()
            connection: Any = pooled.driver_connection
            try:
                with connection.cursor(row_factory=dict_row) as cursor:
                    cursor.execute("SET TIME ZONE 'UTC'")
                    yield cursor
                if commit:
                    connection.commit()
            except BaseException:
                connection.rollback()
                raise
            finally:
                pooled.close()  # back to the pool (a reading transaction rolled back there)

    def rows(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[dict[str, Any]]:
        with self.reading() as cursor:
            cursor.execute(sql, params if isinstance(params, Mapping) else tuple(params))
            return list(cursor.fetchall())

    def has(self, table: str, columns: Iterable[str] = ()) -> bool:
        return table in self.tables and set(columns) <= set(self.tables[table])

    # -- what it is ----------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        parts = [TIMELINE, LOGS, TOOLS, PROFILES, AUDIT]
        return {
            "format": self.format,
            "label": self.label,
            "path": self.location,
            "files": [f"{t} (read-only)" if t in READ_ONLY_PARTS else t for t in parts if t in self.tables],
            "schema_version": self.schema_version,
            "read_only": bool(self._read_only_reason()),
            "read_only_reason": self._read_only_reason(),
            "editable_fields": [] if self._read_only else list(self.editable_fields),
            "deletable": not self._read_only_reason(),
            "delete": "archives the memory_timeline row (archived = true), as AgentX does; no purge",
            "read_only_parts": {t: why for t, why in READ_ONLY_PARTS.items() if t in self.tables},
            "vector_search": "pgvector cosine distance (<=>), exact" if self.vector_column() else
            f"not available: {self._no_vectors_reason()}",
            "problems": self.problems(),
            "owner_view": goals.overview(self),
        }

    def _writable_reason(self) -> str:
        """Why memory_timeline cannot be written ("" when it can)."""
        if AUDIT not in self.tables:
            return f"AgentX logs every write in {AUDIT}, and this database has none to log Mnemoscope's in"
        return ""

    def _read_only_reason(self) -> str:
        if self._read_only:
            return "opened read-only"
        return self._writable_reason()

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        reason = self._read_only_reason()
        return Capabilities(
            read_only=bool(reason),
            read_only_reason=reason,
            editable_fields=() if reason else self.editable_fields,
            can_promote=not reason,
            can_soft_delete=not reason,
            can_reinforce=not reason,
            keyword_search=True,
            vector_search=bool(self.vector_column()),
            sessions=True,
            scratchpad=self.has(PROFILES, ("user_id",)),
            history=self.has(AUDIT, ("metadata", "timestamp")),
        )

    def problems(self) -> list[str]:
        found = [f"no {table} table: {what} not shown" for table, what in (
            (TOOLS, "tool calls are"), (PROFILES, "user profiles are"), (AUDIT, "audit history is"))
            if table not in self.tables]
        if not self.vector_column():
            found.append(f"vector search is not available: {self._no_vectors_reason()}")
        if AUDIT in self.tables and not self._read_only:
            missing = curation.audit_partition_missing(self)
            if missing:
                found.append(missing)
        unembedded = self.rows(f"SELECT count(*) AS n FROM {TIMELINE} WHERE embedding IS NULL")[0]["n"] \
            if self.vector_column() else 0
        if unembedded:
            found.append(f"{unembedded} memories have no embedding (vector search cannot find them until AgentX "
                         "embeds them)")
        return found + list(dict.fromkeys(self._notes))

    def change_token(self) -> str:
        """The newest row ids and the server's counts of rows written to the tables (updates
        included): another process's write changes it once the server counted it (within a second
        or so of its commit)."""
        names = [t for t in (TIMELINE, LOGS, TOOLS, PROFILES, AUDIT) if t in self.tables]
        rows = self.rows(
            "SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) AS written, "
            f"(SELECT max(id) FROM {TIMELINE}) AS newest FROM pg_stat_user_tables "
            "WHERE relid IN (SELECT oid FROM pg_class WHERE relname = ANY(%s)) "
            "OR relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent IN "
            "(SELECT oid FROM pg_class WHERE relname = ANY(%s)))",
            [names, names],
        )
        return f"{FORMAT}:{rows[0]['written']}:{rows[0]['newest']}"

    # -- memories: memory_timeline -------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith(self.id_prefix)

    def row_id(self, record_id: str) -> int:
        try:
            return int(record_id[len(self.id_prefix):])
        except ValueError:
            raise NotFoundError(f"{record_id} names no {TIMELINE} row of {self.location}.") from None

    def _select(self, extra: str = "") -> str:
        """SELECT the columns memory_of reads (and extra ones) FROM memory_timeline m."""
        digest = "coalesce(md5(m.embedding::text), '')" if self.vector_column() else "''"
        embedded = "m.embedding IS NOT NULL" if self.vector_column() else "false"
        return (
            "SELECT m.id, m.memory_type, m.neo4j_node_id, m.event_time, m.summary, m.importance_score, "
            "m.access_count, m.last_accessed, m.channel, m.archived, m.metadata, "
            f"{embedded} AS embedded, left(md5((to_jsonb(m) - 'embedding')::text || {digest}), 12) AS revision"
            f"{extra} FROM {TIMELINE} m"
        )

    def select_sql(self) -> str:
        return self._select()

    def memories_of(self, rows: Sequence[dict[str, Any]]) -> list[Memory]:
        """The memories of rows read with select_sql: with the conversations each was seen in
        (agentx_counts) and, for goals and strategies, their lifecycle (agentx_goals); one query
        for each of those per page."""
        seen = counts.conversation_counts(self, rows)
        lifecycle = goals.lifecycle_metadata(rows, goals.tool_stats(self, names) if (names := goals.needed_tools(rows))
                                             else {})
        return [self.memory_of(row, None if seen is None else seen.get(int(row["id"]), 0),
                               lifecycle.get(int(row["id"]))) for row in rows]

    def memory_of(self, row: dict[str, Any], conversations: int | None = None,
                  lifecycle: dict[str, Any] | None = None) -> Memory:
        created = as_utc(row["event_time"])
        accessed = as_utc(row["last_accessed"]) if row["last_accessed"] is not None else created
        importance = row["importance_score"]
        meta = row["metadata"] if isinstance(row["metadata"], dict) else {}
        metadata: dict[str, Any] = {
            "memory_type": row["memory_type"], "importance_score": importance,
            "neo4j_node_id": row["neo4j_node_id"], "archived": bool(row["archived"]),
            "embedding": "stored" if row["embedded"] else "none",
        }
        metadata.update({f"metadata.{k}": v for k, v in meta.items()})
        metadata.update(lifecycle or {})
        confidence = meta.get("confidence")
        promoted_from = meta.get("promoted_from")
        return Memory.built(
            id=f"{self.id_prefix}{row['id']}",
            source=SourceRef.built(kind=self.kind, location=f"{TIMELINE}/{row['id']}", path=self.location,
                                   format=self.format),
            layer=layer_of(row["memory_type"]),
            channel=row["channel"] or GLOBAL_CHANNEL,
            content=row["summary"] or "",
            created_at=created,
            updated_at=created,
            last_accessed=accessed,
            access_count=int(row["access_count"] or 0),
            salience=_unit(importance) if importance is not None else None,
            confidence=_unit(confidence) if isinstance(confidence, (int, float)) else None,
            metadata=metadata,
            status=Status.ARCHIVED if row["archived"] else Status.ACTIVE,
            provenance=Provenance(promoted_from=promoted_from if isinstance(promoted_from, str) else None),
            conversations=conversations,
            revision=row["revision"],
        )

    def where(self, query: MemoryQuery) -> tuple[str, list[Any]] | None:
        """The WHERE clause (over alias m) and parameters of a query; None when no row can match."""
        if not query.wants_kind(self.kind):
            return None
        parts: list[str] = []
        params: list[Any] = []
        if query.statuses:
            archived = [s is Status.ARCHIVED for s in query.statuses if s is not Status.DELETED]
            if not archived:
                return None
            if len(set(archived)) == 1:
                parts.append("coalesce(m.archived, false) = %s")
                params.append(archived[0])
        if query.channels:
            parts.append("m.channel = ANY(%s)")
            params.append(list(query.channels))
        if query.layers:
            types = [t for t, layer in LAYER_OF_TYPE.items() if layer in query.layers]
            known = "lower(trim(m.memory_type)) = ANY(%s)"
            if Layer.SEMANTIC in query.layers:  # what names no layer is read as semantic
                parts.append(f"({known} OR NOT lower(trim(m.memory_type)) = ANY(%s))")
                params += [types, list(LAYER_OF_TYPE)]
            else:
                parts.append(known)
                params.append(types)
        if query.since is not None:
            parts.append("m.event_time >= %s")
            params.append(as_utc(query.since))
        if query.until is not None:
            parts.append("m.event_time < %s")
            params.append(as_utc(query.until))
        if query.contains:
            parts.append("strpos(lower(coalesce(m.summary, '')), lower(%s)) > 0")
            params.append(query.contains)
        if query.ids:
            keys = [int(i[len(self.id_prefix):]) for i in query.ids
                    if i.startswith(self.id_prefix) and i[len(self.id_prefix):].isdigit()]
            if not keys:
                return None
            parts.append("m.id = ANY(%s)")
            params.append(keys)
        return " AND ".join(parts), params

    @staticmethod
    def _where_sql(clause: str) -> str:
        return f" WHERE {clause}" if clause else ""

    def _order(self, query: MemoryQuery) -> str:
        direction = "DESC" if query.descending else "ASC"
        value = {
            Order.SALIENCE: "least(greatest(coalesce(m.importance_score, 0.5), 0.0), 1.0)",
            Order.ACCESSED: "coalesce(m.last_accessed, m.event_time)",
        }.get(query.order, "m.event_time")
        return f"{value} {direction}, m.id::text {direction}"

    def count(self, query: MemoryQuery) -> int:
        where = self.where(query)
        if where is None:
            return 0
        clause, params = where
        return int(self.rows(f"SELECT count(*) AS n FROM {TIMELINE} m{self._where_sql(clause)}", params)[0]["n"])

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        where = self.where(query)
        if where is None or limit <= 0:
            return []
        clause, params = where
        rows = self.rows(f"{self._select()}{self._where_sql(clause)} ORDER BY {self._order(query)} LIMIT %s OFFSET %s",
                         [*params, limit, offset])
        return self.memories_of(rows)

    def get(self, memory_id: str) -> Memory | None:
        if not self.owns(memory_id):
            return None
        try:
            key = self.row_id(memory_id)
        except NotFoundError:
            return None
        rows = self.rows(f"{self._select()} WHERE m.id = %s", [key])
        return self.memories_of(rows)[0] if rows else None

    def counts_by_columns(self, columns: Sequence[str], query: MemoryQuery) -> dict[str, dict[str, int]]:
        """Counts per channel, layer, status and kind, from one grouped query."""
        out: dict[str, dict[str, int]] = {column: {} for column in columns}
        where = self.where(query)
        if where is None:
            return out
        clause, params = where
        rows = self.rows(
            f"SELECT m.channel, m.memory_type, coalesce(m.archived, false) AS archived, count(*) AS n "
            f"FROM {TIMELINE} m{self._where_sql(clause)} GROUP BY 1, 2, 3", params
        )
        for row in rows:
            values = {
                "channel": row["channel"] or GLOBAL_CHANNEL, "layer": layer_of(row["memory_type"]).value,
                "status": (Status.ARCHIVED if row["archived"] else Status.ACTIVE).value, "kind": self.kind.value,
            }
            for column in columns:
                label = values.get(column, GLOBAL_CHANNEL)
                out[column][label] = out[column].get(label, 0) + int(row["n"])
        return out

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return self.counts_by_columns([column], query)[column]

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        """Memories per (time bin, group): counted per day (per second for a format finer than
        a day) by the server, the days labelled here."""
        where = self.where(query)
        if where is None:
            return {}
        clause, params = where
        group = {"channel": "m.channel", "layer": "m.memory_type", "status": "coalesce(m.archived, false)"}.get(
            group_by, "NULL")
        unit = _unit_of(bin_format)
        rows = self.rows(
            f"SELECT date_trunc('{unit}', m.event_time) AS at, {group} AS grp, count(*) AS n "
            f"FROM {TIMELINE} m{self._where_sql(clause)} GROUP BY 1, 2", params
        )
        counts: dict[tuple[str, str], int] = {}
        for row in rows:
            if group_by == "layer":
                name = layer_of(row["grp"]).value
            elif group_by == "status":
                name = (Status.ARCHIVED if row["grp"] else Status.ACTIVE).value
            elif group_by == "channel":
                name = row["grp"] or GLOBAL_CHANNEL
            else:
                name = self.kind.value
            key = (as_utc(row["at"]).strftime(bin_format), name)
            counts[key] = counts.get(key, 0) + int(row["n"])
        return counts

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        """Memories whose summary holds any word of the text (as a prefix), ranked by PostgreSQL's
        full-text rank: first those matching the whole text as a web search reads it."""
        words = _WORD.findall(text_query)
        where = self.where(query)
        if not words or where is None or k <= 0:
            return []
        clause, params = where
        prefixes = " | ".join("'" + word.replace("'", "''") + "':*" for word in words)
        document = "to_tsvector('simple', coalesce(m.summary, ''))"
        condition = f"{document} @@ (whole || anyword)" + (f" AND {clause}" if clause else "")
        rows = self.rows(
            f"{self._select()}, websearch_to_tsquery('simple', %s) AS whole, to_tsquery('simple', %s) AS anyword "
            f"WHERE {condition} ORDER BY ts_rank({document}, whole, 1) DESC, ts_rank({document}, anyword, 1) DESC, "
            "m.id LIMIT %s",
            [text_query, prefixes, *params, k],
        )
        return self.memories_of(rows)

    # -- vectors: pgvector ---------------------------------------------------------------------

    def vector_column(self) -> Column | None:
        column = self.tables.get(TIMELINE, {}).get("embedding")
        return column if column is not None and column.type == "vector" else None

    def dimensions(self) -> int | None:
        column = self.vector_column()
        return column.modifier if column is not None and column.modifier > 0 else None

    def _no_vectors_reason(self) -> str:
        if "embedding" not in self.tables.get(TIMELINE, {}):
            return f"{TIMELINE} has no embedding column"
        return f"{TIMELINE}.embedding is not a pgvector column (is the vector extension installed?)"

    def collections(self) -> list[str]:
        return [f"{TIMELINE}.embedding"] if self.vector_column() else []

    def embedder_for(self, name: str) -> Any:
        return None  # AgentX's embedder (a remote model) is not recorded in the database, nor runs here

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        dims = self.dimensions()
        return {
            "collection": name,
            "recorded_embedding_function": "AgentX's embedder (not recorded in the database"
            + (f"; {dims} dimensions, cosine)" if dims else "; cosine)"),
            "dimensions": dims,
            "runs_offline_here": False,
            "embedder": None,
        }

    def embedding_of(self, memory_id: str) -> list[float] | None:
        if not self.owns(memory_id) or not self.vector_column():
            return None
        rows = self.rows(f"SELECT embedding::text AS v FROM {TIMELINE} WHERE id = %s", [self.row_id(memory_id)])
        return curation.parse_vector(rows[0]["v"]) if rows and rows[0]["v"] else None

    def vector_search(self, embedding: Any, text: str | None, query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        """The k memories nearest to embedding by cosine distance, exactly."""
        where = self.where(query)
        if embedding is None or where is None or k <= 0 or not self.vector_column():
            return []
        vector = [float(x) for x in embedding]
        dims = self.dimensions()
        if dims is not None and len(vector) != dims:
            self._notes.append(f"a query vector of {len(vector)} dimensions cannot be compared with "
                               f"{TIMELINE}.embedding ({dims} dimensions): vector search found nothing")
            return []
        clause, params = where
        condition = "m.embedding IS NOT NULL" + (f" AND {clause}" if clause else "")
        literal = curation.vector_text(vector)
        with self.reading() as cursor:
            cursor.execute("SET LOCAL enable_indexscan = off")  # exact: no approximate ivfflat/hnsw scan
            cursor.execute(
                f"{self._select(', m.embedding <=> %s::vector AS distance')} WHERE {condition} "
                "ORDER BY distance, m.id LIMIT %s",
                [literal, *params, k],
            )
            rows = cursor.fetchall()
        return list(zip(self.memories_of(rows), (float(row["distance"]) for row in rows), strict=True))

    # -- sessions: conversation_logs and tool_invocations ---------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        tools = self.has(TOOLS, TOOL_COLUMNS)
        tool_part = (
            f"FULL JOIN (SELECT conversation_id AS cid, min(timestamp) AS started, count(*) AS n, "
            f"min(channel) AS channel FROM {TOOLS} GROUP BY 1) t ON t.cid = l.cid"
            if tools else "LEFT JOIN (SELECT NULL::uuid AS cid, NULL::timestamptz AS started, 0 AS n, "
            "NULL AS channel) t ON false"
        )
        user = "metadata->>'user_id'" if "metadata" in self.tables[LOGS] else "NULL"
        sql = (
            "SELECT coalesce(l.cid, t.cid)::text AS id, least(l.started, t.started) AS started, "
            "coalesce(l.n, 0) + coalesce(t.n, 0) AS turns, coalesce(l.channel, t.channel) AS channel, "
            "f.content AS title, l.user_id "
            f"FROM (SELECT conversation_id AS cid, min(timestamp) AS started, count(*) AS n, min(channel) AS channel, "
            f"max({user}) AS user_id FROM {LOGS} GROUP BY 1) l {tool_part} "
            f"LEFT JOIN (SELECT DISTINCT ON (conversation_id) conversation_id AS cid, left(content, 120) AS content "
            f"FROM {LOGS} WHERE role = 'user' ORDER BY conversation_id, turn_index) f ON f.cid = coalesce(l.cid, t.cid)"
        )
        params: list[Any] = []
        if channels:
            sql += " WHERE coalesce(l.channel, t.channel) = ANY(%s)"
            params.append(list(channels))
        rows = self.rows(sql + " ORDER BY 2 DESC, 1", params)
        return [
            Session(row["id"], row["channel"] or GLOBAL_CHANNEL, " ".join((row["title"] or "(no user turn)").split()),
                    as_utc(row["started"]) if row["started"] else utcnow(), int(row["turns"]), row["user_id"] or "")
            for row in rows
        ]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        """The conversation's messages and tool calls, by turn_index (a tool call after the
        message of its turn)."""
        try:
            conversation = str(uuid.UUID(session_id))
        except ValueError:
            return []
        tools = (
            f" UNION ALL SELECT turn_index, 1, timestamp, 'tool', NULL, tool_name, tool_input::text, "
            f"tool_output::text, success, latency_ms, error_message, id FROM {TOOLS} WHERE conversation_id = %s"
            if self.has(TOOLS, TOOL_COLUMNS) else ""
        )
        rows = self.rows(
            "SELECT * FROM (SELECT turn_index, 0 AS part, timestamp, role, content, NULL AS tool_name, "
            "NULL AS tool_input, NULL AS tool_output, NULL::boolean AS success, NULL::integer AS latency_ms, "
            f"NULL AS error_message, id FROM {LOGS} WHERE conversation_id = %s{tools}) AS turn "
            "ORDER BY turn_index, part, timestamp, id LIMIT %s OFFSET %s",
            [conversation, *([conversation] if tools else []), limit, offset],
        )
        return [
            Turn(session_id, int(row["turn_index"]), row["role"],
                 _tool_call(row) if row["part"] else row["content"],
                 as_utc(row["timestamp"]), "tool" if row["part"] else "message")
            for row in rows
        ]

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        unit = _unit_of(bin_format)
        tables = [LOGS] + ([TOOLS] if self.has(TOOLS, TOOL_COLUMNS) else [])
        bounds, params = [], []
        for bound, op in ((since, ">="), (until, "<")):
            if bound is not None:
                bounds.append(f"timestamp {op} %s")
                params.append(as_utc(bound))
        where = f" WHERE {' AND '.join(bounds)}" if bounds else ""
        union = " UNION ALL ".join(f"SELECT timestamp FROM {t}{where}" for t in tables)
        rows = self.rows(f"SELECT date_trunc('{unit}', timestamp) AS at, count(*) AS n FROM ({union}) AS x GROUP BY 1",
                         params * len(tables))
        counts: dict[str, int] = {}
        for row in rows:
            label = as_utc(row["at"]).strftime(bin_format)
            counts[label] = counts.get(label, 0) + int(row["n"])
        return counts

    # -- user profiles as scratchpads ----------------------------------------------------------

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        if not self.has(PROFILES, ("user_id",)) or (session_id and not session_id.startswith(PROFILE_SESSION)):
            return []
        keys = [k for k in PROFILE_KEYS if k in self.tables[PROFILES]]
        changed = "updated_at" if "updated_at" in self.tables[PROFILES] else "NULL::timestamptz"
        sql = f"SELECT user_id, {changed} AS changed, " + ", ".join(f"{k}::text AS {k}" for k in keys) + \
            f" FROM {PROFILES}"
        params: list[Any] = []
        if session_id:
            sql += " WHERE user_id = %s"
            params.append(session_id[len(PROFILE_SESSION):])
        entries = []
        for row in self.rows(sql + " ORDER BY user_id", params):
            when = as_utc(row["changed"]) if row["changed"] else utcnow()
            entries += [ScratchEntry(PROFILE_SESSION + row["user_id"], key, row[key], when)
                        for key in keys if row[key] is not None]
        return entries

    # -- the audit log as each memory's history ----------------------------------------------------

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The audit rows that name this memory, oldest first, from every partition."""
        if not self.has(AUDIT, ("metadata", "timestamp")) or not self.owns(memory_id):
            return []
        rows = self.rows(f"SELECT id, neo4j_node_id FROM {TIMELINE} WHERE id = %s", [self.row_id(memory_id)])
        if not rows:
            return []
        names = [str(rows[0]["id"])] + ([rows[0]["neo4j_node_id"]] if rows[0]["neo4j_node_id"] else [])
        contained = [json.dumps([rows[0]["id"]])] + [json.dumps([name]) for name in names]
        found = self.rows(
            f"SELECT a.*, a.tableoid::regclass::text AS partition FROM {AUDIT} a "
            "WHERE a.metadata->'affected_ids' @> ANY(%s::jsonb[]) OR a.metadata->>'memory_id' = ANY(%s) "
            "OR a.metadata->>'fact_id' = ANY(%s) ORDER BY a.timestamp, a.id",
            [contained, names, names],
        )
        return [curation.history_entry(row) for row in found]

    def owner_audit(self, limit: int = 100) -> list[dict[str, Any]]:
        """AgentX's store-wide audit trail (memory_audit_log, every partition), newest first."""
        if not self.has(AUDIT, ("timestamp",)):
            return []
        rows = self.rows(f"SELECT a.*, a.tableoid::regclass::text AS partition FROM {AUDIT} a "
                         "ORDER BY a.timestamp DESC, a.id DESC LIMIT %s", [max(0, limit)])
        return [curation.history_entry(row) for row in rows]

    # -- promotion and retention, by AgentX's rules ------------------------------------------------

    def promotion_candidates(self, thresholds: PromotionThresholds, limit: int) -> list[Memory]:
        return counts.promotion_candidates(self, thresholds, limit)

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        return retention.upcoming(self, now, until)

    # -- curation: agentx_curation --------------------------------------------------------------

    def read_record(self, record_id: str) -> Snapshot | None:
        return curation.read_snapshot(self, record_id)

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        return curation.plan(self, operation, memory, fields, context)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        curation.prepare_write(self, changes)

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        return curation.write_record(self, record_id, expected, new)


def _schema_version(cursor: Any, tables: Tables) -> int | None:
    if VERSION not in tables or "version" not in tables[VERSION]:
        return None
    cursor.execute(f"SELECT max(version) AS v FROM {VERSION}")
    value = cursor.fetchone()["v"]
    return int(value) if value is not None else None


def _tool_call(row: dict[str, Any]) -> str:
    text = f"{row['tool_name']} {row['tool_input']}"
    if row["tool_output"] is not None:
        text += f" -> {row['tool_output']}"
    if row["success"] is False:
        text += " (failed" + (f": {row['error_message']}" if row["error_message"] else "") + ")"
    if row["latency_ms"] is not None:
        text += f" [{row['latency_ms']} ms]"
    return text


def _unit(value: Any) -> float:
    return max(0.0, min(1.0, float(value)))


def _unit_of(bin_format: str) -> str:
    """The date_trunc unit fine enough for a strftime format: a day, or a second."""
    return "second" if set(re.findall(r"%(.)", bin_format)) & set("HIMSpfXcT") else "day"


def open_agentx_store(url: str, *, root: Path, location: str, read_only: bool = False,
                      vectors: Any = None) -> StoreParts | None:
    """AgentX's database at url (password included) as the parts of a store, its undo journal in
    Mnemoscope's own folder for the server (root); None when the database holds no AgentX tables."""
    source = AgentxSource.open(url, root=root, location=location, read_only=read_only)
    if source is None:
        return None
    if vectors is not None:
        source.close()
        raise UnreadableStoreError(
            f"{location} is AgentX's database, whose vectors are its own pgvector columns: open it without --vectors."
        )
    try:
        return StoreParts(Path(root), [source], Journal.sidecar(Path(root), read_only=read_only),
                          read_only=read_only, location=location)
    except BaseException:
        source.close()
        raise

