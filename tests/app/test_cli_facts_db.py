"""The command line on a five-layer agent's workspace: the markdown and its structured facts DB as
one store; every disagreement between them found by `check`; the agent's decay score shown as its
own, once; a facts DB laid out another way opened with no map; CRLF kept by a promote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from formats.test_facts_db import (
    EVERY_DISAGREEMENT,
    IDENTITY_FILES,
    add_identity_files,
    agent_connection,
    build_facts_workspace,
    build_memories_workspace,
    plant_every_disagreement,
)
from helpers.cli_runs import run, run_json


def test_info_ls_search_edit_and_undo_on_the_facts_workspace(capsys, tmp_path: Path) -> None:
    workspace = build_facts_workspace(tmp_path / "workspace")
    info = run_json(capsys, "info", workspace)
    assert {f["format"] for f in info["formats"]} == {"facts-db"} and info["total"] == 9
    facts = [m for m in run_json(capsys, "ls", workspace, "--limit", "50")["memories"]
             if m["source"].get("format") == "facts-db"]
    assert len(facts) == 4
    cat = next(m for m in facts if m["content"] == "My cat's name is Whiskerino")
    assert cat["tags"] == ["preference"] and cat["access_count"] == 7
    hits = run_json(capsys, "search", workspace, "Whiskerino salmon", "--mode", "keyword")["hits"]
    assert hits and hits[0]["content"] == "Whiskerino eats salmon on Fridays"
    run_json(capsys, "edit", workspace, cat["id"], "--content", "My cat's name is Whiskerina")
    db = workspace / "facts.db"
    assert sqlite3.connect(db).execute("SELECT value FROM facts WHERE id = 'fact_cat'").fetchone() == (
        "My cat's name is Whiskerina",)
    run_json(capsys, "undo", workspace)
    assert sqlite3.connect(db).execute("SELECT value FROM facts WHERE id = 'fact_cat'").fetchone() == (
        "My cat's name is Whiskerino",)


def test_check_exits_1_with_each_disagreement_that_info_lists(capsys, tmp_path: Path) -> None:
    workspace = build_facts_workspace(tmp_path / "workspace")
    code, out, _err = run(capsys, "check", workspace)
    assert code == 0 and out.rstrip() == "checked 4 facts rows of facts.db, 4 facts_vec vectors, 5 markdown entries: consistent"
    plant_every_disagreement(workspace)
    code, out, _err = run(capsys, "check", workspace)
    assert code == 1
    for kind, records in EVERY_DISAGREEMENT.items():
        assert f"{kind} (1): " in out and records[0] in out, kind
    assert out.rstrip().endswith(f"{len(EVERY_DISAGREEMENT)} inconsistencies")
    code, out, _err = run(capsys, "check", workspace, "--json")
    found = json.loads(out)
    assert code == 1 and {k["kind"]: [i["record"] for i in k["items"]] for k in found["kinds"]} == EVERY_DISAGREEMENT
    facts_db = next(f for f in run_json(capsys, "info", workspace)["formats"] if f["format"] == "facts-db")
    assert len(facts_db["problems"]) == found["total"] == len(EVERY_DISAGREEMENT)


def _rows(out: str) -> dict[str, list[str]]:
    """`ls`'s table as id -> its cells."""
    return {line.split()[0]: line.split() for line in out.splitlines()[2:] if line.startswith(("fact:", "md:"))}


