"""Finding stores without a path: a home folder holding a store of every supported tool, each
written where that tool writes it (by the tool's own library where one installs here)."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from helpers.store_state import state_of
from mnemoscope.app.cli import main
from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.storage.demo import write_demo
from mnemoscope.storage.detect.discover import discover, usual_places
from mnemoscope.storage.errors import UnmappedTableError
from mnemoscope.storage.opening import remember_mapping
from mnemoscope.storage.detect.table_mapping import propose_mapping


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_home(tmp_path_factory.mktemp("discover"))


def build_home(base: Path) -> dict[str, Path]:
    """A home folder, and where each tool's store is in it ("" names the home folder itself)."""
    from formats import test_google_adk, test_langgraph, test_mem0, test_openai_agents
    from formats.test_agenticx import build_agenticx_history
    from formats.test_agentix import build_agentix
    from formats.test_claude_memory import build_claude_memories
    from formats.test_crewai import build_crewai_storage
    from formats.test_facts_db import build_facts_workspace
    from formats.test_letta import build_letta_home
    from formats.test_mem0_qdrant import build_synthorg
    from formats.test_openai_agents_sql import build
    from formats.test_sqlite_table import bot_db
    from helpers.owners import run_owner

    project, home = build_agentix(base)  # home/code/trip-planner, home/.agentix
    (home / "Documents").mkdir(parents=True)
    (home / "Documents" / "notes.txt").write_text("not a memory store\n")
    (home / "node_modules" / "x").mkdir(parents=True)  # skipped, however deep
    write_demo(home / "agent-workspace", now=datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)).close()
    (home / "projects" / "support-bot").mkdir(parents=True)
    build(home / "projects" / "support-bot" / "agent_memory.db", 40)
    (home / "mem0-agent").mkdir()
    run_owner(test_mem0.BUILD, root=str(home / "mem0-agent"), mem0_dir=str(home / "mem0-agent" / ".mem0"))
    (home / "projects" / "planner").mkdir()
    run_owner(test_langgraph.BUILD, root=str(home / "projects" / "planner"))
    (home / "projects" / "adk").mkdir()
    run_owner(test_google_adk.BUILD, db=str(home / "projects" / "adk" / "sessions.db"))
    (home / "projects" / "triage").mkdir()
    run_owner(test_openai_agents.BUILD, db=str(home / "projects" / "triage" / "conversations.db"),
              items=test_openai_agents.ITEMS)
    synthorg = build_synthorg(home / "synthorg-data")  # one mem0 store on embedded Qdrant per agent
    (home / "bots" / "discord").mkdir(parents=True)  # a bot's own memories table, beside its other files
    (home / "bots" / "discord" / "config.json").write_text("{}\n")
    bot = bot_db(home / "bots" / "discord" / "bot.db")
    app_db = sqlite3.connect(home / "bots" / "discord" / "cache.sqlite")  # an app's own database: not listed
    app_db.execute("CREATE TABLE http_cache (url TEXT PRIMARY KEY, body TEXT)")
    app_db.commit()
    app_db.close()
    return {
        "Mnemoscope workspace": home / "agent-workspace",
        "OpenAI Agents": home / "projects" / "support-bot",
        "mem0": home / "mem0-agent",
        "LangGraph": home / "projects" / "planner",
        "Google ADK": home / "projects" / "adk",
        "OpenAI Agents SDK": home / "projects" / "triage",
        "AgenticX": _with_config(build_agenticx_history(home)),  # with messages.json and a compaction
        "OpenClaw": _openclaw(home),
        "Letta": build_letta_home(home) / ".letta",
        "CrewAI": build_crewai_storage(_mkdir(home / ".local" / "share")),
        "Claude memory": build_claude_memories(home).parent,  # app/: opening it opens app/memories
        "Agentix": project / ".agentix",
        "Agentix (user scope)": home / ".agentix",
        "mem0 (SynthOrg ceo)": synthorg / "ceo",
        "mem0 (SynthOrg qa-lead)": synthorg / "qa-lead",
        "structured memory DB (five-layer agent)": build_facts_workspace(home / "assistant" / "workspace"),
        "SQLite memory table": bot,  # no format reads it: a table to map
    } | {"": home}


def _with_config(agenticx_home: Path) -> Path:
    """An AgenticX home whose config.yaml names its workspace (the detection reads it)."""
    (agenticx_home / "config.yaml").write_text("memory:\n  path: workspace\n", encoding="utf-8")
    return agenticx_home


