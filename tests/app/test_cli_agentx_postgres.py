"""The command line on AgentX's PostgreSQL database (seed 002, built from its DDL): what a person
sees of its sessions, tool calls, memories, profiles and audit history, curation checked with
plain SQL, refusals that say why, and no password in anything printed or written."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import agentx_db
from helpers.cli_process import Cli
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home")


@pytest.fixture
def agentx(postgres_server: Any) -> Any:  # noqa: F811
    if not postgres_server.has_pgvector:
        pytest.skip("the test PostgreSQL has no pgvector, which the seed's schema needs")
    name = "cli_agentx_" + uuid.uuid4().hex[:8]
    db = agentx_db.build(postgres_server, name)
    yield db
    postgres_server.drop_database(name)


def test_reading_commands_show_what_agentx_keeps(cli: Cli, agentx: Any) -> None:
    url = agentx.url
    info = cli("info", url).stdout
    assert "AgentX PostgreSQL" in info and "memories: 7" in info and "sessions: 3" in info
    assert "conversation_logs (read-only)" in info and "_global 2" in info
    listed = cli.json("ls", url, "--channel", agentx_db.RUST)
    assert [m["id"] for m in listed["memories"]] == ["agentx:4", "agentx:2", "agentx:3"]
    assert [m["id"] for m in cli.json("ls", url, "--status", "archived")["memories"]] == ["agentx:6"]
    sessions = cli("sessions", url).stdout
    assert agentx_db.TRAVEL_CHAT in sessions and "Find flights to Lisbon" in sessions
    turns = cli("sessions", url, "--session", agentx_db.TRAVEL_CHAT).stdout
    assert "tool [tool]: web_search" in turns and "(failed: timeout after 10s)" in turns
    profiles = cli("scratchpad", url).stdout
    assert "user_profile:alice" in profiles and '"theme": "dark"' in profiles
    hits = cli.json("search", url, "borrow checker", "--mode", "keyword")["hits"]
    assert [h["id"] for h in hits] == ["agentx:3", "agentx:4"]
    shown = cli("show", url, "agentx:1").stdout
    assert "agentx history:" in shown and "promote" in shown and "memory_audit_log_2025_04" in shown
    owner = cli.json("show", url, "agentx:1")["owner_history"]
    assert [e["partition"] for e in owner] == ["memory_audit_log_2025_03", "memory_audit_log_2025_04"]


def test_curation_writes_what_sql_then_reads_and_undo_puts_it_back(cli: Cli, agentx: Any) -> None:
    url = agentx.url
    before = agentx.timeline(3)
    edited = cli("edit", url, "agentx:3", "--content", "Fixed the borrow checker error in the parser module",
                 "--salience", "0.75")
    assert "embedding" in edited.stderr  # the note: the stale vector is cleared for AgentX to embed again
    after = agentx.timeline(3)
    assert (after["summary"], after["importance_score"], after["embedding"]) == (
        "Fixed the borrow checker error in the parser module", 0.75, None)
    assert agentx.audit_rows()[-1]["metadata"]["actor"] == "mnemoscope"
    assert "edit" in cli("history", url).stdout
    cli("undo", url)
    assert agentx.timeline(3) == before
    cli("rm", url, "agentx:7")
    assert agentx.timeline(7)["archived"] is True
    cli("restore", url, "agentx:7")
    assert agentx.timeline(7)["archived"] is False


def test_conflicts_and_read_only_parts_are_refused_with_a_reason(cli: Cli, agentx: Any) -> None:
    url = agentx.url
    revision = cli.json("show", url, "agentx:2")["revision"]
    agentx.sql("UPDATE memory_timeline SET access_count = access_count + 1 WHERE id = 2")  # AgentX's retrieval
    refused = cli("edit", url, "agentx:2", "--salience", "0.1", "--expect-revision", revision, code=1)
    assert "changed since it was read" in refused.stderr
    assert agentx.timeline(2)["importance_score"] == 0.6
    layer = cli("edit", url, "agentx:2", "--layer", "core", code=1)
    assert "layer cannot be stored there" in layer.stderr
    purge = cli("rm", url, "agentx:2", "--purge", code=1)
    assert "never removes" in purge.stderr
    profile = cli("scratchpad", url, "--session", agentx_db.RUST_CHAT, "--set", "note=x", code=1)
    assert "only reads" in profile.stderr


def test_no_password_in_anything_printed_or_written(cli: Cli, agentx: Any, tmp_path: Path) -> None:
    url = agentx.url
    cli("info", url)
    cli("edit", url, "agentx:1", "--salience", "0.85")
    cli("undo", url)
    cli("show", url, "agentx:1")
    secret = agentx.server.password
    from urllib.parse import quote

    forms = {secret, quote(secret, safe="")}
    assert not any(form in printed for form in forms for printed in cli.printed)
    written = [p for p in (tmp_path / "home").rglob("*") if p.is_file()]
    assert written  # the journal of the undo above
    assert not any(form.encode() in p.read_bytes() for form in forms for p in written)


def test_promote_lists_the_candidates_by_agentx_counts_and_promotes_with_its_audit_row(cli: Cli, agentx: Any) -> None:
    url = agentx.url
    assert "(none)" in cli("promote", url, "--candidates").stdout
    agentx_db.recall_in_new_conversation(agentx, "fact-102", retrievals=2)
    listed = cli("promote", url, "--candidates").stdout
    assert "confidence >= 0.85, access_count >= 5, conversations >= 2" in listed
    assert "agentx:2" in listed and "cargo nextest" in listed and "agentx:1" not in listed
    [candidate] = cli.json("promote", url, "--candidates")["candidates"]
    assert (candidate["confidence"], candidate["access_count"], candidate["conversations"]) == (0.95, 5, 2)
    promoted = cli.json("promote", url, "agentx:2")
    [copy] = promoted["ids"]
    shown = cli.json("show", url, copy)
    assert shown["channel"] == "_global" and shown["provenance"]["promoted_from"] == "agentx:2"
    history = cli("history", url).stdout
    assert "promote" in history.split("own audit log")[0]  # Mnemoscope's journal
    owners = history.split("AgentX PostgreSQL's own audit log (newest first):")[1]
    first, snapshot = owners.strip().splitlines()[:2]  # the newest row
    assert "promote semantic [_global]" in first and "promoted from my-rust-project to _global" in first
    assert snapshot.strip().startswith("config snapshot:")
    assert '"promotion": {"access_count": 5, "confidence": 0.85, "conversations": 2}' in snapshot
    audit = cli.json("history", url)["owner_audit"]
    assert audit[0]["operation"] == "promote" and audit[0]["promotion_conversation_count"] == 2
    assert audit[0]["owner"] == "AgentX PostgreSQL" and len(audit) == 6 + 2 + 1  # the seed's, two retrievals, this
    cli("undo", url)
    assert cli.json("history", url)["owner_audit"][0]["operation"] == "delete"
    assert [c["id"] for c in cli.json("promote", url, "--candidates")["candidates"]] == ["agentx:2"]


def test_info_names_its_kind_and_a_channel_search_says_global_would_be_merged(cli: Cli, agentx: Any) -> None:
    url = agentx.url
    info = cli("info", url).stdout
    assert "kinds: postgresql" in info and "sqlite" not in info
    assert "goals: 1 (1 active)" in info and "success rate 75%" in info
    searched = cli("search", url, "borrow checker", "--mode", "keyword", "--channel", agentx_db.RUST)
    assert "the agent would also be given _global" in searched.stderr
    assert all(h["channel"] == agentx_db.RUST for h in cli.json("search", url, "dark mode", "--mode", "keyword",
                                                                "--channel", agentx_db.RUST)["hits"])
    unfiltered = cli("search", url, "borrow checker", "--mode", "keyword")
    assert "_global" not in unfiltered.stderr
