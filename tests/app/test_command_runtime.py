"""app/command_runtime.py: what every command's handler shares, on the demo workspace: the store
opened read-only for a command that only looks, the result as JSON or text, messages on one line
with a URL's password scrubbed."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pytest
from helpers.store_state import state_of
from mnemoscope.app import command_runtime as runtime
from mnemoscope.storage import Kind, MemoryQuery, Status


def namespace(path: Path | str, **given: object) -> argparse.Namespace:
    values: dict[str, object] = {"path": path, "json": False, "read_only": False, "vectors": None,
                                 "password_stdin": False, "looks_only": False}
    return argparse.Namespace(**{**values, **given})


def test_a_looking_command_opens_read_only_unless_it_is_writing(demo_path: Path) -> None:
    with runtime.open_store_of(namespace(demo_path, looks_only=True)) as store:
        assert store.read_only
    with runtime.open_store_of(namespace(demo_path, looks_only=True), writing=True) as store:
        assert not store.read_only
    with runtime.open_store_of(namespace(demo_path)) as store:
        assert not store.read_only
    for args, kwargs in ((namespace(demo_path, read_only=True), {}), (namespace(demo_path), {"read_only": True})):
        with runtime.open_store_of(args, **kwargs) as store:
            assert store.read_only


def test_emit_prints_json_or_the_text_and_a_curation_step_its_notes(
    demo_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert runtime.emit(namespace(demo_path, json=True), {"ü": Path("/x")}, str) == 0
    assert json.loads(capsys.readouterr().out) == {"ü": "/x"}
    runtime.emit(namespace(demo_path), {"n": 1}, lambda data: f"n is {data['n']}")
    runtime.emit(namespace(demo_path), {}, lambda data: "")  # nothing to say: nothing printed
    assert capsys.readouterr().out == "n is 1\n"

    before = state_of(demo_path)
    with runtime.open_store_of(namespace(demo_path)) as store:
        target = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), limit=1)[0].id
        outcome = runtime.curator_of(store).reinforce([target])
    assert runtime.emit_outcome(namespace(demo_path), outcome) == 0
    out = capsys.readouterr().out
    assert out.startswith("reinforce done (journal #") and target in out
    assert state_of(demo_path) != before


def test_notes_go_to_stderr_unless_json(capsys: pytest.CaptureFixture[str]) -> None:
    runtime.note(namespace("x"), "fell back to keyword search")
    runtime.note(namespace("x", json=True), "not shown")
    out, err = capsys.readouterr()
    assert (out, err) == ("", "note: fell back to keyword search\n")


def test_statuses_of_the_status_words() -> None:
    assert runtime.statuses_of([]) == (Status.ACTIVE,)
    assert runtime.statuses_of(["deleted", "archived"]) == (Status.DELETED, Status.ARCHIVED)
    assert runtime.statuses_of(["active", "all"]) == ()


def test_messages_are_one_line_and_never_show_a_password(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    runtime.say("cannot reach\npostgresql://bob:hunter2@db.example/agents:   refused")
    err = capsys.readouterr().err
    assert err == "mnemoscope: cannot reach postgresql://bob@db.example/agents: refused\n"
    assert "hunter2" not in err
    with caplog.at_level(logging.INFO, logger="mnemoscope.cli"):
        runtime.log("opened postgresql://bob:hunter2@db.example/agents")
    assert [r.name for r in caplog.records] == ["mnemoscope.cli"] and "hunter2" not in caplog.text
    assert runtime.UsageError("bad").exit_code == runtime.EXIT_INPUT == 2 and runtime.EXIT_BUG == 3


def test_a_huge_word_in_a_message_is_shown_cut_with_its_length(capsys) -> None:
    from mnemoscope.app.command_runtime import say

    say("No memory m-" + "x" * 100_000 + " in /tmp/store.")
    err = capsys.readouterr().err
    assert err.startswith("mnemoscope: No memory m-xxxx") and err.endswith("…(100,002 characters) in /tmp/store.\n")
    assert len(err) < 200
