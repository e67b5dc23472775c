"""scratchpad --set / --delete through the command line: one journaled step each, undone by
`mnemoscope undo`, refused with exit code 1 where the scratchpad cannot be written."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from formats.test_agenticx import build_agenticx_home, load_scratchpad
from helpers.owners import require, run_owner
from helpers.store_state import sql_rows, state_of
from mnemoscope.app.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


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
