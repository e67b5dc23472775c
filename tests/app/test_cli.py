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
from helpers.markdown_ids import md_id
from helpers.store_state import sql_rows, state_of

from mnemoscope.app.cli import main
from mnemoscope.storage.native.db.schema import SCHEMA_VERSION


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


MEMORY_FIELDS = {
    "id", "content", "layer", "channel", "source", "created_at", "updated_at",
    "last_accessed", "access_count", "salience", "status",
}


def test_info_counts_every_kind(capsys, demo_path: Path) -> None:
    info = run_json(capsys, "info", demo_path)
    assert info["kinds"] == ["sqlite", "chroma", "markdown"]
    assert info["schema_version"] == SCHEMA_VERSION
    assert info["counts"]["kinds"]["sqlite"] == info["tables"]["memories"]
    assert set(info["counts"]["channels"]) == {"_global", "rust-cli", "webshop"}
    assert info["total"] == sum(info["counts"]["kinds"].values())
    assert "not semantic" in info["collections"][0]["embedder"]


def test_ls_filters_and_orders_in_the_store(capsys, demo_path: Path) -> None:
    data = run_json(capsys, "ls", demo_path, "--channel", "rust-cli", "--kind", "sqlite", "--order", "salience", "--limit", "5")
    memories = data["memories"]
    assert len(memories) == 5 and data["total"] > 5
    assert all(m["channel"] == "rust-cli" and m["source"]["kind"] == "sqlite" for m in memories)
    assert [m["salience"] for m in memories] == sorted((m["salience"] for m in memories), reverse=True)
    assert MEMORY_FIELDS <= set(memories[0])
    page2 = run_json(capsys, "ls", demo_path, "--channel", "rust-cli", "--kind", "sqlite", "--order", "salience", "--limit", "5", "--offset", "5")
    assert not {m["id"] for m in memories} & {m["id"] for m in page2["memories"]}


def test_ls_since_until_and_layers_across_kinds(capsys, demo_path: Path) -> None:
    data = run_json(capsys, "ls", demo_path, "--layer", "episodic", "--since", "2026-10-01", "--until", "2026-10-08", "--limit", "500")
    assert data["total"] == len(data["memories"]) > 0
    assert {m["source"]["kind"] for m in data["memories"]} >= {"markdown"}
    assert all("2026-10-01" <= m["created_at"][:10] < "2026-10-08" for m in data["memories"])


def test_show_has_provenance_copies_and_history(capsys, demo_path: Path) -> None:
    mid = run_json(capsys, "ls", demo_path, "--kind", "sqlite", "--contains", "feature flags")["memories"][0]["id"]
    run_json(capsys, "edit", demo_path, mid, "--salience", "0.5")
    shown = run_json(capsys, "show", demo_path, mid)
    assert shown["copies"][0]["kind"] == "chroma"
    assert shown["history"][0]["operation"] == "edit"
    assert shown["promotion"]["all_met"] is True
    code, out, _ = run(capsys, "show", demo_path, mid)
    assert code == 0 and "history:" in out and mid in out


def test_search_modes(capsys, demo_path: Path) -> None:
    keyword = run_json(capsys, "search", demo_path, "Stripe payments", "--mode", "keyword")
    assert keyword["mode"] == "keyword" and "Stripe" in keyword["hits"][0]["content"]
    vector = run_json(capsys, "search", demo_path, "Stripe payments", "--mode", "vector")
    assert vector["mode"] == "vector" and vector["hits"]
    hybrid = run_json(capsys, "search", demo_path, "Stripe payments", "--k", "3")
    assert hybrid["mode"] == "hybrid" and len(hybrid["hits"]) == 3
    assert "Stripe" in hybrid["hits"][0]["content"]
    like = run_json(capsys, "search", demo_path, "--like", hybrid["hits"][0]["id"], "--k", "2")
    assert len(like["hits"]) == 2 and hybrid["hits"][0]["id"] not in {h["id"] for h in like["hits"]}


def test_vector_search_without_vectors_says_it_fell_back(capsys, markdown_only: Path) -> None:
    code, out, err = run(capsys, "search", markdown_only, "Whiskerino", "--mode", "vector")
    assert code == 0
    assert "no vector collection" in err and "keyword" in err
    assert "Whiskerino" in out


def test_timeline_graph_scratchpad_salience(capsys, demo_path: Path, tmp_path: Path) -> None:
    timeline = run_json(capsys, "timeline", demo_path, "--bin", "week", "--group-by", "layer")
    assert sum(b["memories"] for b in timeline["bins"]) == run_json(capsys, "info", demo_path)["total"]
    assert sum(b["turns"] for b in timeline["bins"]) == run_json(capsys, "info", demo_path)["tables"]["turns"]
    busiest = max(timeline["bins"], key=lambda b: b["memories"])
    listed = run_json(capsys, "timeline", demo_path, "--bin", "week", "--events", busiest["bin"])["events"]["memories"]
    assert len(listed) == busiest["memories"]
    assert [m["created_at"] for m in listed] == sorted(m["created_at"] for m in listed)
    graphml = tmp_path / "g.graphml"
    graph = run_json(capsys, "graph", demo_path, "--center", "Dana Okafor", "--depth", "1", "--graphml", graphml)
    assert graph["center"] == "e-dana" and {n["id"] for n in graph["nodes"]} >= {"e-dana", "e-priya"}
    assert graphml.read_text().startswith("<?xml")
    two = run_json(capsys, "graph", demo_path, "--center", "Dana Okafor", "--depth", "2")
    assert len(two["nodes"]) > len(graph["nodes"])
    pad = run_json(capsys, "scratchpad", demo_path)
    keys = {e["key"]: e for s in pad["sessions"] for e in s["entries"]}
    patterns = {e["pattern"] for e in keys.values()}
    assert {"subagent_result", "delegation_result", "session_facts", "pending_subagent_summaries", "taskspace_hint"} <= patterns
    one = run_json(capsys, "scratchpad", demo_path, "--session", pad["sessions"][0]["id"])
    assert len(one["sessions"]) == 1
    overview = run_json(capsys, "salience", demo_path, "--at", "2026-11-01")
    assert sum(b["count"] for b in overview["histogram"]) == run_json(capsys, "info", demo_path)["counts"]["statuses"]["active"]
    risk = overview["at_risk"][0]
    single = run_json(capsys, "salience", demo_path, risk["id"], "--at", "2026-11-01")
    assert single["effective"] == risk["effective"]
    assert single["crosses_threshold_at"] is not None


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


def test_a_cancelled_import_resumes_without_duplicates(tmp_path: Path) -> None:
    from mnemoscope.storage.native.db.sqlite_source import SqliteSource
    from mnemoscope.storage.transfer import ImportCancelled, import_store

    src = tmp_path / "big"
    source = SqliteSource.open(src / "memory.db", create=True)
    source.insert_memory_rows([source.memory_row(f"fact {i}") for i in range(1200)])
    source.close()
    with pytest.raises(ImportCancelled, match="run it again"):
        import_store(src, tmp_path / "dest", cancelled=lambda: True)
    summary = import_store(src, tmp_path / "dest")
    assert summary.already_present == 500 and summary.imported == 700


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
