"""LangGraph SqliteStore TTLs previewed by `retention`, on a store written by langgraph itself with a
ttl config: each item's expires_at is the owner's, what is past it is what LangGraph's own sweep
deletes, and a read that refreshes the TTL moves the preview."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from helpers.cli_runs import run, run_json
from helpers.owners import require, run_owner
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.retention import CLEAN_UP
from mnemoscope.storage.timeutil import parse_time

require("langgraph.store.sqlite")

SETUP = """
import sqlite3, time
from langgraph.store.sqlite import SqliteStore
def open_lg(path):
    con = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    store = SqliteStore(con, ttl={"default_ttl": 60, "refresh_on_read": True})
    store.setup()
    return store
"""

BUILD = SETUP + """
store = open_lg(path)
store.put(("memories", "dana"), "call", {"text": "Dana is on a call until noon"})  # the default TTL: 60 minutes
store.put(("memories", "dana"), "trip", {"text": "Dana is travelling to Lisbon"}, ttl=60 * 24 * 10)
store.put(("memories", "dana"), "later", {"text": "Dana's lease ends in spring"}, ttl=60 * 24 * 60)
store.put(("memories", "dana"), "tea", {"text": "Dana likes tea"}, ttl=None)
store.put(("scratch",), "draft", {"text": "An old draft reply"}, ttl=0.001)
# past the next whole second: LangGraph's sweep compares with SQLite's CURRENT_TIMESTAMP, which
# has none of the second's fractions (a sweep within the same second deletes nothing)
time.sleep(1.1)
print(json.dumps("ok"))
"""

SWEEP = SETUP + """
store = open_lg(path)
before = {k for (k,) in store.conn.execute("SELECT key FROM store")}
store.sweep_ttl()
after = {k for (k,) in store.conn.execute("SELECT key FROM store")}
print(json.dumps(sorted(before - after)))
"""

READ = SETUP + """
store = open_lg(path)
store.get(("memories", "dana"), "trip")
print(json.dumps(store.conn.execute("SELECT expires_at FROM store WHERE key = 'trip'").fetchone()[0]))
"""


@pytest.fixture
def lg_store(tmp_path: Path) -> Path:
    path = tmp_path / "agent" / "store.sqlite"
    path.parent.mkdir()
    run_owner(BUILD, path=str(path))
    return path


def _ids(path: Path, *keys: str) -> list[str]:
    return [f"lg:{path.name}:{key}" for key in keys]


def test_items_with_a_ttl_are_listed_by_their_expires_at_overdue_first(lg_store: Path) -> None:
    with open_store(lg_store.parent) as store:
        upcoming = store.retention(timedelta(days=30))
        assert [u.record_id for u in upcoming] == _ids(lg_store, "scratch/draft", "memories.dana/call",
                                                       "memories.dana/trip")
        assert store.retention_kept() == {"LangGraph": True}
    draft, call, trip = upcoming
    now = datetime.now(timezone.utc)
    assert draft.when < now < call.when < now + timedelta(minutes=61) < trip.when < now + timedelta(days=10, minutes=1)
    assert {u.action for u in upcoming} == {CLEAN_UP} and {u.owner for u in upcoming} == {"LangGraph"}
    assert call.preview == "Dana is on a call until noon"
    assert "60 minutes" in call.rule and "14400 minutes" in trip.rule
    assert "refresh_on_read" in call.rule and "sweep_ttl" in call.rule
    # The item without a TTL and the one due in 60 days are not within 30 days; 90 days reach the latter.
    with open_store(lg_store.parent) as store:
        assert _ids(lg_store, "memories.dana/later")[0] in [u.record_id for u in store.retention(timedelta(days=90))]
        assert _ids(lg_store, "memories.dana/tea")[0] not in [u.record_id for u in store.retention(timedelta(days=3650))]


def test_what_is_overdue_is_what_langgraphs_sweep_deletes(lg_store: Path) -> None:
    with open_store(lg_store.parent) as store:
        overdue = [u.record_id for u in store.retention(timedelta(0))]
    assert overdue == _ids(lg_store, "scratch/draft")
    assert run_owner(SWEEP, path=str(lg_store)) == ["draft"]


def test_a_read_that_refreshes_the_ttl_moves_the_preview(lg_store: Path) -> None:
    with open_store(lg_store.parent) as store:
        before = next(u for u in store.retention(timedelta(days=30)) if u.record_id.endswith("/trip"))
    refreshed = parse_time(run_owner(READ, path=str(lg_store)))
    with open_store(lg_store.parent) as store:
        after = next(u for u in store.retention(timedelta(days=30)) if u.record_id.endswith("/trip"))
    assert after.when == refreshed and after.when >= before.when.replace(microsecond=0)


def test_the_cli_lists_them_and_says_what_has_no_ttl(lg_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    listed = run_json(capsys, "retention", lg_store.parent)
    assert [u["id"] for u in listed["upcoming"]] == _ids(lg_store, "scratch/draft", "memories.dana/call",
                                                         "memories.dana/trip")
    code, out, _ = run(capsys, "retention", lg_store.parent, "--within", "12h")
    assert code == 0
    assert "clean up" in out and "Dana is on a call until noon" in out and "Dana is travelling" not in out
    assert "(overdue by" in out and re.search(r"\(in 5\d minutes\)", out)
    assert "LangGraph: a get or search refreshes it when the store's ttl config has refresh_on_read" in out


CHECKPOINTS_ONLY = """
import sqlite3
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.base import empty_checkpoint
saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
cp = empty_checkpoint()
cp["channel_values"] = {"todo": "book flights"}
cp["channel_versions"] = {"todo": 1}
saver.put({"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}, cp, {"source": "loop", "step": 0}, {"todo": 1})
print(json.dumps("ok"))
"""


def test_a_file_of_checkpoints_only_keeps_no_ttl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "threads"
    root.mkdir()
    run_owner(CHECKPOINTS_ONLY, path=str(root / "checkpoints.sqlite"))
    with open_store(root) as store:
        assert store.retention(timedelta(days=3650)) == [] and store.retention_kept() == {"LangGraph": False}
    code, out, _ = run(capsys, "retention", root)
    assert (code, out.strip()) == (0, "LangGraph keeps no expiry or retention rule")
