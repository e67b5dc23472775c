"""The command line on the demo workspace and on single-kind stores."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli_runs import run, run_json
from helpers.markdown_ids import md_id
from helpers.store_state import state_of

from mnemoscope.app.cli import main
from mnemoscope.storage.native.db.schema import SCHEMA_VERSION


def test_info_counts_every_kind(capsys, demo_path: Path) -> None:
    info = run_json(capsys, "info", demo_path)
    assert info["kinds"] == ["sqlite", "chroma", "markdown"]
    assert info["schema_version"] == SCHEMA_VERSION
    assert info["counts"]["kinds"]["sqlite"] == info["tables"]["memories"]
    assert set(info["counts"]["channels"]) == {"_global", "rust-cli", "webshop"}
    assert info["total"] == sum(info["counts"]["kinds"].values())
    assert info["collections"][0]["embedder"].startswith("wordllama-l2_supercat") and "semantic" in info["collections"][0]["embedder"]


@pytest.mark.parametrize("fixture", ["sqlite_only", "chroma_only", "markdown_only"])
def test_every_read_command_on_a_single_kind_store(capsys, request, fixture: str, tmp_path: Path) -> None:
    path: Path = request.getfixturevalue(fixture)
    info = run_json(capsys, "info", path)
    assert len(info["kinds"]) == 1 and info["total"] > 0
    listing = run_json(capsys, "ls", path, "--limit", "3")
    assert len(listing["memories"]) == 3
    first = listing["memories"][0]["id"]
    assert run_json(capsys, "show", path, first)["id"] == first
    assert run_json(capsys, "search", path, listing["memories"][0]["content"].split()[0])["hits"]
    assert run_json(capsys, "timeline", path)["bins"]
    run_json(capsys, "graph", path)
    run_json(capsys, "scratchpad", path)
    run_json(capsys, "salience", path, first)
    run_json(capsys, "history", path)
    imported = run_json(capsys, "import", path, tmp_path / "imported")
    assert imported["imported"] == info["total"]
    out = tmp_path / "out.jsonl"
    assert run_json(capsys, "export", path, out, "--format", "jsonl")["exported"] == info["counts"]["statuses"].get("active", 0) + info["counts"]["statuses"].get("archived", 0) + info["counts"]["statuses"].get("deleted", 0)


@pytest.mark.parametrize("fixture", ["sqlite_only", "chroma_only", "markdown_only"])
def test_curation_on_a_single_kind_store(capsys, request, fixture: str) -> None:
    path: Path = request.getfixturevalue(fixture)
    before = state_of(path)
    contains = {"markdown_only": "Drafted release notes"}.get(fixture, "feature flags")
    mid = run_json(capsys, "ls", path, "--contains", contains)["memories"][0]["id"]
    edited = run_json(capsys, "edit", path, mid, "--content", "curated by hand")["ids"][0]
    promoted = run_json(capsys, "promote", path, edited)["ids"][0]
    run_json(capsys, "rm", path, promoted)
    assert [e["operation"] for e in run_json(capsys, "history", path)["entries"]] == ["delete", "promote", "edit"]
    for _ in range(3):
        run_json(capsys, "undo", path)
    assert state_of(path) == before


BAD_INPUTS = {
    "garbage memory.db": lambda p: (p / "memory.db").write_bytes(os.urandom(4096)),
    "truncated memory.db": lambda p: (p / "memory.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 50),
    "foreign sqlite file": lambda p: _foreign_sqlite(p / "memory.db"),
    "non-utf8 markdown": lambda p: (p / "MEMORY.md").write_bytes(b"- \xff\xfe broken\n"),
    "nothing recognisable": lambda p: (p / "notes.txt").write_text("hello"),
    "newer chroma": lambda p: _newer_chroma(p),
    "garbage chroma.sqlite3": lambda p: (p / "chroma.sqlite3").write_bytes(b"not a database at all" * 100),
}


def _foreign_sqlite(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    con.commit()
    con.close()


def _newer_chroma(path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))
    client.get_or_create_collection("facts", embedding_function=None)
    del client
    con = sqlite3.connect(path / "chroma.sqlite3")
    con.execute("INSERT INTO migrations (dir, version, filename, sql, hash) VALUES ('sysdb', 99, '00099-future.sql', '', '')")
    con.commit()
    con.close()


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_gets_one_line_and_nothing_is_written(capsys, tmp_path: Path, case: str) -> None:
    store = tmp_path / "store"
    store.mkdir()
    BAD_INPUTS[case](store)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    for argv in (["info", store], ["ls", store], ["edit", store, "m-x", "--content", "x"], ["undo", store]):
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert err.startswith("mnemoscope: ")
    after = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    assert after == before


def test_refusals_exit_1(capsys, demo_path: Path) -> None:
    code, _, err = run(capsys, "show", demo_path, "m-doesnotexist")
    assert code == 1 and "No memory m-doesnotexist" in err
    code, _, err = run(capsys, "edit", demo_path, md_id(demo_path, "USER.md", 3), "--salience", "0.3")
    assert code == 1 and "cannot be stored there" in err


def test_bad_usage_exits_2(capsys, demo_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["ls", str(demo_path), "--order", "sideways"])
    assert exc.value.code == 2
    code, _, err = run(capsys, "demo", demo_path)
    assert code == 2 and "not empty" in err
    code, _, err = run(capsys, "demo", demo_path / "MEMORY.md")
    assert code == 2 and "is a file" in err


def test_console_script_runs_as_a_subprocess(tmp_path: Path) -> None:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe, "the mnemoscope console script is installed with the package"
    env = {**os.environ, "MNEMOSCOPE_HOME": str(tmp_path / "home")}
    done = subprocess.run([exe, "demo", str(tmp_path / "d"), "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["kinds"] == ["sqlite", "chroma", "markdown"]
    bad = subprocess.run([exe, "info", str(tmp_path / "missing")], capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip().endswith("does not exist.")


def test_launching_without_a_store_opens_the_demo(tmp_path: Path) -> None:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    # No display and no offscreen platform: the launcher shows the store instead of a window.
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    env["MNEMOSCOPE_HOME"] = str(tmp_path / "home")
    done = subprocess.run([exe, "--demo"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "home" / "demo-workspace" / "memory.db").exists()
    assert "kinds: sqlite, chroma, markdown" in done.stdout
