"""What AgentX's daily ``cleanup_old_memories`` job will archive or delete, and when (seed 002,
"Data Retention"), read from its PostgreSQL (RetentionSource.upcoming).

- "Archive conversations older than 90 days (configurable)": the job archives every
  Conversation whose ``started_at`` is more than 90 days ago, and its turns with it. A
  conversation's start is its first logged turn (conversation_logs, tool_invocations), so each
  conversation is listed at start + 90 days (record id: the conversation id, as ``sessions``
  lists it); so is each unarchived episodic memory_timeline row (types conversation, turn,
  episodic), at its conversation's start + 90 days where its metadata names the conversation,
  else at its event_time + 90 days. PostgreSQL does not record whether the job already archived
  a conversation in the graph: one whose date is past is listed as overdue.
- "Delete entities with salience < 0.1 not accessed in 30 days": an unarchived entity row is
  listed at the first whole day, 30 days or more after its last access, on which its salience
  (importance_score), decayed by the daily job's ``salience x 0.95`` per idle day, is below 0.1.
  An entity never accessed (last_accessed NULL) never meets the job's condition. AgentX also
  keeps an entity any Fact is ABOUT, which only its graph knows: the rule says so.

The numbers are the seed's defaults (EntityDecay's, ARCHIVE_DAYS), as nothing in the database
records AgentX's configuration for them.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..retention import ARCHIVE, CLEAN_UP, Upcoming
from ..salience import EntityDecay
from ..timeutil import as_utc
from .agentx_tables import LOGS, TIMELINE, TOOL_COLUMNS, TOOLS

if TYPE_CHECKING:
    from .agentx_postgres import AgentxSource

ARCHIVE_DAYS = 90
EPISODIC_TYPES = ("conversation", "turn", "episodic")
CONVERSATION_RULE = (f"AgentX cleanup_old_memories: a conversation is archived {ARCHIVE_DAYS} days after it started "
                     "(with its turns)")
ENTITY_RULE = ("AgentX cleanup_old_memories: an entity is deleted once its salience x {rate:g} per idle day is below "
               "{threshold:g} and it was not accessed for {days} days (unless a fact is about it, which its graph knows)")


def upcoming(source: AgentxSource, now: datetime, until: datetime, decay: EntityDecay | None = None) -> list[Upcoming]:
    decay = decay or EntityDecay()
    found = _conversations(source, until) + _episodic_rows(source, until) + _entities(source, until, decay)
    return sorted(found, key=lambda u: (u.when, u.record_id))


def _conversations(source: AgentxSource, until: datetime) -> list[Upcoming]:
    starts = f"SELECT conversation_id, min(timestamp) AS started FROM {LOGS} GROUP BY 1"
    if source.has(TOOLS, TOOL_COLUMNS):
        starts = (f"SELECT conversation_id, min(started) AS started FROM ({starts} UNION ALL SELECT conversation_id, "
                  f"min(timestamp) FROM {TOOLS} GROUP BY 1) AS s GROUP BY 1")
    rows = source.rows(
        f"SELECT c.conversation_id::text AS id, c.started, f.content FROM ({starts}) c "
        f"LEFT JOIN (SELECT DISTINCT ON (conversation_id) conversation_id, content FROM {LOGS} "
        "ORDER BY conversation_id, turn_index) f ON f.conversation_id = c.conversation_id "
        "WHERE c.started + make_interval(days => %s) < %s ORDER BY c.started, 1",
        [ARCHIVE_DAYS, as_utc(until)],
    )
    return [Upcoming(row["id"], ARCHIVE, as_utc(row["started"]) + timedelta(days=ARCHIVE_DAYS), CONVERSATION_RULE,
                     source.label, _preview(row["content"])) for row in rows]


def _episodic_rows(source: AgentxSource, until: datetime) -> list[Upcoming]:
    rows = source.rows(
        f"SELECT m.id, m.summary, coalesce(c.started, m.event_time) AS started, c.started IS NOT NULL AS known "
        f"FROM {TIMELINE} m LEFT JOIN (SELECT conversation_id::text AS cid, min(timestamp) AS started FROM {LOGS} "
        "GROUP BY 1) c ON c.cid = lower(m.metadata->>'conversation_id') "
        "WHERE NOT coalesce(m.archived, false) AND lower(trim(m.memory_type)) = ANY(%s) "
        "AND coalesce(c.started, m.event_time) + make_interval(days => %s) < %s",
        [list(EPISODIC_TYPES), ARCHIVE_DAYS, as_utc(until)],
    )
    return [
        Upcoming(f"{source.id_prefix}{row['id']}", ARCHIVE, as_utc(row["started"]) + timedelta(days=ARCHIVE_DAYS),
                 CONVERSATION_RULE + ("" if row["known"] else "; its event_time stands for the conversation's start"),
                 source.label, _preview(row["summary"]))
        for row in rows
    ]


def _entities(source: AgentxSource, until: datetime, decay: EntityDecay) -> list[Upcoming]:
    rule = ENTITY_RULE.format(rate=decay.rate, threshold=decay.cleanup_threshold, days=decay.cleanup_min_idle_days)
    rows = source.rows(
        f"SELECT id, summary, importance_score, last_accessed FROM {TIMELINE} WHERE NOT coalesce(archived, false) "
        "AND lower(trim(memory_type)) = 'entity' AND last_accessed IS NOT NULL AND importance_score IS NOT NULL "
        "AND last_accessed < %s", [as_utc(until) - timedelta(days=decay.cleanup_min_idle_days)],
    )
    found = []
    for row in rows:
        days = idle_days_until_cleanup(float(row["importance_score"]), decay)
        if days is None:
            continue
        when = as_utc(row["last_accessed"]) + timedelta(days=days)
        if when < as_utc(until):
            found.append(Upcoming(f"{source.id_prefix}{row['id']}", CLEAN_UP, when, rule, source.label,
                                  _preview(row["summary"])))
    return found


def idle_days_until_cleanup(salience: float, decay: EntityDecay) -> int | None:
    """The first whole idle day on which the cleanup rule holds (salience x rate^days below the
    threshold, and days >= the minimum idle days); None when it never will (no decay)."""
    if salience < decay.cleanup_threshold:
        return decay.cleanup_min_idle_days
    if decay.rate >= 1.0 or salience <= 0:
        return None
    below = math.floor(math.log(decay.cleanup_threshold / salience) / math.log(decay.rate)) + 1
    while salience * decay.rate ** below >= decay.cleanup_threshold:  # floating point at the boundary
        below += 1
    return max(decay.cleanup_min_idle_days, below)


def _preview(text: Any) -> str:
    words = " ".join(str(text or "").split())
    return words if len(words) <= 80 else words[:79] + "…"
