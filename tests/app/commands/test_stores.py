"""app/commands/stores.py. ``mnemoscope map``: a table of an unrecognised SQLite file proposed,
corrected, remembered, then opened; export and import; demo, discover and init."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from mnemoscope.app.cli import main


@pytest.fixture
def journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    db = tmp_path / "journal.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE entries (entry_no INTEGER PRIMARY KEY, said TEXT, noted TEXT, mood TEXT)")
    con.executemany("INSERT INTO entries (said, noted, mood) VALUES (?, ?, ?)", [
        ("The deploy key lives in the vault", "2026-01-03 09:00:00", "calm"),
        ("Never run migrations on Friday", "2026-01-04 17:30:00", "tense"),
    ])
    con.commit()
    con.close()
    return db


def run_json(capsys: pytest.CaptureFixture[str], *argv: object) -> dict:
    code = main([*map(str, argv), "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_map_shows_corrects_and_remembers_a_mapping(capsys, journal: Path) -> None:
    assert main(["ls", str(journal)]) == 2
    assert "mnemoscope map" in capsys.readouterr().err

    proposed = run_json(capsys, "map", str(journal))
    # No column is named for a time; "said" is the first text column.
    assert proposed["mapping"] == {"content": "said"}
    assert proposed["saved_to"] is None

    saved = run_json(capsys, "map", str(journal), "--map", "created=noted,category=mood,id=entry_no", "--save")
    assert saved["mapping"] == {"content": "said", "id": "entry_no", "category": "mood", "created": "noted"}
    assert saved["writable"] is True
    assert saved["preview"][0] == {"content": "The deploy key lives in the vault", "id": 1, "category": "calm",
                                   "created": "2026-01-03 09:00:00"}

    listed = run_json(capsys, "ls", str(journal), "--order", "created")
    assert [m["content"] for m in listed["memories"]] == [
        "Never run migrations on Friday", "The deploy key lives in the vault"
    ]
    assert listed["memories"][0]["tags"] == ["tense"]
    memory_id = listed["memories"][0]["id"]
    assert main(["edit", str(journal), memory_id, "--content", "Never run migrations on a Friday"]) == 0
    capsys.readouterr()
    con = sqlite3.connect(journal)
    assert con.execute("SELECT said FROM entries WHERE entry_no = 2").fetchone()[0] == "Never run migrations on a Friday"
    con.close()

    # Human output names each field's column; --forget makes the file unrecognised again.
    assert main(["map", str(journal)]) == 0
    assert "category      <- mood" in capsys.readouterr().out
    run_json(capsys, "map", str(journal), "--forget")
    assert main(["ls", str(journal)]) == 2


def test_map_refuses_an_unknown_field_or_column(capsys, journal: Path) -> None:
    assert main(["map", str(journal), "--map", "body=said"]) == 2
    assert "FIELD=COLUMN" in capsys.readouterr().err
    assert main(["map", str(journal), "--map", "created=nowhere", "--save"]) == 2
    assert "created=nowhere" in capsys.readouterr().err


def test_map_keeps_a_table_read_only_when_its_id_column_repeats(capsys, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    db = tmp_path / "notes.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE notes (user_id TEXT, body TEXT, created_at TEXT)")
    con.executemany("INSERT INTO notes VALUES (?, ?, ?)", [
        ("u1", "Likes green tea", "2026-01-01 10:00:00"), ("u1", "Works nights", "2026-01-02 10:00:00"),
    ])
    con.commit()
    con.close()
    saved = run_json(capsys, "map", str(db), "--map", "id=user_id", "--save")
    assert saved["mapping"]["id"] == "user_id" and saved["writable"] is False
    assert main(["map", str(db)]) == 0
    assert "read-only: the id column user_id is neither the table's primary key nor UNIQUE" in capsys.readouterr().out

    listed = run_json(capsys, "ls", str(db))
    assert len({m["id"] for m in listed["memories"]}) == 2
    assert main(["rm", str(db), listed["memories"][0]["id"]]) != 0
    capsys.readouterr()
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM notes").fetchone()[0] == 2
    con.close()


def test_export_markdown_and_import_are_idempotent(capsys, demo_path: Path, tmp_path: Path) -> None:
    md = tmp_path / "export.md"
    run_json(capsys, "export", demo_path, md, "--format", "markdown")
    assert "## rust-cli" in md.read_text()
    dest = tmp_path / "imported"
    first = run_json(capsys, "import", demo_path, dest)
    total = run_json(capsys, "info", demo_path)["total"]
    assert first["imported"] == total and first["sessions"] == 9
    second = run_json(capsys, "import", demo_path, dest)
    assert second["imported"] == 0 and second["already_present"] == total
    info = run_json(capsys, "info", dest)
    assert info["counts"]["kinds"]["sqlite"] == total
    shown = run_json(capsys, "ls", dest, "--contains", "Whiskerino", "--limit", "1")["memories"][0]
    assert run_json(capsys, "show", dest, shown["id"])["metadata"]["import"]["path"] == str(demo_path.resolve())


def test_export_to_standard_output_and_as_csv(capsys, demo_path: Path, tmp_path: Path) -> None:
    assert main(["export", str(demo_path), "-", "--format", "jsonl"]) == 0
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    total = run_json(capsys, "info", demo_path)["total"]
    assert len(lines) == total and not (Path.cwd() / "-").exists()
    assert captured.err.startswith(f"exported {total} memories (all) as jsonl to -")
    out = tmp_path / "exports" / "all.csv"
    assert run_json(capsys, "export", demo_path, out, "--format", "csv")["exported"] == total
    rows = out.read_text(encoding="utf-8").splitlines()
    assert rows[0].startswith("id,channel,layer,status,content") and len(rows) >= total + 1
    assert {line["id"] for line in lines} <= {row.split(",", 1)[0] for row in rows}
    assert [p.name for p in out.parent.iterdir()] == ["all.csv"]  # no temp file left beside it


def test_init_makes_an_empty_native_store_and_discover_finds_it(capsys, tmp_path: Path) -> None:
    made = run_json(capsys, "init", str(tmp_path / "stores" / "fresh"))
    assert made["path"] == str(tmp_path / "stores" / "fresh") and "sqlite" in made["kinds"]
    assert run_json(capsys, "info", str(tmp_path / "stores" / "fresh"))["total"] == 0
    found = run_json(capsys, "discover", str(tmp_path / "stores"), "--depth", "2")["stores"]
    assert [Path(s["path"]).name for s in found] == ["fresh"]
    for argv in (["discover", str(tmp_path / "missing")], ["discover", str(tmp_path), "--depth", "-1"]):
        assert main(argv) == 2
        assert capsys.readouterr().err.startswith("mnemoscope: ")


def test_the_demo_is_written_only_into_a_new_or_empty_folder(capsys, tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    assert main(["demo", str(tmp_path / "busy")]) == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "busy").iterdir()] == ["notes.txt"]


def test_embedder_state_and_the_handlers_from_the_parsers_register_declares(capsys, demo_path: Path) -> None:
    from mnemoscope.app.cli import build_parser
    from mnemoscope.app.commands import stores
    from mnemoscope.storage import open_store

    parser = build_parser()
    args = parser.parse_args(["export", str(demo_path), str(demo_path.parent / "out.jsonl"), "--format", "jsonl"])
    assert args.handler is stores.cmd_export and args.looks_only
    args = parser.parse_args(["embedder", str(demo_path), "--json"])
    assert args.handler is stores.cmd_embedder and not args.looks_only
    assert stores.cmd_embedder(args) == 0
    printed = json.loads(capsys.readouterr().out)
    with open_store(demo_path, read_only=True) as store:
        state = stores.embedder_state(store)
    assert printed == json.loads(json.dumps(state, default=str))
    assert state["runs_here"] is True and state["label"].startswith("wordllama-l2_supercat") and "semantic" in state["label"]
    with pytest.raises(stores.UsageError, match="--model and --dimensions go with"):
        stores.cmd_embedder(parser.parse_args(["embedder", str(demo_path), "--model", "m"]))
