"""SynthOrg's expiry and retention previewed by `retention`, on the company store test_synthorg.py
writes with mem0 the way SynthOrg's Mem0 backend does, and its synthorg.yaml: expires_at hides an
entry; RetentionEnforcer deletes an agent's entry once older than its category's retention, resolved
agent override > company rule > agent default > company default, and never sees an expired one."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from formats.test_synthorg import CONFIG, _company, company, data_of  # noqa: F401 (fixtures)
from helpers.cli_runs import run, run_json
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.retention import CLEAN_UP, EXPIRE
from mnemoscope.storage.timeutil import parse_time

SYNTHORG = "SynthOrg (mem0 on Qdrant local)"


def _rows(store, within: timedelta) -> list[tuple[str, str]]:
    return [(u.record_id, u.action) for u in store.retention(within)]


def test_expiry_and_retention_by_synthorgs_rules_within_30_days(company) -> None:
    project, ids = company
    with open_store(data_of(project)) as store:
        upcoming = store.retention(timedelta(days=30))
        created = {name: store.get(memory_id).created_at for name, memory_id in ids.items()}
        assert store.retention_kept() == {SYNTHORG: True}
    assert [(u.record_id, u.action) for u in upcoming] == [
        (ids["litestar"], CLEAN_UP),  # created 2020, the CEO's semantic retention is 90 days: overdue
        (ids["build"], EXPIRE),  # expires_at 2021-01-01
        (ids["jwt"], CLEAN_UP),  # the CEO's episodic override: 7 days
        (ids["lesson"], EXPIRE),  # expires_at 30 days after it was written
    ]
    by_id = {u.record_id: u for u in upcoming}
    assert by_id[ids["litestar"]].when == datetime(2020, 3, 31, tzinfo=timezone.utc)
    assert by_id[ids["build"]].when == datetime(2021, 1, 1, tzinfo=timezone.utc)
    assert by_id[ids["jwt"]].when == created["jwt"] + timedelta(days=7)
    assert by_id[ids["jwt"]].rule.startswith(
        "SynthOrg retention: episodic 7 days (agent per-category rule: agents[ceo].memory.retention_overrides)")
    assert by_id[ids["litestar"]].rule.startswith(
        "SynthOrg retention: semantic 90 days (agent global default: agents[ceo].memory.retention_days)")
    assert by_id[ids["build"]].rule.startswith("SynthOrg expires_at: no longer returned")
    assert by_id[ids["jwt"]].preview == "Last sprint the team chose JWT over sessions"
    assert {u.owner for u in upcoming} == {SYNTHORG}


def test_an_expired_entry_is_never_deleted_by_retention_and_shared_knowledge_has_none(company) -> None:
    project, ids = company
    with open_store(data_of(project)) as store:
        far = _rows(store, timedelta(days=3650))
    # "build" (working: 1 day) and "lesson" (procedural: 365 days) expire before their retention runs
    # out: retrieve never returns them to the cleanup, so only their expiry is listed.
    assert [action for record, action in far if record == ids["build"]] == [EXPIRE]
    assert [action for record, action in far if record == ids["lesson"]] == [EXPIRE]
    # The QA lead has no overrides: the company default (365 days) applies to social.
    assert (ids["qa"], CLEAN_UP) in far and (ids["qa"], CLEAN_UP) not in _rows_within(project, 30)
    assert ids["prs"] not in {record for record, _ in far}


def _rows_within(project: Path, days: int) -> list[tuple[str, str]]:
    with open_store(data_of(project)) as store:
        return _rows(store, timedelta(days=days))


def test_without_synthorg_yaml_only_the_expiries_are_known(company) -> None:
    project, ids = company
    (project / "synthorg.yaml").unlink()
    assert _rows_within(project, 30) == [(ids["build"], EXPIRE), (ids["lesson"], EXPIRE)]


def test_an_agent_override_outranks_the_company_default(company) -> None:
    project, ids = company
    # Give the QA lead a social override of 3 days: it outranks the company default.
    text = CONFIG.format(data_dir="./data/memory").replace(
        "    department: quality\n",
        "    department: quality\n    memory:\n      retention_overrides:\n        - {category: social, retention_days: 3}\n")
    (project / "synthorg.yaml").write_text(text, encoding="utf-8")
    with open_store(data_of(project)) as store:
        qa = next(u for u in store.retention(timedelta(days=30)) if u.record_id == ids["qa"])
        assert qa.when == store.get(ids["qa"]).created_at + timedelta(days=3)
    assert "agents[qa-lead].memory.retention_overrides" in qa.rule


def test_the_cli_table_and_json(company, capsys: pytest.CaptureFixture[str]) -> None:
    project, ids = company
    data = data_of(project)
    listed = run_json(capsys, "retention", data)
    assert [(u["id"], u["action"]) for u in listed["upcoming"]] == [
        (ids["litestar"], "clean up"), (ids["build"], "expire"), (ids["jwt"], "clean up"), (ids["lesson"], "expire")]
    assert listed["within"] == "30 days" and listed["owners"] == [{"format": SYNTHORG, "keeps_rule": True}]
    assert parse_time(listed["upcoming"][1]["when"]) == datetime(2021, 1, 1, tzinfo=timezone.utc)
    code, out, _ = run(capsys, "retention", data, "--within", "2d")
    assert code == 0
    assert "2020-03-31 00:00 (overdue by" in out and "2021-01-01 00:00 (overdue by" in out
    assert "This project uses Litestar" in out and "JWT" not in out
    assert "SynthOrg retention: semantic 90 days (agent global default: agents[ceo].memory.retention_days)" in out


def test_a_store_copied_without_its_config_lists_nothing_it_cannot_know(company, tmp_path: Path) -> None:
    project, _ids = company
    alone = tmp_path / "alone"
    shutil.copytree(data_of(project), alone)
    with open_store(alone) as store:
        assert {u.action for u in store.retention(timedelta(days=3650))} == {EXPIRE}
