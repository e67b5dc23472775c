"""A part of a store this install cannot read (CrewAI 1.x's LanceDB table without the crewai extra)
is said "unread: install mnemoscope[crewai]" by info, discover and every other command: never a
count of 0. lancedb is in the test venv; blocking its import stands in for an install without it
(tests/app/test_readme_install.py checks the same in a venv made as the README says)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from formats.test_crewai import build_crewai_storage, write_lance
from helpers.cli_runs import run, run_json

UNREAD = "unread: install mnemoscope[crewai]"


@pytest.fixture(autouse=True)
def without_lancedb(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("lancedb")  # to write the tables
    monkeypatch.setitem(sys.modules, "lancedb", None)


def lance_only(tmp_path: Path) -> Path:
    write_lance(tmp_path / "crew1x" / "memory")
    return tmp_path / "crew1x"


def test_a_store_of_nothing_but_a_lance_table_is_refused_by_every_command(capsys, tmp_path: Path):
    root = lance_only(tmp_path)
    for command in (["info"], ["ls"], ["search", "Mondays", "--mode", "keyword"], ["export", tmp_path / "out.jsonl", "--format", "jsonl"]):
        code, out, err = run(capsys, command[0], root, *command[1:])
        assert code == 2 and out == "", command
        assert err.startswith(f"mnemoscope: {UNREAD} (CrewAI unified memory (LanceDB) at {root}/memory/memories.lance"), err
        assert len(err.splitlines()) == 1
    assert not (tmp_path / "out.jsonl").exists()


def test_discover_shows_unread_where_the_count_would_be(capsys, tmp_path: Path):
    root = lance_only(tmp_path / "home")
    code, out, _ = run(capsys, "discover", tmp_path / "home")
    assert code == 0
    row = next(line for line in out.splitlines() if str(root) in line and "LanceDB" in line)
    assert f"  {UNREAD}  " in row and " 0 " not in row
    assert f"{root}: {UNREAD} (CrewAI unified memory (LanceDB)" in out
    [found] = run_json(capsys, "discover", tmp_path / "home")["stores"]
    assert found["memories"] is None and found["unread"][0].startswith(UNREAD)


def test_beside_what_is_read_info_discover_and_ls_say_the_rest_is_unread(capsys, tmp_path: Path):
    (tmp_path / "home").mkdir()
    root = build_crewai_storage(tmp_path / "home")
    write_lance(root / "memory")
    code, out, _ = run(capsys, "info", root)
    assert code == 0
    lines = out.splitlines()
    assert lines[2].startswith("  memories: 4 ") and lines[3].startswith(f"  {UNREAD} (CrewAI unified memory (LanceDB)")
    assert run_json(capsys, "info", root)["unread"][0]["extra"] == "crewai"
    code, out, _ = run(capsys, "discover", tmp_path / "home")
    assert f"4 + {UNREAD}" in out
    code, out, err = run(capsys, "ls", root)
    assert code == 0 and "(1-4 of 4)" in out
    assert err.startswith(f"note: {UNREAD} (CrewAI unified memory (LanceDB)")
    code, out, err = run(capsys, "ls", root, "--json")
    assert code == 0 and err == ""  # --json prints the document alone
