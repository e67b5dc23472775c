"""Curation of AgentX's memory_timeline (seed 002): what its schema lets Mnemoscope change safely.

- Edit: the summary (content), ``importance_score`` (salience) and ``channel``. The row's
  embedding was computed from the old summary, so a content edit sets it to NULL: AgentX
  generates an embedding where one is missing (the seed's "Generate embedding (if missing)"),
  and would never recompute a stale one. Mnemoscope does not embed it itself, since the vector
  must come from AgentX's model (not recorded in the database). Undo puts the old vector back.
- Delete archives the row (``archived = true``), which is how AgentX retires memory ("Archives
  old conversations"; the row, its Neo4j node and its audit rows stay); restore unarchives it.
  There is no purge: a removed row would leave its Neo4j node and audit rows naming nothing.
- Reinforce counts one more access, as AgentX's retrieval does.
- Promote copies a project fact into ``_global`` as AgentX's promotion job does, with its
  'promote' audit row and the thresholds in force (agentx_promotion).
- Conversation logs, tool invocations, user profiles and the audit log are read-only
  (agentx_postgres.READ_ONLY_PARTS says why).

Every write is one transaction: the row is locked (``SELECT ... FOR UPDATE NOWAIT``: a row
another session is writing is refused as busy, not waited for), compared with the snapshot the
step was planned on (else ConflictError, nothing written), updated, and an audit row is appended
to ``memory_audit_log`` as AgentX's ``log_write(operation, memory_type, channel, affected_ids,
metadata)`` writes one: operation 'update', the audit vocabulary's memory type, the channel,
``metadata.affected_ids`` naming the row, what changed, and ``actor: mnemoscope``. A snapshot is
the row as ``to_jsonb`` gives it (the vector as pgvector's text), so undo writes it back exactly.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ..errors import ConflictError, NotFoundError, NothingToDoError, ReadOnlyError, StoreError, UnsupportedError
from ..model import Memory
from ..source import DELETE, EDIT, PROMOTE, PURGE, REINFORCE, RESTORE, Change, Plan, PlanContext, Snapshot, same_record
from . import agentx_promotion as promotion
from .agentx_tables import AUDIT, TIMELINE, insert_audit_row, layer_of

if TYPE_CHECKING:
    from .agentx_postgres import AgentxSource

# Columns Mnemoscope writes, and the cast each value takes.
WRITABLE = {"summary": "", "importance_score": "", "channel": "", "archived": "", "access_count": "",
            "last_accessed": "::timestamptz", "embedding": "::vector"}
AUDIT_MEMORY_TYPES = {"episodic", "semantic", "procedural", "working"}
CHANNEL_LIMIT = 100  # channel VARCHAR(100)
ACTOR = "mnemoscope"


def read_snapshot(source: AgentxSource, record_id: str) -> Snapshot | None:
    rows = source.rows(f"SELECT to_jsonb(m) AS snap FROM {TIMELINE} m WHERE id = %s", [source.row_id(record_id)])
    return dict(rows[0]["snap"]) if rows else None


def plan(source: AgentxSource, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
    snap = read_snapshot(source, memory.id)
    if snap is None:
        raise NotFoundError(f"No memory {memory.id} in {source.location}.")
    if operation == EDIT:
        return _edit(memory.id, snap, fields)
    if operation == DELETE:
        if snap.get("archived"):
            raise NothingToDoError(f"{memory.id} is archived already (restore it with mnemoscope restore).")
        return Plan([Change(memory.id, snap, {**snap, "archived": True})], notes=[
            "AgentX archives memories rather than deleting them: the row stays with archived = true "
            "(restore or undo brings it back)."])
    if operation == RESTORE:
        return Plan([Change(memory.id, snap, {**snap, "archived": False})], new_id=memory.id)
    if operation == REINFORCE:
        count = int(snap.get("access_count") or 0) + 1
        return Plan([Change(memory.id, snap, {**snap, "access_count": count, "last_accessed": context.now})])
    if operation == PURGE:
        raise UnsupportedError(
            f"{memory.id} cannot be purged: AgentX archives memories and never removes a {TIMELINE} row (its Neo4j "
            "node and its audit rows would name nothing). Archive it instead: mnemoscope rm without --purge."
        )
    if operation == PROMOTE:
        return promotion.plan_promote(source, memory, snap, fields, context)
    raise UnsupportedError(f"{memory.id}: Mnemoscope cannot {operation} an AgentX memory.")


def _edit(record_id: str, snap: Snapshot, fields: dict[str, Any]) -> Plan:
    new = dict(snap)
    notes: list[str] = []
    if "content" in fields:
        new["summary"] = str(fields["content"])
    if "salience" in fields:
        new["importance_score"] = float(fields["salience"])
    if "channel" in fields:
        channel = str(fields["channel"]).strip()
        if not channel or len(channel) > CHANNEL_LIMIT:
            raise UnsupportedError(f"An AgentX channel is 1 to {CHANNEL_LIMIT} characters, not {channel!r}.")
        new["channel"] = channel
    if new.get("summary") != snap.get("summary") and snap.get("embedding") is not None:
        new["embedding"] = None
        notes.append("Its embedding was computed from the old summary: it is cleared (NULL) for AgentX to embed "
                     "the new one, as it embeds what has none; undo puts the old one back.")
    return Plan([] if new == snap else [Change(record_id, snap, new)], notes=notes)


def prepare_write(source: AgentxSource, changes: Sequence[Change]) -> None:
    """Refuse a step before anything (its journal entry included) is written: no audit partition
    for now, or a change Mnemoscope does not make to AgentX's rows."""
    for change in changes:
        if change.before is None or change.after is None:
            promotion.check_insert_or_remove(change.record, change.before, change.after)
        else:
            _changed_columns(change.record, change.before, change.after)
    missing = audit_partition_missing(source)
    if missing:
        raise StoreError(f"{missing}; nothing was written.")


