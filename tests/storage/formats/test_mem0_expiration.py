"""mem0's expiration dates previewed by `retention`, on stores mem0 2.x writes itself (Chroma and
Qdrant's local mode): ``add(..., expiration_date=...)`` keeps the date in the payload, and from the
day after it (UTC) search and get_all leave the memory out (_payload_is_expired)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from formats.test_mem0 import SETUP as CHROMA_SETUP
from formats.test_mem0_qdrant import SETUP as QDRANT_SETUP
from helpers.cli_runs import run
from helpers.owners import require, run_owner
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.retention import EXPIRE

require("mem0")

BUILD = """
m = open_mem0(root)
today = date.fromisoformat(today)
def add(text, days):
    day = None if days is None else (today + timedelta(days=days)).isoformat()
    return m.add(text, user_id="dana", infer=False, expiration_date=day)["results"][0]["id"]
ids = {"yesterday": add("Dana's parking permit", -1), "today": add("Dana is at the dentist today", 0),
       "ten": add("Dana's trial subscription", 10), "later": add("Dana's passport renewal", 90),
       "kept": add("Dana likes tea", None)}
listed = {r["id"] for r in m.get_all(filters={"user_id": "dana"})["results"]}
shown = {r["id"] for r in m.get_all(filters={"user_id": "dana"}, show_expired=True)["results"]}
close(m)
print(json.dumps({"ids": ids, "listed": sorted(listed), "shown": sorted(shown)}))
"""
PRELUDE = "\nfrom datetime import date, timedelta\n"
CLOSE_CHROMA = "\ndef close(m):\n    pass\n"


def _build(kind: str, root: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    setup = QDRANT_SETUP if kind == "qdrant" else CHROMA_SETUP + CLOSE_CHROMA
    today = datetime.now(timezone.utc).date().isoformat()
    out = run_owner(setup + PRELUDE + BUILD, root=str(root), today=today, mem0_dir=str(root / ".mem0"))
    out["today"] = today  # the day the dates were written from, should the test run past midnight
    collection = "mem0"
    return {k: f"vec:{collection}:{v}" for k, v in out["ids"].items()}, out


@pytest.fixture(params=["chroma", "qdrant"])
def expiring(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, dict[str, str], dict]:
    root = tmp_path / f"mem0-{request.param}"
    root.mkdir()
    ids, owner = _build(request.param, root)
    return root, ids, owner


def test_each_expiration_date_is_listed_from_the_day_mem0_hides_it(expiring) -> None:
    root, ids, owner = expiring
    today = date.fromisoformat(owner["today"])
    midnight = datetime(today.year, today.month, today.day, tzinfo=timezone.utc)
    with open_store(root) as store:
        upcoming = store.retention(timedelta(days=30))
        assert store.retention_kept() == {store.info()["formats"][0]["label"]: True}
    assert [u.record_id for u in upcoming] == [ids["yesterday"], ids["today"], ids["ten"]]
    assert [u.when for u in upcoming] == [midnight, midnight + timedelta(days=1), midnight + timedelta(days=11)]
    assert {u.action for u in upcoming} == {EXPIRE}
    assert upcoming[0].rule.startswith(f"mem0 expiration_date {today - timedelta(days=1)}")
    assert upcoming[2].preview == "Dana's trial subscription"
    # mem0 itself: what is listed overdue is what its get_all leaves out, and nothing else.
    overdue = {u.record_id.rsplit(":", 1)[1] for u in upcoming if u.when <= datetime.now(timezone.utc)}
    assert overdue == set(owner["shown"]) - set(owner["listed"]) == {owner["ids"]["yesterday"]}


def test_the_cli_lists_what_mem0_hides_within_the_window(expiring, capsys: pytest.CaptureFixture[str]) -> None:
    root, ids, _owner = expiring
    code, out, _ = run(capsys, "retention", root, "--within", "2h")
    assert code == 0 and ids["yesterday"] in out and "Dana's parking permit" in out and "Dana's trial" not in out
    assert "(overdue by" in out and "expire" in out
    assert "left out of search and get_all from the next day (UTC) unless show_expired" in out
