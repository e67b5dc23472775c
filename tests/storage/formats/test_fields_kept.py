"""No field shown that its owner does not keep: over a store of every tool (the discover home,
each written where and as that tool writes it), a memory's salience, confidence, access count and
conversations are None wherever its format does not declare it keeps them (FormatSource.keeps),
null in JSON and "—" on the command line: never a default such as 0.5, 1.0 or 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from detect.test_discover import build_home
from formats.test_registry import EXPECTED
from helpers.cli_runs import run
from mnemoscope.storage import ABSENT, MemoryQuery, open_store
from mnemoscope.storage.model import OPTIONAL_FIELDS

# What each tool keeps, from its own schema (the test's reading, against which the formats'
# declarations are checked): mem0, LangGraph, ADK, OpenAI Agents, Letta, CrewAI, Claude's memory
# files, Agentix, OpenClaw and the workspaces' markdown keep no salience, confidence, access count
# or conversation count; AgenticX's memory index counts accesses; the five-layer facts DB keeps a
# decay score, accesses and (where it has the column) a confidence.
KEPT_BY_FORMAT = {
    "agenticx-index": {"access_count"},
    "facts-db": {"access_count", "salience", "confidence"},
}
KEPT_BY_STORE = {  # SynthOrg's entries in mem0 carry its confidence (_synthorg_confidence)
    "mem0 (SynthOrg ceo)": {"confidence"},
    "mem0 (SynthOrg qa-lead)": {"confidence"},
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_home(tmp_path_factory.mktemp("fields"))


def test_no_store_of_any_tool_shows_a_field_its_owner_does_not_keep(home: dict[str, Path]) -> None:
    seen: dict[str, int] = {}
    for label in EXPECTED:  # each tool's store in the home
        with open_store(home[label], read_only=True) as store:
            for memory in store.page(MemoryQuery(statuses=()), 500):
                source = store.source_for(memory.id)
                keeps = getattr(source, "keeps", None)
                if keeps is None:  # Mnemoscope's own readers (memory.db, a Chroma directory)
                    continue
                fmt = memory.source.format or memory.source.kind.value
                assert keeps == KEPT_BY_STORE.get(label, KEPT_BY_FORMAT.get(fmt, set())), (label, fmt)
                shown = memory.to_dict()
                for name in OPTIONAL_FIELDS:
                    if name not in keeps:
                        assert getattr(memory, name) is None and shown[name] is None, (label, memory.id, name)
                seen[fmt] = seen.get(fmt, 0) + 1
    # Every tool's format was looked at (not a test that passes on an empty home).
    assert {"mem0", "langgraph", "google-adk", "openai-agents", "letta", "crewai", "claude-memory", "agentix",
            "openclaw", "agenticx-index", "facts-db"} <= set(seen), seen


def test_the_command_line_shows_an_absent_field_as_absent(capsys: pytest.CaptureFixture[str],
                                                         home: dict[str, Path]) -> None:
    code, out, err = run(capsys, "ls", home["mem0"], "--json")
    assert code == 0, err
    memories = json.loads(out)["memories"]
    assert memories and all(m["salience"] is None and m["confidence"] is None for m in memories)
    code, out, err = run(capsys, "ls", home["mem0"])
    assert code == 0, err
    rows = [line for line in out.splitlines()[1:] if line.startswith(memories[0]["id"][:8])]
    assert rows and all(f" {ABSENT} " in row for row in rows)
    code, out, err = run(capsys, "show", home["mem0"], memories[0]["id"])
    assert code == 0, err
    assert f"salience {ABSENT} (no salience" in out and f"confidence {ABSENT}, accesses {ABSENT}" in out
