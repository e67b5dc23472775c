"""Promotion on AgentX's PostgreSQL (seed 002): a project fact copied into ``_global``.

AgentX's ``promote_prominent_facts`` creates a new ``_global`` Fact holding the same claim and
confidence, with ``access_count`` 0, ``promoted_from`` (the source channel) and ``promoted_at``,
unless a ``_global`` fact with that claim exists already; the original stays in its channel. It
then logs the promotion (``MemoryAuditLogger.log_promotion``): a ``memory_audit_log`` row with
operation 'promote', memory type 'semantic', the source channel, target ``['_global']``,
``promoted_from_channel``, the fact's confidence, access count and conversation count, the
configuration in force (``config_snapshot``: "active thresholds are snapshotted in each audit log
entry") and ``metadata.promoted_ids``/``promoted_type``.

Mnemoscope does the same on the rows it reaches: a new memory_timeline row in ``_global`` (the
same type, summary, embedding and importance; access_count 0; event_time now), whose metadata
names its original (``promoted_from``: the Mnemoscope id, ``promoted_from_channel``,
``promoted_from_node``) and the promotion (values, thresholds, reason), and that audit row with
``actor: mnemoscope``. The Neo4j Fact node and its PROMOTED_FROM edge are AgentX's to make:
Mnemoscope does not reach Neo4j, so the copy's ``neo4j_node_id`` stays NULL.

Undo removes the copy (the one kind of row Mnemoscope ever removes: one it inserted) and logs a
'delete' audit row; redo inserts it again with a new 'promote' row. The audit trail keeps all.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..errors import ConflictError, NothingToDoError, ReadOnlyError, UnsupportedError
from ..model import GLOBAL_CHANNEL, Memory
from ..salience import PromotionThresholds
from ..source import Change, Plan, PlanContext, Snapshot, same_record
from .agentx_tables import TIMELINE, insert_audit_row

if TYPE_CHECKING:
    from .agentx_postgres import AgentxSource

ACTOR = "mnemoscope"
# The columns of a copy Mnemoscope inserts, and the cast each value takes.
INSERTED = {"id": "", "memory_type": "", "neo4j_node_id": "", "event_time": "::timestamptz", "summary": "",
            "embedding": "::vector", "importance_score": "", "access_count": "", "last_accessed": "::timestamptz",
            "channel": "", "archived": "", "metadata": "::jsonb"}


def plan_promote(source: AgentxSource, memory: Memory, snap: Snapshot, fields: dict[str, Any],
                 context: PlanContext) -> Plan:
    to = str(fields.get("to") or GLOBAL_CHANNEL)
    if to != GLOBAL_CHANNEL:
        raise UnsupportedError(f"AgentX promotes project facts to {GLOBAL_CHANNEL} only, not to {to!r}.")
    if memory.channel == GLOBAL_CHANNEL:
        raise NothingToDoError(f"{memory.id} is already in channel {GLOBAL_CHANNEL}.")
    holder = source.rows(
        f"SELECT id FROM {TIMELINE} WHERE channel = %s AND NOT coalesce(archived, false) "
        "AND (summary = %s OR metadata->>'promoted_from' = %s) ORDER BY id LIMIT 1",
        [GLOBAL_CHANNEL, snap.get("summary"), memory.id],
    )
    if holder:
        raise NothingToDoError(f"{memory.id} is in {GLOBAL_CHANNEL} already as {source.id_prefix}{holder[0]['id']} "
                               "(AgentX keeps one global fact per claim).")
    thresholds = getattr(context.settings, "promotion", None) or PromotionThresholds()
    key = int(source.rows(f"SELECT nextval(pg_get_serial_sequence('{TIMELINE}', 'id')) AS key")[0]["key"])
    metadata = dict(snap.get("metadata") or {})
    metadata.update({
        "promoted_from": memory.id,
        "promoted_from_channel": memory.channel,
        "promoted_from_node": snap.get("neo4j_node_id"),
        "promoted_at": context.now,
        "promotion": {
            "confidence": memory.confidence, "access_count": memory.access_count,
            "conversations": memory.conversations,
            "thresholds": {"confidence": thresholds.confidence, "access_count": thresholds.access_count,
                           "conversations": thresholds.conversations},
            "reason": str(fields.get("reason") or ""), "actor": ACTOR,
        },
    })
    copy = {**snap, "id": key, "neo4j_node_id": None, "event_time": context.now, "access_count": 0,
            "last_accessed": None, "channel": GLOBAL_CHANNEL, "archived": False, "metadata": metadata}
    new_id = f"{source.id_prefix}{key}"
    return Plan([Change(new_id, None, copy)], new_id=new_id, notes=[
        f"AgentX's graph (Neo4j) gets its {GLOBAL_CHANNEL} Fact node from AgentX itself: Mnemoscope wrote the "
        f"{TIMELINE} row and the audit row."])


def is_promoted_copy(snap: Snapshot | None) -> bool:
    """Whether a row is a copy Mnemoscope's promotion inserted (the only rows it inserts or removes)."""
    meta = (snap or {}).get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("promotion"), dict):
        return False
    return (meta["promotion"].get("actor") == ACTOR and bool(meta.get("promoted_from"))
            and (snap or {}).get("channel") == GLOBAL_CHANNEL)


