"""JSON read within bounds: a value nested too deep is one unreadable value, not a RecursionError
that fails every read of the store (issue 29's hostile rows), and its bytes survive curation."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from helpers.cli_runs import run
from mnemoscope.storage.bounded_json import MAX_DEPTH, TooDeep, loads


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_values_within_the_bound_load_as_json_does() -> None:
    assert loads(nested(MAX_DEPTH)) == json.loads(nested(MAX_DEPTH))
    text = json.dumps({"note": "[" * 500 + "{" * 500, "list": [[1], [2]]})  # brackets inside strings count for nothing
    assert loads(text) == json.loads(text)
    assert loads(b'{"k": [1, 2]}') == {"k": [1, 2]}
    with pytest.raises(json.JSONDecodeError):
        loads("{not json")


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_500, 100_000])
def test_deeper_values_are_refused_as_one_value(depth: int) -> None:
    with pytest.raises(TooDeep, match=f"deeper than {MAX_DEPTH}"):
        loads(nested(depth))
    with pytest.raises(TooDeep):
        loads("[" * depth + "]" * depth)
    with pytest.raises(json.JSONDecodeError) as caught:  # what every reader already takes as one bad value
        loads(nested(depth))
    assert str(caught.value) == f"nested deeper than {MAX_DEPTH} levels"


def test_a_memory_with_metadata_nested_thousands_deep_leaves_the_store_readable(demo_path: Path, capsys,
                                                                                tmp_path: Path) -> None:
    db = demo_path / "memory.db"
    with sqlite3.connect(db) as con:
        memory_id = con.execute("SELECT id FROM memories ORDER BY id LIMIT 1").fetchone()[0]
        con.execute("UPDATE memories SET metadata = ? WHERE id = ?", (nested(1_500), memory_id))
    con.close()

    def metadata_hash() -> str:
        with sqlite3.connect(db) as con:
            return hashlib.sha256(con.execute("SELECT metadata FROM memories WHERE id = ?",
                                              (memory_id,)).fetchone()[0].encode()).hexdigest()

    stored = metadata_hash()
    for argv in (["ls", demo_path, "--json", "--limit", "500"], ["show", demo_path, memory_id],
                 ["export", demo_path, tmp_path / "out.jsonl", "--format", "jsonl"],
                 ["search", demo_path, "home server", "--mode", "keyword"]):
        code, out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    code, out, _err = run(capsys, "show", demo_path, memory_id)
    assert f"nested deeper than {MAX_DEPTH} levels" in out
    for argv in (["edit", demo_path, memory_id, "--content", "edited"], ["rm", demo_path, memory_id],
                 ["undo", demo_path], ["undo", demo_path]):
        assert run(capsys, *argv)[0] == 0, argv
    assert metadata_hash() == stored  # never rewritten from what could not be read


def test_notes_of_unreadable_values_never_mix_with_what_the_agent_stored(demo_path: Path, capsys) -> None:
    db = demo_path / "memory.db"
    with sqlite3.connect(db) as con:
        first = con.execute("SELECT id FROM memories ORDER BY id LIMIT 1").fetchone()[0]
        second = con.execute("SELECT id FROM memories WHERE channel != '_global' AND id != ? ORDER BY id LIMIT 1",
                             (first,)).fetchone()[0]  # a project memory: one promote can copy to _global
        con.execute("UPDATE memories SET metadata = ?, salience = 'high' WHERE id = ?",
                    ('{"unreadable_values": "none"}', first))
        con.execute("UPDATE memories SET metadata = ?, tags = ? WHERE id = ?",
                    ('{"source": "agent", "x": ' + "[" * 100 + "]" * 100 + "}", "[" * 100 + "]" * 100, second))
    con.close()
    for argv in (["show", demo_path, first], ["ls", demo_path, "--limit", "100"],
                 ["export", demo_path, demo_path / "out.jsonl", "--format", "jsonl"]):
        assert run(capsys, *argv)[0] == 0, argv
    code, out, _err = run(capsys, "promote", demo_path, second, "--force")
    assert code == 0
    with sqlite3.connect(db) as con:
        original, copy = (con.execute("SELECT metadata FROM memories WHERE id = ? OR promoted_from = ? ORDER BY "
                                      "promoted_from IS NOT NULL", (second, second)).fetchall())
    con.close()
    assert copy == original  # copied as stored, not as the note shown in its place
