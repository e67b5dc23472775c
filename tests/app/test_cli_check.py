"""`mnemoscope check`: JSON shape, exit codes (0 clean, 1 inconsistent, 2 failed) and --repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mnemoscope.app.cli import main
from test_consistency import plant_damage


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_clean_store_exits_0(capsys, demo_path: Path) -> None:
    code, out, _ = run(capsys, "check", demo_path)
    assert code == 0
    assert "consistent" in out and "memory rows" in out


def test_findings_as_json_grouped_by_kind_exit_1(capsys, demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    before = (demo_path / "memory.db").read_bytes()
    code, out, _ = run(capsys, "check", demo_path, "--json")
    assert code == 1
    data = json.loads(out)
    assert data["clean"] is False and data["total"] == len(planted) and data["repair"] is None
    assert data["counts"] == dict.fromkeys(planted, 1)
    kinds = {k["kind"]: k for k in data["kinds"]}
    assert set(kinds) == set(planted)
    assert kinds["stale-fts"]["items"][0]["record"] == planted["stale-fts"]
    assert kinds["text-mismatch"]["advice"] and kinds["text-mismatch"]["by_default"] is False
    assert kinds["missing-vector"]["repairable"] is True and kinds["missing-vector"]["repair"]
    assert set(kinds["orphan-vector"]["items"][0]) == {"record", "memory_id", "detail", "source"}
    assert (demo_path / "memory.db").read_bytes() == before  # a check writes nothing


def test_human_output_names_each_kind_with_its_count_and_what_to_do(capsys, demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    code, out, _ = run(capsys, "check", demo_path)
    assert code == 1
    assert "missing-vector (1)" in out and "mnemoscope check --repair missing-vector" in out
    assert "text-mismatch (1)" in out and "advice: which text is right" in out
    assert "repair: mnemoscope check --repair text-mismatch (only by name, not --repair-all" in out
    assert planted["orphan-vector"] in out
    assert f"{len(planted)} inconsistencies" in out


def test_repair_one_kind_then_everything_safe_then_undo(capsys, demo_path: Path) -> None:
    planted = plant_damage(demo_path)
    code, out, _ = run(capsys, "check", demo_path, "--repair", "missing-fts", "stale-fts", "--json")
    data = json.loads(out)
    assert code == 1  # other kinds are left
    assert data["repair"]["operation"] == "repair" and data["repair"]["details"]["kinds"] == {"missing-fts": 1, "stale-fts": 1}
    assert data["found"]["counts"] == dict.fromkeys(planted, 1)
    assert set(data["counts"]) == set(planted) - {"missing-fts", "stale-fts"}

    code, out, _ = run(capsys, "check", demo_path, "--repair-all")
    assert code == 1  # what has no safe repair is still reported
    assert "`mnemoscope undo` reverts it" in out
    code, out, _ = run(capsys, "check", demo_path, "--json")
    assert code == 1 and set(json.loads(out)["counts"]) == {"text-mismatch"}

    # Which copy of the mismatched memory is right is asked for by name: the row's text, then clean.
    code, out, _ = run(capsys, "check", demo_path, "--repair", "text-mismatch", "--json")
    assert code == 0 and json.loads(out)["clean"] is True

    assert run(capsys, "undo", demo_path)[0] == 0  # the text-mismatch step
    code, out, _ = run(capsys, "check", demo_path, "--json")
    assert set(json.loads(out)["counts"]) == {"text-mismatch"}
    assert run(capsys, "undo", demo_path)[0] == 0  # the --repair-all step
    code, out, _ = run(capsys, "check", demo_path, "--json")
    assert set(json.loads(out)["counts"]) == set(planted) - {"missing-fts", "stale-fts"}


def test_repairing_everything_repairable_on_a_store_with_only_those_exits_0(capsys, demo_path: Path) -> None:
    import sqlite3

    con = sqlite3.connect(demo_path / "memory.db")
    with con:
        row = con.execute("SELECT rowid, content, tags FROM memories LIMIT 1").fetchone()
        con.execute("INSERT INTO memories_fts(memories_fts, rowid, content, tags) VALUES ('delete', ?, ?, ?)", row)
    con.close()
    assert run(capsys, "check", demo_path)[0] == 1
    code, out, _ = run(capsys, "check", demo_path, "--repair-all", "--json")
    assert code == 0 and json.loads(out)["clean"] is True


def test_errors_exit_2(capsys, demo_path: Path, tmp_path: Path) -> None:
    plant_damage(demo_path)
    code, _, err = run(capsys, "check", demo_path, "--repair", "vector-dimension")
    assert code == 2 and "not repaired automatically" in err
    code, _, err = run(capsys, "check", demo_path, "--repair", "no-such-kind")
    assert code == 2 and "No finding kind" in err
    code, _, err = run(capsys, "check", tmp_path / "missing")
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, "check", demo_path, "--read-only", "--repair-all")
    assert code == 2