def check_insert_or_remove(record_id: str, expected: Snapshot | None, new: Snapshot | None) -> None:
    if not is_promoted_copy(new if expected is None else expected):
        raise ReadOnlyError(f"{record_id}: Mnemoscope neither adds nor removes {TIMELINE} rows but the copies its "
                            "promotion makes (AgentX archives them); nothing was written.")


def insert_copy(source: AgentxSource, cursor: Any, record_id: str, new: Snapshot) -> None:
    key = source.row_id(record_id)
    cursor.execute(f"SELECT 1 FROM {TIMELINE} WHERE id = %s", [key])
    if cursor.fetchone() is not None:
        raise ConflictError(f"{record_id} exists already (another program wrote it); nothing was written.")
    columns = [c for c in INSERTED if c in source.tables[TIMELINE]]
    values = [json.dumps(new.get(c)) if c == "metadata" else new.get(c) for c in columns]
    marks = ", ".join(f"%s{INSERTED[c]}" for c in columns)
    cursor.execute(f"INSERT INTO {TIMELINE} ({', '.join(columns)}) VALUES ({marks})", values)
    meta = new["metadata"]
    promotion = meta["promotion"]
    insert_audit_row(source.tables, cursor, {
        "operation": "promote",
        "memory_type": "semantic",
        "source_channel": meta.get("promoted_from_channel"),
        "target_channels": [GLOBAL_CHANNEL],
        "result_count": 1,
        "success": True,
        "promoted_from_channel": meta.get("promoted_from_channel"),
        "promotion_confidence": promotion.get("confidence"),
        "promotion_access_count": promotion.get("access_count"),
        "promotion_conversation_count": promotion.get("conversations"),
        "config_snapshot": json.dumps({"promotion": promotion.get("thresholds"), "actor": ACTOR}),
        "metadata": json.dumps({
            "promoted_ids": [key], "promoted_type": str(new.get("memory_type") or "fact"),
            "affected_ids": [key], "fact_id": meta.get("promoted_from_node"), "promoted_from": meta["promoted_from"],
            "reason": promotion.get("reason") or None, "actor": ACTOR, "action": "promote",
        }),
    })


def remove_copy(source: AgentxSource, cursor: Any, record_id: str, expected: Snapshot) -> None:
    key = source.row_id(record_id)
    cursor.execute(f"SELECT to_jsonb(m) AS snap FROM {TIMELINE} m WHERE id = %s FOR UPDATE NOWAIT", [key])
    row = cursor.fetchone()
    if row is None or not same_record(dict(row["snap"]), expected):
        state = "was removed" if row is None else "changed"
        raise ConflictError(f"{record_id} {state} since it was promoted (AgentX or another program wrote to it); "
                            "nothing was written.")
    cursor.execute(f"DELETE FROM {TIMELINE} WHERE id = %s", [key])
    insert_audit_row(source.tables, cursor, {
        "operation": "delete",
        "memory_type": "semantic",
        "source_channel": GLOBAL_CHANNEL,
        "target_channels": [GLOBAL_CHANNEL],
        "result_count": 1,
        "success": True,
        "metadata": json.dumps({"affected_ids": [key], "actor": ACTOR, "action": "undo promote",
                                "promoted_from": expected["metadata"].get("promoted_from")}),
    })
