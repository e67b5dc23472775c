"""The registry of foreign formats (storage/formats/registry.py): detect_formats over a home
folder holding a store of every supported tool, each written where that tool writes it
(detect/test_discover.build_home): each store is found by its own format, in the registry's order,
without a byte written; the native workspace and a bare memories table are left to the
native readers and to a mapping."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.formats.registry import FORMATS, NOT_DETECTED, SHARED_PARTS, detect_formats
from mnemoscope.storage.model import Kind
from detect.test_discover import build_home

# Where each tool's store is (build_home's label) -> (format, where the match is, relative to the store).
EXPECTED = {
    "OpenAI Agents": {("openai-agents", "agent_memory.db")},
    "mem0": {("mem0", "chroma")},
    "LangGraph": {("langgraph", "checkpoints.sqlite"), ("langgraph", "store.workspace.db")},
    "Google ADK": {("google-adk", "sessions.db")},
    "OpenAI Agents SDK": {("openai-agents", "conversations.db")},  # two table pairs in one file
    "AgenticX": {("agenticx-index", "memory/main.sqlite"), ("agenticx", "memory/sessions.sqlite"),
                 ("markdown", "workspace")},
    # The state dir is the store: each agent's database and the workspace are found there, under one name.
    "OpenClaw": {("openclaw", "."), ("markdown", ".")},
    "Letta": {("letta", "sqlite.db")},
    "CrewAI": {("crewai", "long_term_memory_storage.db"), ("chroma", "short_term/Researcher_Writer"),
               ("chroma", "entities/Researcher_Writer")},
    "Claude memory": {("claude-memory", "memories")},
    "Agentix": {("agentix", ".")},
    "Agentix (user scope)": {("agentix", ".")},
    "mem0 (SynthOrg ceo)": {("mem0", "qdrant")},
    "mem0 (SynthOrg qa-lead)": {("mem0", "qdrant")},
    "structured memory DB (five-layer agent)": {("facts-db", "facts.db")},
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_home(tmp_path_factory.mktemp("registry"))


def files_of(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}


def test_each_tools_store_is_found_by_its_own_format_and_nothing_is_written(home: dict[str, Path]) -> None:
    before = files_of(home[""])
    for label, formats in EXPECTED.items():
        store = home[label]
        found = detect_formats(store)
        assert {(m.format, m.location.relative_to(store).as_posix()) for m in found} == formats, label
        assert all(m.label for m in found)
    assert files_of(home[""]) == before


def test_the_native_workspace_and_a_bare_table_are_no_foreign_format(home: dict[str, Path]) -> None:
    assert detect_formats(home["Mnemoscope workspace"]) == []  # read by the native parts
    assert detect_formats(home["SQLite memory table"]) == []  # a table to map (sqlite_table, NOT_DETECTED)
    assert detect_formats(home[""] / "Documents") == []
    assert detect_formats(home[""] / "no-such-folder") == []


def test_a_folder_is_asked_about_itself_not_searched(home: dict[str, Path]) -> None:
    """The home folder holds the user-scope stores at its top; the projects below are discover's to find."""
    found = detect_formats(home[""])
    assert [(m.format, m.location) for m in found] == [
        ("agentix", home["Agentix (user scope)"]), ("letta", home["Letta"] / "sqlite.db")]


def test_a_file_is_detected_as_itself(home: dict[str, Path]) -> None:
    db = home["Google ADK"] / "sessions.db"
    assert [(m.format, m.location) for m in detect_formats(db)] == [("google-adk", db)]
    assert detect_formats(home[""] / "Documents" / "notes.txt") == []


def test_matches_come_in_the_registrys_order() -> None:
    assert FORMATS.index("mem0") < FORMATS.index("langgraph") < FORMATS.index("mnemoscope_export")
    assert not set(FORMATS) & set(NOT_DETECTED) and not set(FORMATS) & set(SHARED_PARTS)


def test_claims_name_the_native_readings_a_format_replaces(home: dict[str, Path]) -> None:
    mem0 = detect_formats(home["mem0"])[0]
    assert mem0.claims == ((Kind.CHROMA, home["mem0"] / "chroma"),)  # read as mem0, not as a bare Chroma directory
    facts = detect_formats(home["structured memory DB (five-layer agent)"])[0]
    assert facts.claims == ((Kind.SQLITE, facts.location),)
    assert detect_formats(home["Google ADK"])[0].claims == ()


def test_every_match_opens_a_source_holding_the_tools_memories_or_sessions(home: dict[str, Path]) -> None:
    for label in ("OpenAI Agents", "LangGraph", "Google ADK", "Letta", "Claude memory", "Agentix",
                  "structured memory DB (five-layer agent)"):
        for match in detect_formats(home[label]):
            source = match.open()
            try:
                # LangGraph's checkpoints are conversations: sessions, not memories.
                assert source.count(MemoryQuery(statuses=())) > 0 or source.sessions(), (label, match.location)
            finally:
                source.close()
