"""app/commands/read.py: ls, show, search, timeline, graph, scratchpad and salience on the demo
workspace; scratchpad --set / --delete through the command line: one journaled step each, undone
by `mnemoscope undo`, refused with exit code 1 where the scratchpad cannot be written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from formats.test_agenticx import build_agenticx_home, load_scratchpad
from helpers.cli_runs import run, run_json
from helpers.owners import require, run_owner
from helpers.store_state import sql_rows, state_of
from mnemoscope.app.cli import main

MEMORY_FIELDS = {
    "id", "content", "layer", "channel", "source", "created_at", "updated_at",
    "last_accessed", "access_count", "salience", "status",
}


def pad(root: Path, session_id: str) -> dict[str, str]:
    return dict(sql_rows(root, "SELECT key, value FROM scratchpad WHERE session_id = ?", session_id))


@pytest.fixture
def session(capsys, demo_path: Path) -> str:
    return run_json(capsys, "sessions", demo_path)["sessions"][0]["id"]


def test_set_add_delete_and_undo_on_a_native_workspace(capsys, demo_path: Path, session: str) -> None:
    before = state_of(demo_path)
    old_todo = pad(demo_path, session)["todo"]
    edited = run_json(capsys, "scratchpad", demo_path, "--session", session, "--set", 'todo={"open": [], "done": 9}',
                      "--expect-value", old_todo)
    assert edited["operation"] == "edit" and edited["seq"] > 0
    assert edited["details"] == {"session_id": session, "key": "todo", "from": old_todo, "to": '{"open": [], "done": 9}'}
    code, out, err = run(capsys, "scratchpad", demo_path, "--session", session, "--set", "owner=Dana = the lead")
    assert code == 0, err
    assert out.startswith(f"added owner of session {session} (journal #") and "now: Dana = the lead" in out
    run_json(capsys, "scratchpad", demo_path, "--session", session, "--set", "retries=3")
    deleted = run_json(capsys, "scratchpad", demo_path, "--session", session, "--delete", "__taskspace_hint__")
    assert deleted["operation"] == "delete" and deleted["details"]["to"] is None

    rows = pad(demo_path, session)
    assert json.loads(rows["todo"]) == {"open": [], "done": 9}
    assert rows["owner"] == "Dana = the lead" and rows["retries"] == "3" and "__taskspace_hint__" not in rows
    shown = run_json(capsys, "scratchpad", demo_path, "--session", session)["sessions"][0]["entries"]
    assert {e["key"]: e["json"] for e in shown}["todo"] == {"open": [], "done": 9}
    history = run_json(capsys, "history", demo_path)["entries"]
    assert [e["operation"] for e in history] == ["delete", "edit", "edit", "edit"]

    for _ in range(4):
        run_json(capsys, "undo", demo_path)
    assert state_of(demo_path) == before
    run_json(capsys, "redo", demo_path)
    assert json.loads(pad(demo_path, session)["todo"]) == {"open": [], "done": 9}


def test_refused_changes_exit_1_and_write_nothing(capsys, demo_path: Path, session: str) -> None:
    before = state_of(demo_path)
    refused = [
        (["--set", "todo=[]", "--expect-value", "not what it holds"], "todo of session .* changed since it was read"),
        (["--delete", "no_such_key"], "has no scratchpad key no_such_key"),
        (["--set", "todo=[]", "--read-only"], "opened read-only"),
        (["--set", "__taskspace_hint__=~/work/webshop"], "already holds that value"),
    ]
    for extra, message in refused:
        code, out, err = run(capsys, "scratchpad", demo_path, "--session", session, *extra)
        assert code == 1 and out == "", (extra, err)
        assert re.search(message, err), (extra, err)
    code, _, err = run(capsys, "scratchpad", demo_path, "--session", "s-none", "--set", "k=v")
    assert code == 1 and "No session s-none" in err
    for argv, message in [
        (["--set", "k=v"], "Give the session"),
        (["--session", session, "--set", "no-equals-sign"], "KEY=VALUE"),
        (["--session", session, "--set", "=value"], "KEY=VALUE"),
        (["--session", session, "--expect-value", "x"], "goes with --set or --delete"),
    ]:
        code, _, err = run(capsys, "scratchpad", demo_path, *argv)
        assert code == 2 and message in err, (argv, err)
    assert state_of(demo_path) == before
    assert run_json(capsys, "history", demo_path)["entries"] == []


def test_agenticx_scratchpad_through_the_cli_as_agenticx_reads_it(capsys, tmp_path: Path) -> None:
    home = build_agenticx_home(tmp_path)
    db = home / "memory" / "sessions.sqlite"
    original = load_scratchpad(db, "s1")
    code, _, err = run(capsys, "scratchpad", home, "--session", "s1", "--set", 'subagent_result::a1={"status": "done", "n": 4}')
    assert code == 0 and "whole scratchpad" in err  # AgenticX's note: edit while the session is closed
    run_json(capsys, "scratchpad", home, "--session", "s1", "--set", "count=7")
    run_json(capsys, "scratchpad", home, "--session", "s1", "--delete", "legacy_note")
    now = load_scratchpad(db, "s1")
    assert now["subagent_result::a1"] == {"status": "done", "n": 4} and now["count"] == 7 and "legacy_note" not in now
    code, _, err = run(capsys, "scratchpad", home, "--session", "s1", "--set", "todos=[]")
    assert code == 1 and "todo list" in err
    for _ in range(3):
        run_json(capsys, "undo", home)
    assert load_scratchpad(db, "s1") == original


AGENTS_SESSION = """
import asyncio
from agents import SQLiteSession
async def main():
    await SQLiteSession("trip-1", db).add_items([{"role": "user", "content": "Find a quiet hotel in Porto"}])
