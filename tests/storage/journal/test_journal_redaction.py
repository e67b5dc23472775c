"""A purge redacts the journal (redaction.py): every snapshot of the purged memory's records, in
its own step and in each earlier one, becomes a marker naming the purge; other memories' records
and steps stay as they were."""

from __future__ import annotations

import json
from pathlib import Path

from mnemoscope.storage.journal.log import PENDING, Journal
from mnemoscope.storage.journal.redaction import PURGED, Purge, is_purged, purge_step, purged_snapshot, texts_in
from mnemoscope.storage.source import Change

SECRET = "the vault code is 4417"
OLDER = "the vault code was 1203"


def test_a_marker_names_its_purge_step() -> None:
    marker = purged_snapshot(7)
    assert is_purged(marker) and purge_step(marker) == 7 and PURGED in marker
    assert not is_purged({"content": PURGED}) and purge_step(None) is None


def test_texts_are_read_under_the_text_keys_at_any_depth() -> None:
    snapshot = {"id": "m1", "channel": "webshop", "metadata": {"data": SECRET, "hash": "abc"}, "text": "- " + OLDER}
    assert texts_in(snapshot) == {SECRET, "- " + OLDER, OLDER}
    assert texts_in({"tags": ["x"], "content": "ab"}) == set()  # too short to look for
    assert texts_in({"content": PURGED, "from": {"tags": ["decision"]}}) == set()


def test_a_step_of_the_memory_alone_is_redacted_whole() -> None:
    purge = Purge(9, {"m1"}, {SECRET}, lambda record: True)
    changes = [{"record": "m1", "before": {"content": OLDER}, "after": {"content": SECRET}},
               {"record": "md:notes.md:abc", "before": {"text": "- " + OLDER}, "after": {"text": "- " + SECRET}}]
    details = {"fields": ["content"], "from": {"content": OLDER}, "to": {"content": SECRET}}
    assert purge.redact(["m1"], changes, details)
    assert all(is_purged(c[side]) for c in changes for side in ("before", "after"))
    assert details == {"fields": ["content"], "from": {"content": PURGED}, "to": {"content": PURGED}}
    assert OLDER in purge.texts and "md:notes.md:abc" in purge.ids
    assert not purge.redact(["m1"], changes, details)  # once is enough


def test_in_a_step_of_several_memories_only_the_purged_ones_records_are_redacted() -> None:
    existing = {"m2", "md:notes.md:kept"}
    purge = Purge(9, {"m1"}, {SECRET}, lambda record: record not in existing)
    changes = [
        {"record": "m1", "before": {"content": SECRET, "status": "active"}, "after": None},
        {"record": "m2", "before": {"content": "another memory"}, "after": None},
        {"record": "md:notes.md:gone", "before": {"text": "- " + SECRET}, "after": None},
        {"record": "md:notes.md:kept", "before": {"text": f"- quoting {SECRET}"}, "after": {"text": "- x"}},
        {"record": "md:notes.md:other", "before": {"text": "- unrelated"}, "after": None},
    ]
    details = {"count": 2, "each": [{"content": SECRET}, {"content": "another memory"}]}
    assert purge.redact(["m1", "m2"], changes, details)
    assert [is_purged(c["before"]) for c in changes] == [True, False, True, False, False]
    assert details["each"] == [{"content": PURGED}, {"content": "another memory"}]


def test_the_journal_redacts_every_earlier_step_of_the_memory_and_no_other(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    other = journal.record("edit", ["m2"], [Change("m2", {"content": "a"}, {"content": "b"})]).seq
    edit = journal.record("edit", ["m1"], [Change("m1", {"content": OLDER}, {"content": SECRET})],
                          details={"from": {"content": OLDER}, "to": {"content": SECRET}}).seq
    # a step that wrote a copy of the memory without naming it (a repair of its vector)
    repair = journal.record("repair", ["vec:memories:m1"], [Change("vec:memories:m1", None, {"document": SECRET})]).seq
    pending = journal.begin("edit", ["m1"], [Change("m1", {"content": SECRET}, {"content": "next"})])
    journal.set_state(pending, PENDING)
    removed = [Change("m1", {"content": SECRET}, None), Change("vec:memories:m1", {"document": SECRET}, None)]
    seq = journal.begin("purge", ["m1"], removed, details={"content": PURGED})
    journal.finish(seq, removed, purge=Purge(seq, {"m1", "vec:memories:m1"}, {SECRET}, lambda record: True))

    entries = {e.seq: e for e in journal.history()}
    assert [purge_step(s) for s in entries[seq].before] == [seq, seq] and entries[seq].after == [None, None]
    assert is_purged(entries[edit].before[0]) and is_purged(entries[edit].after[0])
    assert entries[edit].details == {"from": {"content": PURGED}, "to": {"content": PURGED}}
    assert is_purged(entries[repair].after[0])
    assert entries[other].before == [{"content": "a"}]
    assert SECRET in json.dumps(entries[pending].before)  # an unfinished step is recovery's, left alone
    assert all(SECRET not in json.dumps([e.before, e.after, e.details]) for e in entries.values() if e.seq != pending)
    assert OLDER not in json.dumps([[e.before, e.after, e.details] for e in entries.values()])
    assert journal.settle() == []
    journal.close()


def test_a_record_whose_id_holds_like_wildcards_is_found_only_as_itself(tmp_path: Path) -> None:
    """A step that changed a record without naming it is found by the record's id inside its
    changes (a LIKE pattern, escaped): it is redacted, and a step of a record whose id differs
    only where the id has a `_` is left as it was."""
    journal = Journal.sidecar(tmp_path)
    lookalike = journal.record("repair", ["vec:other"], [Change("vec:memories:m-1x2", None, {"document": "kept"})]).seq
    repair = journal.record("repair", ["vec:other"], [Change("vec:memories:m-1_2", None, {"document": SECRET})]).seq
    removed = [Change("m-1_2", {"content": SECRET}, None)]
    seq = journal.begin("purge", ["m-1_2"], removed)
    journal.finish(seq, removed, purge=Purge(seq, {"m-1_2", "vec:memories:m-1_2"}, {SECRET}, lambda record: True))
    entries = {e.seq: e for e in journal.history()}
    assert is_purged(entries[repair].after[0])
    assert entries[lookalike].after == [{"document": "kept"}]
    journal.close()
