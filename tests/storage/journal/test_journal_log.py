"""The Journal itself, on a real sidecar journal: steps, their changes, undo and redo order,
settings, and what a crashed step leaves."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage.journal.log import DONE, PENDING, UNDONE, Journal
from mnemoscope.storage.source import Change


def test_a_step_keeps_its_changes_and_targets_and_is_next_to_undo(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    changes = [Change("m1", {"content": "a"}, {"content": "b"}), Change("md:x", {"text": "- a"}, None)]
    seq = journal.begin("edit", ["m1", "m1"], changes, channel="proj")
    assert [e.seq for e in journal.pending()] == [seq]
    journal.finish(seq, changes)
    assert journal.pending() == []
    entry = journal.next_to_undo()
    assert entry is not None and entry.seq == seq and entry.operation == "edit"
    assert list(entry.targets) == ["m1"] and entry.channel == "proj"
    assert journal.changes(seq) == changes
    assert [e.seq for e in journal.history(target="m1")] == [seq]
    assert journal.history(target="m2") == []
    journal.close()


def test_undo_then_a_new_step_drops_what_could_be_redone(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    first = journal.record("edit", ["m1"], [], state=DONE).seq
    journal.set_state(first, UNDONE)
    assert journal.next_to_redo() is not None and journal.next_to_undo() is None
    journal.record("delete", ["m2"], [], state=DONE)
    assert journal.next_to_redo() is None
    assert journal.last_with(("delete",), "m2") is not None
    assert journal.count() == 2
    journal.close()


def test_settings_round_trip_and_a_crashed_step_is_pending_in_a_new_journal_object(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    journal.write_setting("settings", {"embedder": "x", "n": [1, 2]})
    seq = journal.begin("promote", ["m1"], [Change("m1", None, {"id": "m1"})])
    journal.close()  # the process dies before finish()
    reopened = Journal.sidecar(tmp_path)
    assert reopened.read_setting("settings") == {"embedder": "x", "n": [1, 2]}
    assert [(e.seq, e.state) for e in reopened.pending()] == [(seq, PENDING)]
    reopened.close()


def test_a_damaged_setting_is_one_clear_error(tmp_path: Path) -> None:
    import sqlite3

    import pytest
    from mnemoscope.storage import UnreadableStoreError
    from mnemoscope.storage.journal.log import SIDECAR_DB, SIDECAR_DIR

    journal = Journal.sidecar(tmp_path)
    journal.write_setting("settings", {"embedder": "x"})
    journal.close()
    with sqlite3.connect(tmp_path / SIDECAR_DIR / SIDECAR_DB) as con:
        con.execute("UPDATE meta SET value = '{\"embedder\" \"x\"}' WHERE key = 'settings'")  # a flipped bit
    with pytest.raises(UnreadableStoreError, match="'settings' is damaged"):
        Journal.sidecar(tmp_path).read_setting("settings")


def test_blobs_and_text_that_looks_like_one_come_back_as_they_were_journaled(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    blob = {"id": "m1", "embedding": b"\x00\x01\xff", "content": "a"}
    text = {"id": "m2", "embedding": None, "content": 'a value named "$bytes" in prose'}
    seqs = [journal.record("edit", [r["id"]], [Change(r["id"], r, {**r, "content": "b"})]).seq for r in (blob, text)]
    for seq, row in zip(seqs, (blob, text), strict=True):
        (change,) = journal.changes(seq)
        assert change.before == row and change.after == {**row, "content": "b"}
        assert [type(v) for v in change.before.values()] == [type(v) for v in row.values()]
    journal.close()