def test_the_decay_score_is_shown_as_the_agent_keeps_it_once_and_identity_files_show_none(
    capsys, tmp_path: Path
) -> None:
    workspace = add_identity_files(build_facts_workspace(tmp_path / "workspace"))
    con = agent_connection(workspace / "facts.db")
    con.execute("UPDATE facts SET decay_score = 0.95 WHERE id = 'fact_tz'")
    con.execute("UPDATE facts SET decay_score = 0.05 WHERE id = 'fact_deploy'")
    con.close()
    code, out, _err = run(capsys, "ls", workspace, "--limit", "50")
    rows = _rows(out)
    assert code == 0 and rows["fact:facts.db:fact_tz"][4] == "0.95" and rows["fact:facts.db:fact_deploy"][4] == "0.05"
    identity = {rel for rel in IDENTITY_FILES}
    shown = {row[0].split(":")[1]: row[4] for row in rows.values() if row[0].startswith("md:")}
    assert identity <= set(shown) and set(shown.values()) == {"—"}  # no invented 0.50, in any markdown
    listed = run_json(capsys, "ls", workspace, "--limit", "50")["memories"]
    assert {m["source"]["path"]: m["salience"] for m in listed if m["source"]["kind"] == "markdown"}.keys() >= identity
    assert {m["salience"] for m in listed if m["source"]["kind"] == "markdown"} == {None}
    # ordered by effective salience: the agent's scores as they are, the files that keep none last
    by_effective = run_json(capsys, "ls", workspace, "--limit", "50", "--order", "effective_salience")["memories"]
    assert [m["salience"] for m in by_effective[:4]] == [1.0, 1.0, 0.95, 0.05]
    assert {m["source"]["kind"] for m in by_effective[4:]} == {"markdown"}

    code, out, _err = run(capsys, "show", workspace, "fact:facts.db:fact_tz")
    assert "salience 0.95 (the agent's decay score: shown as the owner keeps it, not decayed again)" in out
    shown = run_json(capsys, "show", workspace, "fact:facts.db:fact_tz")
    assert (shown["salience"], shown["salience_now"], shown["salience_decay"]) == (0.95, 0.95, "owner")
    soul = next(m["id"] for m in listed if m["source"]["path"] == "SOUL.md")
    code, out, _err = run(capsys, "show", workspace, soul)
    assert "salience — (no salience (workspace markdown keeps none))" in out
    assert run_json(capsys, "show", workspace, soul)["salience_now"] is None

    overview = run_json(capsys, "salience", workspace)
    at_risk = overview["at_risk"]
    assert [(r["id"], r["effective"]) for r in at_risk[:2]] == [("fact:facts.db:fact_deploy", 0.05),
                                                               ("fact:facts.db:fact_tz", 0.95)]
    assert all(r["id"].startswith("fact:") and r["cleanup_candidate"] is None for r in at_risk)
    assert sum(b["count"] for b in overview["histogram"]) == 4  # the facts; the markdown keeps none
    assert overview["formulas"]["facts-db salience"].startswith("the agent's decay score")
    code, out, _err = run(capsys, "salience", workspace)
    assert "0.050  fact:facts.db:fact_deploy" in out and "md:" not in out.split("most at risk:")[1].split("decay:")[0]
    code, out, _err = run(capsys, "salience", workspace, soul)
    assert out.strip() == f"{soul}: no salience (workspace markdown keeps none)"
    code, out, _err = run(capsys, "salience", workspace, "fact:facts.db:fact_tz")
    assert out.startswith("fact:facts.db:fact_tz: salience 0.950 at ")


def test_a_facts_db_laid_out_another_way_opens_with_no_manual_map(capsys, tmp_path: Path) -> None:
    root = build_memories_workspace(tmp_path / "agent")
    listed = run_json(capsys, "ls", root / "memory.sqlite")["memories"]
    assert [(m["id"], m["salience"]) for m in listed] == [
        ("fact:memory.sqlite:1", 0.9), ("fact:memory.sqlite:3", 0.05), ("fact:memory.sqlite:2", 0.4)]
    info = run_json(capsys, "info", root)
    assert [f["format"] for f in info["formats"]] == ["facts-db"] and info["total"] == 6
    assert info["formats"][0]["layout"]["full_text_index"] == "memories_fts"
    hits = run_json(capsys, "search", root, "--like", "fact:memory.sqlite:1", "--k", "1")["hits"]
    assert [h["id"] for h in hits] == ["fact:memory.sqlite:2"]
    code, _out, _err = run(capsys, "check", root)
    assert code == 0


def test_promote_into_a_crlf_memory_md_keeps_its_crlf(capsys, tmp_path: Path) -> None:
    workspace = build_facts_workspace(tmp_path / "workspace")
    memory_md = workspace / "MEMORY.md"
    crlf = b"# Long-term facts\r\n\r\n- My cat's name is Whiskerino\r\n- The user works in Europe/Lisbon time\r\n"
    memory_md.write_bytes(crlf)
    daily = workspace / "memory" / "2026-03-02.md"
    deploy = next(m["id"] for m in run_json(capsys, "ls", workspace, "--limit", "50")["memories"]
                  if m["source"].get("path") == "memory/2026-03-02.md")
    run_json(capsys, "promote", workspace, deploy)
    assert memory_md.read_bytes() == crlf + b"- 14:00 deploy: Deploys go out on Tuesdays after the standup\r\n"
    assert daily.read_bytes() == b"# 2026-03-02\n\n"
    run_json(capsys, "undo", workspace)
    assert memory_md.read_bytes() == crlf
    assert b"- 14:00 deploy:" in daily.read_bytes()
