"""Mnemoscope's CSV export (the window's File > Export) read back: `import` restores what the CSV
holds; the markdown export is a document, not read back."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

from helpers.cli_runs import run
from mnemoscope.storage import Memory, MemoryQuery, open_store
from mnemoscope.storage.formats.mnemoscope_export import CSV_HEADER
from mnemoscope.storage.transfer import CSV_FIELDS, export_memories, iter_memories

# What a CSV row holds (CSV_FIELDS but the id: memories come back under new ids)
KEPT = ("content", "layer", "channel", "tags", "status", "created_at", "updated_at", "last_accessed",
        "access_count", "salience", "confidence")


def kept(path: Path) -> Counter[str]:
    """Each memory's kept fields; one its first store did not keep (memory.db names it in
    fields_not_kept, having started it as a new memory's) as that store held it: null."""
    def fields(m: Memory) -> list[object]:
        d = {**m.to_dict(), **dict.fromkeys(m.metadata.get("fields_not_kept", ()))}
        return [d[f] for f in KEPT]

    with open_store(path, read_only=True) as store:
        return Counter(json.dumps(fields(m), sort_keys=True, default=str)
                       for m in iter_memories(store, MemoryQuery(statuses=())))


def test_the_reader_knows_the_columns_the_csv_export_writes() -> None:
    assert CSV_HEADER == CSV_FIELDS


def test_csv_export_then_import_reproduces_what_the_csv_holds(capsys, demo_path: Path, tmp_path: Path) -> None:
    with sqlite3.connect(demo_path / "memory.db") as con:
        rows = [r[0] for r in con.execute("SELECT id FROM memories WHERE channel != '_global' ORDER BY id LIMIT 2")]
    assert run(capsys, "rm", demo_path, rows[0])[0] == 0  # statuses and tags other than the defaults
    assert run(capsys, "edit", demo_path, rows[1], "--tag", "billing", "--tag", "kept")[0] == 0
    out = tmp_path / "memories.csv"
    with open_store(demo_path, read_only=True) as store, open(out, "w", encoding="utf-8", newline="") as handle:
        written = export_memories(iter_memories(store), handle, "csv", "demo")
    assert written > 100

    code, shown, err = run(capsys, "info", out, "--json")
    assert code == 0, err
    info = json.loads(shown)
    assert info["total"] == written and info["formats"][0]["label"] == "Mnemoscope CSV export"

    code, _out, err = run(capsys, "import", out, tmp_path / "restored")
    assert code == 0, err
    assert kept(tmp_path / "restored") == kept(demo_path)
    code, shown, _err = run(capsys, "import", out, tmp_path / "restored", "--json")
    assert code == 0 and json.loads(shown)["imported"] == 0  # a second run adds nothing


def test_a_csv_of_other_columns_is_not_taken_for_an_export(capsys, tmp_path: Path) -> None:
    other = tmp_path / "people.csv"
    other.write_text("name,email\nAna,ana@example.org\n", encoding="utf-8")
    assert run(capsys, "info", other)[0] == 2
