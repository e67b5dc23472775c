"""mnemoscope retention: the table of what each owner will expire, archive or clean up, and the two
lines that tell apart a store whose owner expires nothing from one where nothing is due yet."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli_runs import run, run_json
from helpers.owners import require, run_owner
from helpers.redis_server import RUST_CHAT, RUST_SESSION, agentx_redis, redis_server  # noqa: F401 (fixtures)

NO_TTL = """
import sqlite3
from langgraph.store.sqlite import SqliteStore
store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
store.setup()
store.put(("memories", "dana"), "tea", {"text": "Dana likes tea"})
store.put(("memories", "dana"), "trip", {"text": "Dana is travelling"}, ttl=60 * 24 * 45)
print(json.dumps("ok"))
"""


def test_a_store_whose_owner_expires_nothing_says_so(demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "retention", demo_path)
    assert code == 0
    assert out.strip() == "Mnemoscope workspace keeps no expiry or retention rule"
    data = run_json(capsys, "retention", demo_path, "--within", "7d")
    assert data["upcoming"] == [] and data["within"] == "7 days"
    assert data["owners"] == [{"format": "Mnemoscope workspace", "keeps_rule": False}]


def test_nothing_due_within_the_window_is_not_the_same_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("langgraph.store.sqlite")
    root = tmp_path / "agent"
    root.mkdir()
    run_owner(NO_TTL, path=str(root / "store.sqlite"))
    code, out, _ = run(capsys, "retention", root)
    assert (code, out.strip()) == (0, "nothing expires within 30 days")
    code, out, _ = run(capsys, "retention", root, "--within", "2w")
    assert (code, out.strip()) == (0, "nothing expires within 2 weeks")
    code, out, _ = run(capsys, "retention", root, "--within", "50d")
    assert code == 0 and "Dana is travelling" in out and "Dana likes tea" not in out and "in 44 days" in out


def test_a_window_that_is_not_a_duration_is_a_usage_error(demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run(capsys, "retention", demo_path, "--within", "soon")
    assert exited.value.code == 2
    assert "not a duration: 'soon'" in capsys.readouterr().err


def test_agentx_redis_ttls_are_picked_up_with_no_change_here(agentx_redis, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    listed = run_json(capsys, "retention", agentx_redis.url, "--within", "15m")
    assert [u["id"] for u in listed["upcoming"]] == [f"consolidation:lock:{RUST_CHAT}", f"{RUST_SESSION}:context:current_file"]
    assert listed["owners"] == [{"format": "AgentX working memory (Redis)", "keeps_rule": True}]
    code, out, _ = run(capsys, "retention", agentx_redis.url, "--within", "15m")
    assert code == 0 and "Redis TTL (set by AgentX: consolidation job tracking and locks)" in out
