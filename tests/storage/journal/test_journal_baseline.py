"""The baseline of accepted findings as records kept in the journal's settings
(storage/journal/baseline.py): a sidecar journal beside a store Mnemoscope does not own."""

from __future__ import annotations

from pathlib import Path

import pytest
from mnemoscope.storage import ConflictError
from mnemoscope.storage.journal.baseline import RECORD_PREFIX, BaselineRecords, record_id
from mnemoscope.storage.journal.log import Journal


def test_baseline_records_are_kept_in_the_journal_and_survive_reopening(tmp_path: Path) -> None:
    journal = Journal.sidecar(tmp_path)
    baseline = BaselineRecords(journal)
    record = record_id("fp-1")
    assert record == RECORD_PREFIX + "fp-1" and baseline.owns(record) and not baseline.owns("m-1")
    assert baseline.read_record(record) is None
    baseline.write_record(record, None, {"rule": "aws-key", "memory_id": "m-1"})
    journal.close()
    again = BaselineRecords(Journal.sidecar(tmp_path))
    assert again.accepted() == {"fp-1": {"rule": "aws-key", "memory_id": "m-1"}}
    again.journal.close()


def test_a_write_over_an_entry_changed_since_it_was_read_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    baseline = BaselineRecords(Journal.sidecar(tmp_path))
    record = record_id("fp-2")
    baseline.write_record(record, None, {"rule": "email"})
    with pytest.raises(ConflictError, match="changed since it was read"):
        baseline.write_record(record, None, {"rule": "other"})
    assert baseline.read_record(record) == {"rule": "email"}
    baseline.write_record(record, {"rule": "email"}, None)
    assert baseline.accepted() == {}
    baseline.journal.close()