def _changed_columns(record_id: str, expected: Snapshot | None, new: Snapshot | None) -> list[str]:
    if expected is None or new is None:
        raise ReadOnlyError(f"{record_id}: Mnemoscope neither adds nor removes {TIMELINE} rows (AgentX archives them); "
                            "nothing was written.")
    changed = sorted(c for c in set(expected) | set(new) if expected.get(c) != new.get(c))
    fixed = [c for c in changed if c not in WRITABLE]
    if fixed:
        raise ReadOnlyError(f"{record_id}: {', '.join(fixed)} of an AgentX memory cannot be changed; nothing was written.")
    return changed


def write_record(source: AgentxSource, record_id: str, expected: Snapshot | None,
                 new: Snapshot | None) -> Snapshot | None:
    """The write primitive: in one transaction, the locked row as expected, then new's columns and
    one audit row. Returns the row as it now is. A promoted copy is inserted, and removed on undo
    (agentx_promotion)."""
    if expected is None or new is None:
        promotion.check_insert_or_remove(record_id, expected, new)
        with source.writing() as cursor:
            if expected is None:
                assert new is not None
                promotion.insert_copy(source, cursor, record_id, new)
                cursor.execute(f"SELECT to_jsonb(m) AS snap FROM {TIMELINE} m WHERE id = %s", [source.row_id(record_id)])
                return dict(cursor.fetchone()["snap"])
            promotion.remove_copy(source, cursor, record_id, expected)
            return None
    changed = _changed_columns(record_id, expected, new)
    assert expected is not None and new is not None
    key = source.row_id(record_id)
    select = f"SELECT to_jsonb(m) AS snap FROM {TIMELINE} m WHERE id = %s"
    with source.writing() as cursor:
        cursor.execute(select + " FOR UPDATE NOWAIT", [key])
        row = cursor.fetchone()
        if row is None or not same_record(dict(row["snap"]), expected):
            state = "was removed" if row is None else "changed"
            raise ConflictError(f"{record_id} {state} since it was read (AgentX or another program wrote to it); "
                                "nothing was written. Reload and try again.")
        if changed:
            started = time.monotonic()
            assignments = ", ".join(f"{column} = %s{WRITABLE[column]}" for column in changed)
            cursor.execute(f"UPDATE {TIMELINE} SET {assignments} WHERE id = %s", [*(new[c] for c in changed), key])
            _append_audit_row(source, cursor, key, expected, new, changed, int((time.monotonic() - started) * 1000))
        cursor.execute(select, [key])
        return dict(cursor.fetchone()["snap"])


def _append_audit_row(source: AgentxSource, cursor: Any, key: int, before: Snapshot, after: Snapshot,
                      changed: list[str], latency_ms: int) -> None:
    layer = layer_of(after.get("memory_type")).value
    channels = list(dict.fromkeys([before.get("channel"), after.get("channel")]))
    metadata = {
        "affected_ids": [key],
        "neo4j_node_id": after.get("neo4j_node_id"),
        "actor": ACTOR,
        "action": _action(before, after),
        "changes": {c: {"from": _shown(c, before.get(c)), "to": _shown(c, after.get(c))} for c in changed},
    }
    values: dict[str, Any] = {
        "operation": "update",
        "memory_type": layer if layer in AUDIT_MEMORY_TYPES else after.get("memory_type"),
        "source_channel": after.get("channel"),
        "target_channels": channels,
        "result_count": 1,
        "latency_ms": latency_ms,
        "success": True,
        "metadata": json.dumps(metadata),
    }
    insert_audit_row(source.tables, cursor, values)


