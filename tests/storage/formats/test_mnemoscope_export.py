"""Mnemoscope's own JSONL export, read back: `import` restores what `export` wrote, and the
file itself opens read-only."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from helpers.cli_runs import run

KEPT = ("content", "layer", "channel", "tags", "provenance", "status", "created_at", "updated_at",
        "last_accessed", "access_count", "salience", "confidence", "conversations")


def exported(capsys: pytest.CaptureFixture[str], store: Path, out: Path) -> list[dict]:
    code, _out, err = run(capsys, "export", store, out, "--format", "jsonl")
    assert code == 0, err
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def as_kept(memories: list[dict]) -> Counter[str]:
    """Each memory as the fields a round trip keeps, metadata without the store's own copy state."""
    def kept(m: dict) -> str:
        # A field the exported memory's store did not keep (null) comes back as memory.db starts a
        # new memory's, named in fields_not_kept: as the export held it, it is null.
        not_kept = m["metadata"].get("fields_not_kept", ())
        m = {**m, **dict.fromkeys(not_kept)}
        metadata = {k: v for k, v in m["metadata"].items() if k not in ("vector_state", "md_file", "fields_not_kept")}
        return json.dumps([m[f] for f in KEPT] + [metadata], sort_keys=True)

    return Counter(kept(m) for m in memories)


def test_export_then_import_reproduces_every_memory(capsys, demo_path: Path, tmp_path: Path) -> None:
    with sqlite3.connect(demo_path / "memory.db") as con:
        rows = [r[0] for r in con.execute("SELECT id FROM memories WHERE channel != '_global' ORDER BY id LIMIT 3")]
    # Curated first, so that statuses, tags and provenance differ from the defaults.
    assert run(capsys, "promote", demo_path, rows[0], "--force")[0] == 0
    assert run(capsys, "rm", demo_path, rows[1])[0] == 0
    assert run(capsys, "edit", demo_path, rows[2], "--tag", "billing", "--tag", "kept")[0] == 0
    before = exported(capsys, demo_path, tmp_path / "before.jsonl")
    assert {m["status"] for m in before} >= {"active", "deleted"}
    assert any(m["provenance"]["promoted_from"] for m in before) and any(m["tags"] == ["billing", "kept"] for m in before)

    code, _out, err = run(capsys, "import", tmp_path / "before.jsonl", tmp_path / "restored")
    assert code == 0, err
    after = exported(capsys, tmp_path / "restored", tmp_path / "after.jsonl")

    assert len(after) == len(before)
    assert as_kept(after) == as_kept(before)
    # memory.db rows keep their ids (promotion provenance and the journal name them)
    rows_before = {m["id"] for m in before if m["source"]["kind"] == "sqlite"}
    assert rows_before and rows_before <= {m["id"] for m in after}

    code, out, _err = run(capsys, "import", tmp_path / "before.jsonl", tmp_path / "restored", "--json")
    assert code == 0 and json.loads(out)["imported"] == 0  # a second run adds nothing


def test_an_export_opens_read_only_and_names_the_lines_it_left_out(capsys, demo_path: Path, tmp_path: Path) -> None:
    export = tmp_path / "all.jsonl"
    memories = exported(capsys, demo_path, export)
    with open(export, "a", encoding="utf-8") as handle:
        handle.write("{not json\n")
        handle.write(json.dumps({"id": "m-x", "content": "no layer"}) + "\n")
    code, out, err = run(capsys, "info", export, "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["total"] == len(memories)
    problems = info["formats"][0]["problems"]
    last = len(memories)
    assert [p.split(" ", 1)[0] for p in problems] == [f"all.jsonl:{last + 1}", f"all.jsonl:{last + 2}"]

    before = export.read_bytes()
    code, _out, err = run(capsys, "rm", export, memories[0]["id"])
    assert code != 0 and "cannot be changed: an export is a copy" in err
    assert export.read_bytes() == before


def test_a_jsonl_file_of_something_else_is_not_taken_for_an_export(capsys, tmp_path: Path) -> None:
    other = tmp_path / "events.jsonl"
    other.write_text(json.dumps({"id": 1, "event": "login"}) + "\n", encoding="utf-8")
    code, _out, err = run(capsys, "ls", other)
    assert code == 2 and "Nothing recognisable" in err
