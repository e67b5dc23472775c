"""app/commands/curate.py: promote, edit, rm, restore, reinforce, undo and redo through the command
line, several ids or a --match-* filter as one undoable step, promotion thresholds."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli_runs import run, run_json
from helpers.markdown_ids import md_id
from helpers.store_state import sql_rows, state_of


def test_curation_round_trip_through_the_cli(capsys, demo_path: Path) -> None:
    before = state_of(demo_path)
    mid = run_json(capsys, "ls", demo_path, "--kind", "sqlite", "--contains", "feature flags")["memories"][0]["id"]
    promoted = run_json(capsys, "promote", demo_path, mid, "--reason", "asked twice")["ids"][0]
    assert run_json(capsys, "show", demo_path, promoted)["provenance"]["promoted_from"] == mid
    run_json(capsys, "edit", demo_path, promoted, "--content", "Dana prefers feature flags.", "--tag", "pref")
    run_json(capsys, "rm", demo_path, promoted)
    assert run_json(capsys, "show", demo_path, promoted)["status"] == "deleted"
    run_json(capsys, "restore", demo_path, promoted)
    run_json(capsys, "reinforce", demo_path, promoted)
    history = run_json(capsys, "history", demo_path)["entries"]
    assert [e["operation"] for e in history] == ["reinforce", "restore", "delete", "edit", "promote"]
    for _ in range(5):
        run_json(capsys, "undo", demo_path)
    assert state_of(demo_path) == before
    code, _, err = run(capsys, "undo", demo_path)
    assert code == 1 and err.strip() == "mnemoscope: Nothing to undo."


def test_rm_of_several_ids_or_a_filter_is_one_undoable_step(capsys, demo_path: Path) -> None:
    ids = [md_id(demo_path, "USER.md", 3), *[r[0] for r in sql_rows(demo_path, "SELECT id FROM memories ORDER BY id LIMIT 2")]]
    before = state_of(demo_path)
    done = run_json(capsys, "rm", demo_path, *ids)
    assert done["ids"] == ids
    history = run_json(capsys, "history", demo_path)
    assert [e["operation"] for e in history["entries"]][:1] == ["delete"]
    run_json(capsys, "undo", demo_path)
    assert state_of(demo_path) == before
    code, _, err = run(capsys, "rm", demo_path, ids[0], "--match-channel", "webshop")
    assert code == 2 and "not both" in err
    matched = run_json(capsys, "rm", demo_path, "--match-channel", "webshop")
    assert len(matched["ids"]) > 1
    assert run_json(capsys, "ls", demo_path, "--channel", "webshop")["total"] == 0


def test_promote_lists_candidates_and_needs_force_below_the_thresholds(capsys, demo_path: Path) -> None:
    """Seed 002's thresholds (confidence >= 0.85, access_count >= 5, conversations >= 2)."""
    listed = run_json(capsys, "promote", demo_path, "--candidates")
    assert listed["thresholds"] == {"confidence": 0.85, "access_count": 5, "conversations": 2}
    assert listed["candidates"] and all(c["promotion"]["all_met"] for c in listed["candidates"])
    assert all(c["channel"] != "_global" for c in listed["candidates"])

    rows = run_json(capsys, "ls", demo_path, "--kind", "sqlite", "--limit", "300")["memories"]
    below = next(m for m in rows if m["channel"] != "_global" and m["access_count"] < 5)
    before = state_of(demo_path)
    code, _out, err = run(capsys, "promote", demo_path, below["id"])
    assert code == 1 and f"access_count {below['access_count']} < 5" in err and "--force" in err
    assert state_of(demo_path) == before

    promoted = run_json(capsys, "promote", demo_path, below["id"], "--force")["ids"][0]
    entry = run_json(capsys, "history", demo_path)["entries"][0]
    assert entry["details"]["forced"] is True and f"access_count {below['access_count']} < 5" in entry["details"]["failed"]
    assert run_json(capsys, "show", demo_path, below["id"])["status"] == "active"  # the original stays
    assert run_json(capsys, "show", demo_path, promoted)["provenance"]["promoted_from"] == below["id"]


def test_selected_takes_ids_or_a_filter_never_both(demo_path: Path) -> None:
    import argparse

    from mnemoscope.app.command_runtime import UsageError
    from mnemoscope.app.commands.curate import selected, selection_arguments
    from mnemoscope.storage import MemoryQuery, NotFoundError, Status, open_store

    parser = argparse.ArgumentParser()
    parser.add_argument("id", nargs="*")
    selection_arguments(parser)
    with open_store(demo_path, read_only=True) as store:
        assert selected(parser.parse_args(["m-1", "m-2"]), store) == ["m-1", "m-2"]
        webshop = selected(parser.parse_args(["--match-channel", "webshop"]), store)
        assert len(webshop) == store.count(MemoryQuery(channels=("webshop",))) > 1
        with pytest.raises(NotFoundError, match="nothing was changed"):  # restore's default: deleted ones
            selected(parser.parse_args(["--match-channel", "webshop"]), store, Status.DELETED)
        with pytest.raises(UsageError, match="not both"):
            selected(parser.parse_args(["m-1", "--match-channel", "webshop"]), store)
        with pytest.raises(UsageError, match="Give one or more memory ids"):
            selected(parser.parse_args([]), store)
