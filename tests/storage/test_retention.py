"""storage/retention.py and MemoryStore.retention: the records each owner will expire, archive or
clean up, gathered from every source that implements RetentionSource (a source added later needs
no change here), sorted by when, the overdue first."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from formats.test_langgraph_ttl import BUILD as LANGGRAPH_BUILD
from formats.test_mem0_qdrant import SETUP as MEM0_SETUP
from helpers.owners import require, run_owner
from mnemoscope.storage import Upcoming
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.retention import (
    ARCHIVE,
    CLEAN_UP,
    EXPIRE,
    RetentionSource,
    due_text,
    duration_text,
    gathered,
    keeps_rule,
    parse_duration,
    preview_of,
)

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


class ArchivesAfter90Days:
    """A source whose owner archives, as AgentX does its conversations: what a helper's branch adds."""

    label = "Archiver"

    def __init__(self, started: dict[str, datetime]) -> None:
        self.started = started

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        return [Upcoming(key, ARCHIVE, at + timedelta(days=90), "archived 90 days after it started", self.label)
                for key, at in self.started.items() if at + timedelta(days=90) <= until]


class KeepsEverything:
    label = "Keeper"


def test_a_source_with_upcoming_is_a_retention_source_and_one_without_is_not() -> None:
    assert isinstance(ArchivesAfter90Days({}), RetentionSource)
    assert not isinstance(KeepsEverything(), RetentionSource)
    assert keeps_rule(ArchivesAfter90Days({})) and not keeps_rule(KeepsEverything())
    ruleless = ArchivesAfter90Days({})
    ruleless.keeps_retention_rule = False  # a store of its kind that has no rule (checkpoints only)
    assert isinstance(ruleless, RetentionSource) and not keeps_rule(ruleless)


def test_gathered_sorts_every_sources_records_by_when_and_drops_what_is_past_until() -> None:
    archiver = ArchivesAfter90Days({"c-old": NOW - timedelta(days=100), "c-new": NOW - timedelta(days=80),
                                    "c-fresh": NOW})
    other = ArchivesAfter90Days({"b-mid": NOW - timedelta(days=85)})
    found = gathered([KeepsEverything(), archiver, other], NOW, NOW + timedelta(days=30))
    assert [u.record_id for u in found] == ["c-old", "b-mid", "c-new"]
    assert found[0].when < NOW < found[1].when
    assert gathered([KeepsEverything()], NOW, NOW + timedelta(days=30)) == []


def test_upcoming_as_json() -> None:
    one = Upcoming("vec:m:1", EXPIRE, NOW, "a rule", "mem0", "Dana likes tea")
    assert one.to_dict() == {"id": "vec:m:1", "action": "expire", "when": "2026-11-27T12:00:00+00:00",
                             "rule": "a rule", "owner": "mem0", "preview": "Dana likes tea"}


@pytest.mark.parametrize(("text", "span", "words"), [
    ("30d", timedelta(days=30), "30 days"), ("7d", timedelta(days=7), "7 days"), ("12h", timedelta(hours=12), "12 hours"),
    ("2w", timedelta(weeks=2), "2 weeks"), ("90m", timedelta(minutes=90), "90 minutes"), (" 1D ", timedelta(days=1), "1 day"),
])
def test_durations(text: str, span: timedelta, words: str) -> None:
    assert parse_duration(text) == span and duration_text(span) == words


@pytest.mark.parametrize("text", ["", "30", "d", "3x", "-1d", "1.5d"])
def test_a_duration_without_a_count_and_a_unit_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


def test_due_and_preview_texts() -> None:
    assert due_text(NOW + timedelta(days=3, hours=2), NOW) == "in 3 days"
    assert due_text(NOW - timedelta(hours=5), NOW) == "overdue by 5 hours"
    assert due_text(NOW - timedelta(seconds=5), NOW) == "overdue by under a minute"
    assert due_text(NOW + timedelta(seconds=5), NOW) == "due now"
    assert preview_of("  one\n two  ") == "one two"
    assert preview_of(" ".join(map(str, range(20)))) == "0 1 2 3 4 5 6 7 8 9 10 11 …"


def test_the_facade_gathers_every_owner_in_one_folder_sorted_by_when(tmp_path: Path) -> None:
    """A LangGraph store and a mem0 store in one folder: both owners' records, in one order."""
    require("langgraph.store.sqlite")
    require("mem0")
    root = tmp_path / "agent"
    root.mkdir()
    run_owner(LANGGRAPH_BUILD, path=str(root / "store.sqlite"))
    today = datetime.now(timezone.utc).date()
    run_owner(MEM0_SETUP + """
m = open_mem0(root)
m.add("Dana's parking permit", user_id="dana", infer=False, expiration_date=yesterday)
m.add("Dana's trial subscription", user_id="dana", infer=False, expiration_date=soon)
close(m)
print(json.dumps("ok"))
""", root=str(root), yesterday=(today - timedelta(days=1)).isoformat(), soon=(today + timedelta(days=5)).isoformat(),
        mem0_dir=str(root / ".mem0"))
    with open_store(root) as store:
        upcoming = store.retention(timedelta(days=30))
        kept = store.retention_kept()
    assert [(u.owner, u.preview) for u in upcoming] == [
        ("mem0 (Qdrant local)", "Dana's parking permit"),
        ("LangGraph", "An old draft reply"),
        ("LangGraph", "Dana is on a call until noon"),
        ("mem0 (Qdrant local)", "Dana's trial subscription"),
        ("LangGraph", "Dana is travelling to Lisbon"),
    ]
    assert [u.action for u in upcoming] == [EXPIRE, CLEAN_UP, CLEAN_UP, EXPIRE, CLEAN_UP]
    assert kept == {"LangGraph": True, "mem0 (Qdrant local)": True}


def test_mnemoscopes_own_workspace_keeps_no_rule(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        assert store.retention(timedelta(days=3650)) == []
        assert set(store.retention_kept().values()) == {False}