def _openclaw(home: Path) -> Path:
    from formats.test_openclaw import build_openclaw_state

    return build_openclaw_state(home)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_discover_lists_every_tools_store_in_a_home_folder_and_writes_nothing(
    home: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))  # where mappings are remembered
    root = home[""]
    before = state_of(root)
    found = discover([root])
    assert state_of(root) == before  # nothing written, nothing left behind
    by_path = {f.path: f for f in found}
    expected = {path for tool, path in home.items() if tool}
    assert set(by_path) == expected, sorted(str(p) for p in set(by_path) ^ expected)
    for tool, path in home.items():
        if not tool:
            continue
        store = by_path[path]
        assert tool.split()[0].lower() in store.tool.lower(), (tool, store.tool)
        if tool == "SQLite memory table":  # opened once its table is mapped, as the app asks
            assert store.tool == "SQLite memory table memories (not mapped yet)" and store.memories == 3
            with pytest.raises(UnmappedTableError, match="mnemoscope map"):
                open_store(path, read_only=True)
            remember_mapping(path, propose_mapping(path))
        with open_store(path, read_only=True) as opened:  # the app opens each from the list
            assert store.memories == opened.count(MemoryQuery(statuses=())) > 0, tool
        assert store.size > 0 and store.last_write is not None and not store.problem


def test_discover_on_the_command_line(capsys, home: dict[str, Path]) -> None:
    assert main(["discover", str(home[""]), "--json"]) == 0
    stores = json.loads(capsys.readouterr().out)["stores"]
    assert {Path(s["path"]) for s in stores} == {p for t, p in home.items() if t}
    assert main(["discover", str(home[""] / ".letta"), "--depth", "0"]) == 0
    out = capsys.readouterr().out
    assert "Letta" in out and "(1 stores)" in out
    assert main(["discover", str(home[""]), "--depth", "0", "--json"]) == 0  # ~ itself: only its tool folders
    assert [Path(s["path"]) for s in json.loads(capsys.readouterr().out)["stores"]] == [
        home["Agentix (user scope)"], home["Letta"]]


def test_usual_places_are_the_tools_folders_that_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".agenticx").mkdir()
    (tmp_path / ".letta").mkdir()
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert usual_places(tmp_path) == [tmp_path, tmp_path / ".agenticx", tmp_path / ".letta"]
    (tmp_path / ".local" / "share").mkdir(parents=True)
    assert usual_places(tmp_path)[-1] == tmp_path / ".local" / "share"


def test_opening_a_folder_that_only_holds_stores_names_them(capsys, home: dict[str, Path]) -> None:
    projects = home[""] / "projects"
    assert main(["ls", str(projects)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mnemoscope: {projects} is no memory store itself but holds 4: ")
    assert str(home["LangGraph"]) in err and "discover" in err and len(err.strip().splitlines()) == 1


def test_a_store_part_left_unread_is_shown_where_its_count_would_be() -> None:
    from mnemoscope.storage.detect.discover import FoundStore, memories_shown

    line = "unread: install mnemoscope[crewai] (CrewAI unified memory (LanceDB) at /p needs the lancedb package: ...)"
    assert memories_shown(None, [line]) == "unread: install mnemoscope[crewai]"  # nothing read: no 0
    assert memories_shown(4, [line, line]) == "4 + unread: install mnemoscope[crewai]"
    assert memories_shown(0) == "0" and memories_shown(None) == "?"
    found = FoundStore("CrewAI", Path("/p"), 1, None, None, unread=(line,))
    assert found.memories_shown == "unread: install mnemoscope[crewai]" and found.to_dict()["unread"] == [line]


def test_the_walk_lists_each_folder_once_and_never_goes_into_skipped_folders_or_a_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from collections import Counter

    from mnemoscope.storage.detect import looks
    from mnemoscope.storage.native.db.sqlite_source import SqliteSource

    project = tmp_path / "projects" / "p1"
    for deep in ("node_modules/pkg/lib", ".git/objects/ab", "src/mod", "agent/inner/deeper"):
        (project / deep).mkdir(parents=True)
        (project / deep / "f.txt").write_text("x")
    SqliteSource.open(project / "agent" / "memory.db", create=True).close()
    listed: Counter[str] = Counter()
    real_scandir = os.scandir

    def counting_scandir(folder: str):  # noqa: ANN202
        listed[os.fspath(folder)] += 1
        return real_scandir(folder)

    monkeypatch.setattr(looks.os, "scandir", counting_scandir)
    found = discover([tmp_path], count=False)
    assert [f.path for f in found] == [project / "agent"]
    assert str(project / "src" / "mod") in listed and set(listed.values()) == {1}
    for never in ("node_modules/pkg", ".git/objects", "agent/inner/deeper"):
        assert not any(folder.startswith(str(project / never)) for folder in listed), never
