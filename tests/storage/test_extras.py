"""A part of a store read through an extra's package is said unread in one wording, never empty."""

from __future__ import annotations

import sys

import pytest
from mnemoscope.storage.errors import UnreadableStoreError
from mnemoscope.storage.extras import MissingExtraError, UnreadPart, installed


def test_an_unread_part_names_the_extra_first_then_what_and_where():
    part = UnreadPart("CrewAI unified memory (LanceDB)", "/p/memory/memories.lance", "lancedb", "crewai")
    assert part.line == ("unread: install mnemoscope[crewai] (CrewAI unified memory (LanceDB) at "
                         "/p/memory/memories.lance needs the lancedb package: pip install 'mnemoscope[crewai]')")
    assert part.to_dict()["extra"] == "crewai" and part.to_dict()["line"] == part.line


def test_a_store_wholly_unread_is_refused_as_unreadable_input_with_every_line():
    parts = [UnreadPart("A", "/a", "pa", "x"), UnreadPart("B", "/b", "pb", "y")]
    error = MissingExtraError(parts)
    assert isinstance(error, UnreadableStoreError) and error.exit_code == 2
    assert str(error) == f"{parts[0].line}; {parts[1].line}" and error.unread == parts


def test_installed_finds_a_package_without_importing_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delitem(sys.modules, "json", raising=False)
    assert installed("json") and "json" not in sys.modules
    assert not installed("no_such_package_here") and not installed("json.no_such_module")
    monkeypatch.setitem(sys.modules, "json", None)  # a package blocked, as the tests mimic an absent one
    assert not installed("json")
