"""``mnemoscope map``: a table of an unrecognised SQLite file proposed, corrected, remembered, then opened."""

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


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main([*argv, "--json"])
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
