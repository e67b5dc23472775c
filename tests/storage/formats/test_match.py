"""A format's answer to "does this path hold your store?" (storage/formats/match.py): what a
match says, taken from a real detection (a five-layer agent's facts.db beside its markdown)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from formats.test_facts_db import build_facts_workspace
from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.formats.match import FormatMatch
from mnemoscope.storage.formats.registry import detect_formats
from mnemoscope.storage.model import Kind


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return build_facts_workspace(tmp_path / "assistant")


def test_a_match_names_its_format_location_claims_and_journal(workspace: Path) -> None:
    [match] = detect_formats(workspace)
    assert isinstance(match, FormatMatch)
    assert (match.format, match.label, match.location) == ("facts-db", "structured memory DB", workspace / "facts.db")
    assert match.claims == ((Kind.SQLITE, workspace / "facts.db"),)  # not also read as a bare SQLite file
    assert match.journal_dir == workspace
    source = match.open()
    try:
        assert source.count(MemoryQuery(statuses=())) > 0
    finally:
        source.close()


def test_two_detections_of_one_store_are_equal_whatever_opens_them(workspace: Path) -> None:
    first, second = detect_formats(workspace)[0], detect_formats(workspace)[0]
    assert first.open is not second.open and first == second and hash(first) == hash(second)
    assert len({first, second}) == 1
    other = dataclasses.replace(first, location=workspace / "other.db")
    assert other != first
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.format = "mem0"  # type: ignore[misc]


def test_a_match_claims_nothing_and_journals_in_the_opened_folder_unless_it_says(tmp_path: Path) -> None:
    plain = FormatMatch("example", "Example store", tmp_path / "x.db", open=lambda: None)
    assert plain.claims == () and plain.journal_dir is None