def _action(before: Snapshot, after: Snapshot) -> str:
    if bool(before.get("archived")) != bool(after.get("archived")):
        return "archive" if after.get("archived") else "unarchive"
    if after.get("access_count") != before.get("access_count"):
        return "reinforce"
    return "edit"


def _shown(column: str, value: Any) -> Any:
    if column == "embedding":
        return None if value is None else "stored"
    return value


def audit_partition_missing(source: AgentxSource) -> str:
    """Why an audit row written now would have no partition to go to ("" when one would)."""
    rows = source.rows(
        "SELECT c.relkind::text AS kind, (SELECT array_agg(pg_get_expr(p.relpartbound, p.oid)) FROM pg_inherits i "
        "JOIN pg_class p ON p.oid = i.inhrelid WHERE i.inhparent = c.oid) AS bounds "
        f"FROM pg_class c WHERE c.oid = to_regclass('{AUDIT}')"
    )
    if not rows or rows[0]["kind"] != "p":
        return ""
    lows: list[str | None] = []
    highs: list[str | None] = []
    for bound in rows[0]["bounds"] or []:
        if bound.strip().upper() == "DEFAULT":
            return ""
        found = re.match(r"FOR VALUES FROM \((.+)\) TO \((.+)\)", bound.strip())
        if found:
            lows.append(_literal(found.group(1)))
            highs.append(_literal(found.group(2)))
    covered = source.rows(
        "SELECT coalesce(bool_or((lo IS NULL OR now() >= lo::timestamptz) AND (hi IS NULL OR now() < hi::timestamptz)), "
        "false) AS covered, now()::date AS today FROM unnest(%s::text[], %s::text[]) AS b(lo, hi)",
        [lows, highs],
    )[0]
    if covered["covered"]:
        return ""
    return (f"{AUDIT} has no partition for today ({covered['today']}), where every write must be logged; "
            "AgentX's manage_audit_partitions job creates them, and Mnemoscope writes nothing until one exists")


def _literal(text: str) -> str | None:
    """A range bound's value as text; None for MINVALUE/MAXVALUE."""
    text = text.strip()
    return text[1:-1].replace("''", "'") if text.startswith("'") else None


def history_entry(row: dict[str, Any]) -> dict[str, Any]:
    """One audit row, JSON-safe, with what `show` prints of an owner's history (event, time,
    old -> new)."""
    entry = {k: _plain(v) for k, v in row.items()}
    metadata: dict[str, Any] = row["metadata"] if isinstance(row.get("metadata"), dict) else {}
    summary = (metadata.get("changes") or {}).get("summary") if isinstance(metadata.get("changes"), dict) else None
    entry["event"] = row.get("operation")
    entry["created_at"] = entry.get("timestamp")
    if isinstance(summary, dict):
        entry["old_memory"], entry["new_memory"] = summary.get("from"), summary.get("to")
    else:
        entry["old_memory"], entry["new_memory"] = None, _described(row, metadata)
    return entry


def _described(row: dict[str, Any], metadata: dict[str, Any]) -> str:
    parts = [f"[{row.get('partition')}]"]
    if row.get("promoted_from_channel"):
        to = ", ".join(row.get("target_channels") or []) or row.get("source_channel")
        parts.append(f"promoted from {row['promoted_from_channel']} to {to} (confidence "
                     f"{row.get('promotion_confidence')}, {row.get('promotion_access_count')} accesses, "
                     f"{row.get('promotion_conversation_count')} conversations)")
    elif row.get("source_channel"):
        parts.append(f"in {row['source_channel']}")
    if row.get("query_text"):
        parts.append(f"query {row['query_text']!r}")
    if metadata.get("action"):
        parts.append(str(metadata["action"]))
    if metadata.get("reason"):
        parts.append(f"reason: {metadata['reason']}")
    return parts[0] + " " + "; ".join(parts[1:])


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)  # a UUID, a Decimal


def parse_vector(text: str) -> list[float]:
    return [float(x) for x in json.loads(text)]


def vector_text(vector: Sequence[float]) -> str:
    """pgvector's text form of a vector."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"