asyncio.run(main())
print(json.dumps("ok"))
"""


def test_a_scratchpad_mnemoscope_only_reads_is_refused(capsys, tmp_path: Path) -> None:
    require("agents")
    db = tmp_path / "agent.db"
    run_owner(AGENTS_SESSION, db=str(db))
    before = db.read_bytes()
    code, out, err = run(capsys, "scratchpad", db, "--session", "trip-1", "--set", "k=v")
    assert code == 1 and out == ""
    assert "whose scratchpad Mnemoscope only reads" in err
    assert db.read_bytes() == before


def test_ls_filters_and_orders_in_the_store(capsys, demo_path: Path) -> None:
    data = run_json(capsys, "ls", demo_path, "--channel", "rust-cli", "--kind", "sqlite", "--order", "salience", "--limit", "5")
    memories = data["memories"]
    assert len(memories) == 5 and data["total"] > 5
    assert all(m["channel"] == "rust-cli" and m["source"]["kind"] == "sqlite" for m in memories)
    assert [m["salience"] for m in memories] == sorted((m["salience"] for m in memories), reverse=True)
    assert MEMORY_FIELDS <= set(memories[0])
    page2 = run_json(capsys, "ls", demo_path, "--channel", "rust-cli", "--kind", "sqlite", "--order", "salience", "--limit", "5", "--offset", "5")
    assert not {m["id"] for m in memories} & {m["id"] for m in page2["memories"]}


def test_ls_since_until_and_layers_across_kinds(capsys, demo_path: Path) -> None:
    data = run_json(capsys, "ls", demo_path, "--layer", "episodic", "--since", "2026-10-01", "--until", "2026-10-08", "--limit", "500")
    assert data["total"] == len(data["memories"]) > 0
    assert {m["source"]["kind"] for m in data["memories"]} >= {"markdown"}
    assert all("2026-10-01" <= m["created_at"][:10] < "2026-10-08" for m in data["memories"])


def test_show_has_provenance_copies_and_history(capsys, demo_path: Path) -> None:
    mid = run_json(capsys, "ls", demo_path, "--kind", "sqlite", "--contains", "feature flags")["memories"][0]["id"]
    run_json(capsys, "edit", demo_path, mid, "--salience", "0.5")
    shown = run_json(capsys, "show", demo_path, mid)
    assert shown["copies"][0]["kind"] == "chroma"
    assert shown["history"][0]["operation"] == "edit"
    assert shown["promotion"]["all_met"] is True
    code, out, _ = run(capsys, "show", demo_path, mid)
    assert code == 0 and "history:" in out and mid in out


def test_search_modes(capsys, demo_path: Path) -> None:
    keyword = run_json(capsys, "search", demo_path, "Stripe payments", "--mode", "keyword")
    assert keyword["mode"] == "keyword" and "Stripe" in keyword["hits"][0]["content"]
    vector = run_json(capsys, "search", demo_path, "Stripe payments", "--mode", "vector")
    assert vector["mode"] == "vector" and vector["hits"]
    hybrid = run_json(capsys, "search", demo_path, "Stripe payments", "--k", "3")
    # The one memory about Stripe is the one match, listed alone: no confident noise under it.
    assert hybrid["mode"] == "hybrid" and hybrid["matched"] == 1 and len(hybrid["hits"]) == 1
    assert "Stripe" in hybrid["hits"][0]["content"] and hybrid["hits"][0]["strength"] == "strong"
    decision = run_json(capsys, "search", demo_path, "keep the public API stable", "--k", "1")["hits"][0]
    like = run_json(capsys, "search", demo_path, "--like", decision["id"], "--k", "2")
    assert len(like["hits"]) == 2 and decision["id"] not in {h["id"] for h in like["hits"]}
    assert all("keep the public API stable" in h["content"] for h in like["hits"])


def test_vector_search_without_vectors_says_it_fell_back(capsys, markdown_only: Path) -> None:
    code, out, err = run(capsys, "search", markdown_only, "Whiskerino", "--mode", "vector")
    assert code == 0
    assert "no vector collection" in err and "keyword" in err
    assert "Whiskerino" in out


def test_timeline_graph_scratchpad_salience(capsys, demo_path: Path, tmp_path: Path) -> None:
    timeline = run_json(capsys, "timeline", demo_path, "--bin", "week", "--group-by", "layer")
    assert sum(b["memories"] for b in timeline["bins"]) == run_json(capsys, "info", demo_path)["total"]
    assert sum(b["turns"] for b in timeline["bins"]) == run_json(capsys, "info", demo_path)["tables"]["turns"]
    busiest = max(timeline["bins"], key=lambda b: b["memories"])
    listed = run_json(capsys, "timeline", demo_path, "--bin", "week", "--events", busiest["bin"])["events"]["memories"]
    assert len(listed) == busiest["memories"]
    assert [m["created_at"] for m in listed] == sorted(m["created_at"] for m in listed)
    graphml = tmp_path / "g.graphml"
    graph = run_json(capsys, "graph", demo_path, "--center", "Dana Okafor", "--depth", "1", "--graphml", graphml)
    assert graph["center"] == "e-dana" and {n["id"] for n in graph["nodes"]} >= {"e-dana", "e-priya"}
    assert graphml.read_text().startswith("<?xml")
    two = run_json(capsys, "graph", demo_path, "--center", "Dana Okafor", "--depth", "2")
    assert len(two["nodes"]) > len(graph["nodes"])
    pad = run_json(capsys, "scratchpad", demo_path)
    keys = {e["key"]: e for s in pad["sessions"] for e in s["entries"]}
    patterns = {e["pattern"] for e in keys.values()}
    assert {"subagent_result", "delegation_result", "session_facts", "pending_subagent_summaries", "taskspace_hint"} <= patterns
    one = run_json(capsys, "scratchpad", demo_path, "--session", pad["sessions"][0]["id"])
    assert len(one["sessions"]) == 1
    overview = run_json(capsys, "salience", demo_path, "--at", "2026-11-01")
    active = run_json(capsys, "info", demo_path)["counts"]["statuses"]["active"]
    assert sum(b["count"] for b in overview["histogram"]) + overview["without_salience"] == active
    # every active memory that keeps a salience: memory.db's rows (the workspace markdown keeps none)
    listed = run_json(capsys, "ls", demo_path, "--limit", "10000")["memories"]
    assert sum(b["count"] for b in overview["histogram"]) == len([m for m in listed if m["salience"] is not None])
    assert {m["salience"] for m in listed if m["source"]["kind"] == "markdown"} == {None}
    risk = overview["at_risk"][0]
    single = run_json(capsys, "salience", demo_path, risk["id"], "--at", "2026-11-01")
    assert single["effective"] == risk["effective"]
    assert single["crosses_threshold_at"] is not None


def test_dates_are_parsed_or_refused_by_the_parser(capsys, demo_path: Path) -> None:
    import argparse

    from mnemoscope.app.commands.read import date_argument

    assert date_argument("2026-10-01").isoformat().startswith("2026-10-01")
    with pytest.raises(argparse.ArgumentTypeError, match="not a date: 'yesterday-ish'"):
        date_argument("yesterday-ish")
    with pytest.raises(SystemExit):
        main(["ls", str(demo_path), "--since", "yesterday-ish"])
    assert "not a date" in capsys.readouterr().err


def test_read_commands_open_the_store_read_only(capsys, demo_path: Path) -> None:
    from mnemoscope.app.cli import build_parser
    from mnemoscope.app.commands import read

    before = state_of(demo_path)
    parser = build_parser()
    for argv in (["info"], ["ls"], ["sessions"], ["history"], ["timeline"], ["salience"], ["scratchpad"]):
        args = parser.parse_args([argv[0], str(demo_path), "--json"])
        assert args.looks_only and args.handler is getattr(read, f"cmd_{argv[0]}")
        assert args.handler(args) == 0
        json.loads(capsys.readouterr().out)
    assert state_of(demo_path) == before
