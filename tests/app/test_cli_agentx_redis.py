"""The command line on AgentX's working memory in a real Redis (seed 002): its conversations' keys
with their TTLs, a key set and deleted as undoable steps checked with redis-py, a conflict when
AgentX wrote meanwhile, Neo4j URLs refused in one sentence, no password in anything printed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from helpers.cli_process import Cli
from helpers.redis_server import (
    RUST,
    RUST_CHAT,
    RUST_SESSION,
    agentx_redis,  # noqa: F401 (fixture)
    redis_server,  # noqa: F401 (fixture)
)

CURRENT_FILE = f"{RUST_SESSION}:context:current_file"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return Cli(tmp_path / "home")


def test_info_and_scratchpad_show_agentx_s_keys_with_their_ttl(cli: Cli, agentx_redis: Any) -> None:  # noqa: F811
    url = agentx_redis.url
    info = cli("info", url).stdout
    assert "AgentX working memory (Redis)" in info and "1 key outside AgentX's patterns" in info
    shown = cli("scratchpad", url).stdout
    assert f"{RUST_SESSION}  alice: conversation {RUST_CHAT}  [{RUST}]" in shown
    assert re.search(r"context:current_file  \[TTL (59\d|600)s, expires ", shown)  # 600 s, a few gone by
    assert "turns  [TTL 3" in shown and "scratch\n" in shown  # session:sess-9:scratch has no TTL
    sessions = cli.json("scratchpad", url, "--session", RUST_SESSION)["sessions"]
    [rust] = sessions
    entries = {e["key"]: e for e in rust["entries"]}
    assert entries["context:active_goal"]["json"]["id"] == "goal-7"
    assert entries["context:current_file"]["ttl_seconds"] <= 600 and entries["thoughts"]["updated_at"] is None
    turns = cli("sessions", url, "--session", RUST_SESSION).stdout
    assert "#0" in turns and "borrow checker" in turns
    assert all(agentx_redis.server.password not in printed for printed in cli.printed)


def test_set_and_delete_keep_the_ttl_and_undo_puts_each_back(cli: Cli, agentx_redis: Any) -> None:  # noqa: F811
    url, r = agentx_redis.url, agentx_redis.client
    expiry = r.pexpiretime(CURRENT_FILE)
    done = cli("scratchpad", url, "--session", RUST_SESSION, "--set", "context:current_file=src/lexer.rs",
               "--expect-value", '"src/parser.rs"').stdout
    assert "set context:current_file" in done and 'now: "src/lexer.rs"' in done
    assert r.get(CURRENT_FILE) == '"src/lexer.rs"' and r.pexpiretime(CURRENT_FILE) == expiry
    job = "consolidation:job:job-42"
    fields, job_expiry = r.hgetall(job), r.pexpiretime(job)
    cli("scratchpad", url, "--session", "consolidation", "--delete", "job:job-42")
    assert not r.exists(job)
    cli("undo", url)
    assert r.hgetall(job) == fields and r.pexpiretime(job) == job_expiry
    cli("undo", url)
    assert r.get(CURRENT_FILE) == '"src/parser.rs"' and r.pexpiretime(CURRENT_FILE) == expiry
    assert all(agentx_redis.server.password not in printed for printed in cli.printed)


def test_a_key_agentx_wrote_meanwhile_is_a_conflict(cli: Cli, agentx_redis: Any) -> None:  # noqa: F811
    r = agentx_redis.client
    r.set(CURRENT_FILE, json.dumps("src/main.rs"), keepttl=True)
    refused = cli("scratchpad", agentx_redis.url, "--session", RUST_SESSION, "--set", "context:current_file=x",
                  "--expect-value", '"src/parser.rs"', code=1)
    assert "changed since it was read" in refused.stderr and r.get(CURRENT_FILE) == '"src/main.rs"'


@pytest.mark.parametrize("url", ["bolt://neo4j:hunter2@127.0.0.1:7687", "neo4j://127.0.0.1:7687"])
def test_a_neo4j_url_is_refused_in_one_sentence(cli: Cli, url: str) -> None:
    refused = cli("info", url, code=2)
    assert refused.stderr.startswith("mnemoscope: Neo4j cannot be read here:")
    assert "Traceback" not in refused.stderr and "hunter2" not in refused.stderr + refused.stdout
