"""How many conversations AgentX saw each memory in, and which project facts meet its promotion
thresholds (seed 002: "confidence >= 0.85, access_count >= 5, conversations >= 2").

AgentX's PostgreSQL keeps no count of conversations per memory; its audit trail does say which
conversation every operation happened in. ``MemoryAuditLogger.log_write``/``log_read`` write one
``memory_audit_log`` row per store, update and retrieval, with the ``conversation_id`` it ran in
and the memories it touched in ``metadata`` (``affected_ids``/``record_ids`` for a write,
``result_ids`` for a retrieval, ``fact_id``/``memory_id`` for one memory), named by the Neo4j node
id or the timeline row id. So the conversations a memory was seen in are counted as AgentX's
``(c:Conversation)-[:MENTIONS]->(e)`` count would find them:

    the distinct conversation_id of the audit rows (every partition) that name the memory by its
    timeline id or its neo4j_node_id, together with the conversation its own memory_timeline row
    names in ``metadata.conversation_id`` (the conversation it was extracted from), if any.

conversation_logs does not enter the count: its rows are turns and name no memory. An audit row
without a conversation (a background job's, Mnemoscope's own) counts none. A database without the
audit log (or whose audit rows have no conversation_id column) keeps no such count: None, shown
"—", never 0.

A promotion candidate is what ``promote_prominent_facts`` would promote: an unarchived fact of a
project channel (memory types of the semantic layer: fact, entity, semantic) whose stored
confidence (``metadata.confidence``, AgentX's Fact.confidence) and access_count meet the
thresholds, seen in enough conversations, and that has no ``_global`` copy yet: AgentX looks for a
``_global`` fact with the same claim before it creates one, and Mnemoscope's own copies name their
original in ``metadata.promoted_from``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..model import GLOBAL_CHANNEL, Layer, Memory
from .agentx_tables import AUDIT, LAYER_OF_TYPE, TIMELINE

if TYPE_CHECKING:
    from ..salience import PromotionThresholds
    from .agentx_postgres import AgentxSource

# metadata keys of an audit row that list the memories it touched, and those that name one.
LISTS = ("affected_ids", "record_ids", "result_ids", "promoted_ids")
SINGLES = ("memory_id", "fact_id")
SEMANTIC_TYPES = tuple(t for t, layer in LAYER_OF_TYPE.items() if layer is Layer.SEMANTIC)

# The audit rows naming any of the wanted names (a cheap test on each row first: a string id is
# an element of a list, a timeline id a number in one, or one of the single keys), then every
# name each of them names, to match exactly.
_AUDIT_NAMES = (
    "SELECT a.conversation_id::text AS conversation, n.name FROM {audit} a CROSS JOIN LATERAL ("
    "SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(a.metadata->k) = 'array' THEN a.metadata->k "
    "ELSE '[]'::jsonb END) AS name FROM unnest(%(lists)s::text[]) AS k "
    "UNION ALL SELECT a.metadata->>k FROM unnest(%(singles)s::text[]) AS k) AS n "
    "WHERE a.conversation_id IS NOT NULL AND n.name IS NOT NULL AND ({named})"
)
_NAMED = " OR ".join(
    [f"a.metadata->'{k}' ?| %(names)s::text[] OR a.metadata->'{k}' @> ANY(%(numbers)s::jsonb[])" for k in LISTS]
    + [f"a.metadata->>'{k}' = ANY(%(names)s::text[])" for k in SINGLES]
)


def counts_conversations(source: AgentxSource) -> bool:
    """Whether the database keeps what the count is made of (the audit log's conversation_id)."""
    return source.has(AUDIT, ("conversation_id", "metadata"))


def conversation_counts(source: AgentxSource, rows: Sequence[dict[str, Any]]) -> dict[int, int] | None:
    """The number of conversations each memory_timeline row (read with id, neo4j_node_id and
    metadata) was seen in, by row id; None when the database keeps no such count."""
    if not counts_conversations(source):
        return None
    if not rows:
        return {}
    keys: list[int] = []
    names: list[str] = []
    own: list[tuple[int, str]] = []
    for row in rows:
        key = int(row["id"])
        for name in (str(key), row.get("neo4j_node_id")):
            if name:
                keys.append(key)
                names.append(str(name))
        meta: dict[str, Any] = row["metadata"] if isinstance(row.get("metadata"), dict) else {}
        if meta.get("conversation_id"):
            own.append((key, str(meta["conversation_id"])))
    found = source.rows(
        "WITH wanted(key, name) AS (SELECT * FROM unnest(%(keys)s::bigint[], %(names)s::text[])), "
        f"named AS ({_AUDIT_NAMES.format(audit=AUDIT, named=_NAMED)}) "
        "SELECT w.key, named.conversation FROM wanted w JOIN named ON named.name = w.name",
        {"keys": keys, "names": names, "lists": list(LISTS), "singles": list(SINGLES),
         "numbers": [json.dumps([int(row["id"])]) for row in rows]},
    )
    seen: dict[int, set[str]] = {int(row["id"]): set() for row in rows}
    for row in found:
        seen[int(row["key"])].add(str(row["conversation"]).lower())
    for key, conversation in own:
        seen[key].add(conversation.lower())
    return {key: len(conversations) for key, conversations in seen.items()}


def promotion_candidates(source: AgentxSource, thresholds: PromotionThresholds, limit: int) -> list[Memory]:
    """The project facts AgentX's promotion job would promote now, the most confident first."""
    if limit <= 0 or not counts_conversations(source):
        return []
    rows = source.rows(
        f"{source.select_sql()} WHERE NOT coalesce(m.archived, false) AND m.channel <> %s "
        "AND lower(trim(m.memory_type)) = ANY(%s) AND jsonb_typeof(m.metadata->'confidence') = 'number' "
        "AND (m.metadata->>'confidence')::float >= %s AND coalesce(m.access_count, 0) >= %s "
        f"AND NOT EXISTS (SELECT 1 FROM {TIMELINE} g WHERE g.channel = %s AND NOT coalesce(g.archived, false) "
        "AND (g.summary = m.summary OR g.metadata->>'promoted_from' = 'agentx:' || m.id)) "
        "ORDER BY (m.metadata->>'confidence')::float DESC, m.access_count DESC, m.id",
        [GLOBAL_CHANNEL, list(SEMANTIC_TYPES), thresholds.confidence, thresholds.access_count, GLOBAL_CHANNEL],
    )
    memories = source.memories_of(rows)
    return [m for m in memories if (m.conversations or 0) >= thresholds.conversations][:limit]
