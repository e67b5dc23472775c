"""Agentix's Memories tool (seed 001): the main agent's memories and every sub-agent's, in all
three scopes, as one store; files written as the tool writes them (any text file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.store_state import state_of

from mnemoscope.app.cli import main
from mnemoscope.storage import Curator, MemoryQuery, open_store

ALL = MemoryQuery(statuses=())


def build_agentix(tmp_path: Path) -> tuple[Path, Path]:
    """(project, home): a project using all three scopes, and the home folder of its user."""
    home, project = tmp_path / "home", tmp_path / "home" / "code" / "trip-planner"
    files = {
        project / ".agentix" / "memories" / "user.md": "# User\n- Ana prefers night trains\n",
        project / ".agentix" / "memories" / "preferences.json": '{"seat": "window"}\n',
        project / ".agentix" / "memories" / "notes" / "todo.txt": "book Lisbon hotel\n",
        project / ".agentix" / "agent-memory" / "researcher" / "sources.md": "- CP timetables are reliable\n",
        project / ".agentix" / "agent-memory" / "researcher" / "findings.yaml": "night_train: true\n",
        project / ".agentix" / "agent-memory-local" / "researcher" / "tokens.txt": "rail API sandbox only\n",
        home / ".agentix" / "agent-memory" / "writer" / "style.md": "- short sentences\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (project / ".agentix" / "memories" / "photo.bin").write_bytes(b"\xff\xd8\xff\x00")
    return project, home


@pytest.fixture
def agentix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    project, home = build_agentix(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    return project, home


def test_a_project_shows_the_main_agent_and_every_sub_agent_in_every_scope(agentix) -> None:
    project, _home = agentix
    with open_store(project, read_only=True) as store:
        counts = store.counts()
        assert counts["total"] == 7
        assert counts["channels"] == {"main": 3, "project/researcher": 2, "local/researcher": 1, "user/writer": 1}
        memories = {m.metadata["file"]: m for m in store.page(ALL, limit=50)}
        assert memories["preferences.json"].content == '{"seat": "window"}\n'  # every file kind the tool writes
        assert memories["style.md"].source.path == "~/.agentix/agent-memory/writer/style.md"
        assert (memories["tokens.txt"].metadata["scope"], memories["tokens.txt"].metadata["agent"]) == ("local", "researcher")
        assert any("photo.bin is not UTF-8 text" in p for p in store.info()["problems"] + store._sources[0].problems())


@pytest.mark.parametrize("opened", [".", ".agentix", ".agentix/memories", ".agentix/agent-memory/researcher"])
def test_every_view_of_the_project_is_the_same_store(agentix, opened: str) -> None:
    project, _home = agentix
    with open_store(project / opened, read_only=True) as store:
        assert store.count(ALL) == 7 and [s.format for s in store._sources] == ["agentix"]


def test_the_home_folder_shows_the_user_scope(agentix) -> None:
    _project, home = agentix
    with open_store(home, read_only=True) as store:
        assert store.counts()["channels"] == {"user/writer": 1}


def test_edit_and_delete_write_the_files_and_undo_puts_the_bytes_back(agentix) -> None:
    project, home = agentix
    before = state_of(project), state_of(home / ".agentix")
    with open_store(project) as store:
        curator = Curator(store)
        sources = next(m for m in store.page(ALL, limit=50) if m.metadata["file"] == "sources.md")
        curator.edit(sources.id, content="- CP timetables are reliable; Renfe less so")
        assert (project / ".agentix/agent-memory/researcher/sources.md").read_text() == (
            "- CP timetables are reliable; Renfe less so\n")
        style = next(m for m in store.page(ALL, limit=50) if m.channel == "user/writer")
        curator.delete(style.id)
        assert not (home / ".agentix/agent-memory/writer/style.md").exists()
        curator.undo()
        curator.undo()
    assert (state_of(project), state_of(home / ".agentix")) == before


def test_the_command_line_filters_by_sub_agent_and_scope(capsys, agentix) -> None:
    project, _home = agentix
    assert main(["ls", str(project), "--channel", "project/researcher", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["total"] == 2 and {m["channel"] for m in listed["memories"]} == {"project/researcher"}
