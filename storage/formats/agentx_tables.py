"""AgentX's PostgreSQL tables (seed 002) as Mnemoscope reads them: their names, the columns that
make a database AgentX's, and its memory types as layers. Shared by the source
(agentx_postgres.py) and its curation (agentx_curation.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model import Layer

TIMELINE, LOGS, TOOLS, PROFILES, AUDIT, VERSION = (
    "memory_timeline", "conversation_logs", "tool_invocations", "user_profiles", "memory_audit_log", "schema_version"
)
TIMELINE_COLUMNS = frozenset({"id", "memory_type", "neo4j_node_id", "event_time", "summary", "importance_score",
                              "access_count", "last_accessed", "channel", "archived", "metadata"})
LOG_COLUMNS = frozenset({"conversation_id", "turn_index", "timestamp", "role", "content", "channel"})
TOOL_COLUMNS = frozenset({"conversation_id", "turn_index", "timestamp", "tool_name", "tool_input", "tool_output",
                          "success", "latency_ms", "error_message", "channel"})
PROFILE_KEYS = ("preferences", "expertise_areas", "communication_style", "metadata")
PROFILE_SESSION = "user_profile:"
# The seed's memory subsystems and the node types of its graph, as layers.
LAYER_OF_TYPE = {
    "episodic": Layer.EPISODIC, "conversation": Layer.EPISODIC, "turn": Layer.EPISODIC,
    "semantic": Layer.SEMANTIC, "fact": Layer.SEMANTIC, "entity": Layer.SEMANTIC,
    "procedural": Layer.PROCEDURAL, "strategy": Layer.PROCEDURAL, "tool": Layer.PROCEDURAL,
    "working": Layer.WORKING, "goal": Layer.WORKING,
    "core": Layer.CORE, "social": Layer.SOCIAL,
}
@dataclass(frozen=True)
class Column:
    type: str  # the type's name: "text", "vector", "jsonb", ...
    modifier: int  # atttypmod: a vector column's dimension, -1 for none


Tables = dict[str, dict[str, Column]]


def read_tables(cursor: Any) -> Tables:
    """The tables of the current schema (partitions left out: the parent stands for them)."""
    cursor.execute(
        "SELECT c.relname AS table, a.attname AS column, t.typname AS type, a.atttypmod AS modifier "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "JOIN pg_type t ON t.oid = a.atttypid "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition"
    )
    tables: Tables = {}
    for row in cursor.fetchall():
        tables.setdefault(row["table"], {})[row["column"]] = Column(row["type"], int(row["modifier"]))
    return tables


def is_agentx(tables: Tables) -> bool:
    return TIMELINE_COLUMNS <= set(tables.get(TIMELINE, {})) and LOG_COLUMNS <= set(tables.get(LOGS, {}))


def layer_of(memory_type: Any) -> Layer:
    return LAYER_OF_TYPE.get(str(memory_type or "").strip().lower(), Layer.SEMANTIC)


def insert_audit_row(tables: Tables, cursor: Any, values: dict[str, Any]) -> None:
    """Append one memory_audit_log row (the columns of values this database has), as AgentX's
    MemoryAuditLogger does; refused when no partition holds now."""
    from ..errors import StoreError

    present = tables[AUDIT]
    columns = [c for c in values if c in present]
    marks = ", ".join("%s::jsonb" if c in ("metadata", "config_snapshot") else "%s" for c in columns)
    try:
        cursor.execute(f"INSERT INTO {AUDIT} ({', '.join(columns)}) VALUES ({marks})", [values[c] for c in columns])
    except Exception as exc:
        if getattr(exc, "sqlstate", "") == "23514":  # no partition for this row's timestamp
            raise StoreError(f"{AUDIT} has no partition for now (AgentX's manage_audit_partitions job creates "
                             f"them); nothing was written.") from None
        raise
