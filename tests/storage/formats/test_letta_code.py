"""Letta Code's memory filesystem (~/.letta/agents/<id>/memory), written as Letta Code writes it:
``git init`` on main with its pre-commit hook (tests/helpers/letta_code_pre_commit.sh, copied from
letta-code src/agent/memory-git-hooks.ts) and local config (initializeLocalMemoryRepo), the first
blocks rendered by renderInitialMemoryFile and committed as "chore: initialize local memory", then
the memory tool's create and str_replace (renderMemoryFile, committed with the tool's reason as
the agent). A read_only block comes from the server (a clone brings it; the hook would refuse an
agent setting it), so it is committed without the hook."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.model import Layer
from mnemoscope.storage.opening import open_store

AGENT = "agent-7f3a9c"
AGENT_NAME = "Letta Code"
HOOK = Path(__file__).parents[2] / "helpers" / "letta_code_pre_commit.sh"
PERSONA = "I'm a coding assistant that learns from every session."
HUMAN = "The user is called Dana.\nWorks on a Rust compiler."
PROJECT = "Build with `cargo build --release`.\nRun tests with `cargo nextest run`."


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def commit_as_agent(repo: Path, paths: list[str], reason: str, *extra: str) -> None:
    """commitMemoryPaths: stage the paths, commit with the reason as the agent."""
    git(repo, "add", "-A", "--", *paths)
    git(repo, "-c", f"user.name={AGENT_NAME}", "-c", f"user.email={AGENT}@letta.com", "commit", *extra, "-m", reason)


def initial_block(description: str, value: str) -> str:
    """renderInitialMemoryFile (local backend)."""
    return "\n".join(["---", f"description: {description}", "---", value])


def render_memory_file(description: str, body: str, read_only: str | None = None) -> str:
    """The memory tool's renderMemoryFile."""
    lines = ["---", f"description: {description}"] + ([f"read_only: {read_only}"] if read_only is not None else []) + ["---"]
    header = "\n".join(lines)
    return f"{header}\n" if not body else f"{header}\n{body}"


def build_letta_code_home(tmp_path: Path) -> Path:
    home = tmp_path / ".letta"
    repo = home / "agents" / AGENT / "memory"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    shutil.copy(HOOK, hooks / "pre-commit")
    (hooks / "pre-commit").chmod(0o755)
    for key, value in (("letta.agentId", AGENT), ("user.email", f"{AGENT}@letta.com"), ("user.name", AGENT_NAME),
                       ("commit.gpgsign", "false")):
        git(repo, "config", "--local", key, value)
    (repo / "system").mkdir()
    (repo / "system" / "human.md").write_text(initial_block("What I know about the user", HUMAN), encoding="utf-8")
    (repo / "system" / "persona.md").write_text(initial_block("Who I am", PERSONA), encoding="utf-8")
    commit_as_agent(repo, ["system/human.md", "system/persona.md"], "chore: initialize local memory")
    (repo / "reference").mkdir()
    (repo / "reference" / "project.md").write_text(render_memory_file("How this project builds", PROJECT), encoding="utf-8")
    commit_as_agent(repo, ["reference/project.md"], "Record the project's build steps")
    human = (repo / "system" / "human.md").read_text(encoding="utf-8")
    (repo / "system" / "human.md").write_text(human.replace("Rust compiler.", "Rust compiler; prefers metric units."),
                                              encoding="utf-8")
    commit_as_agent(repo, ["system/human.md"], "User prefers metric units")
    (repo / "system" / "org_policy.md").write_text(
        render_memory_file("Organisation policy", "Never push to main.", read_only="true"), encoding="utf-8")
    commit_as_agent(repo, ["system/org_policy.md"], "sync from server", "--no-verify")
    (repo / "skills" / "deploy").mkdir(parents=True)
    (repo / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Deploy the service\n---\n# Deploy\n\nRun `make deploy`.\n", encoding="utf-8")
    commit_as_agent(repo, ["skills/deploy/SKILL.md"], "Add the deploy skill")
    return home


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return build_letta_code_home(tmp_path)


def repo_of(home: Path) -> Path:
    return home / "agents" / AGENT / "memory"


def test_blocks_are_read_with_their_frontmatter_and_commits(home: Path) -> None:
    for opened in (home, home / "agents" / AGENT, repo_of(home)):
        with open_store(opened) as store:
            assert [f["format"] for f in store.info()["formats"]] == ["letta-code"], opened
            memories = {m.metadata["label"]: m for m in store.page(limit=20)}
    assert sorted(memories) == ["reference/project", "skills/deploy/SKILL", "system/human", "system/org_policy",
                                "system/persona"]
    human = memories["system/human"]
    assert human.id == f"letta-code:{AGENT}:system/human" and human.channel == AGENT
    assert human.content == HUMAN.replace("Rust compiler.", "Rust compiler; prefers metric units.")
    assert human.layer == Layer.CORE and human.metadata["attached"] and human.metadata["description"] == "What I know about the user"
    assert (human.metadata["commits"], human.metadata["last_reason"]) == (2, "User prefers metric units")
    assert human.metadata["last_author"] == f"{AGENT_NAME} <{AGENT}@letta.com>"
    log = git(repo_of(home), "log", "--format=%at", "--", "system/human.md").split()
    assert (human.updated_at.timestamp(), human.created_at.timestamp()) == (int(log[0]), int(log[-1]))
    project = memories["reference/project"]
    assert project.layer == Layer.SEMANTIC and not project.metadata["attached"] and project.content == PROJECT
    assert memories["skills/deploy/SKILL"].layer == Layer.PROCEDURAL
    assert memories["system/org_policy"].metadata["read_only"] and not human.metadata["read_only"]
    assert "limit" not in human.metadata and human.salience is None and human.access_count is None
    with open_store(home) as store:
        history = store.owner_history(human.id)
    assert [h["reason"] for h in history] == ["User prefers metric units", "chore: initialize local memory"]


def test_an_edit_is_committed_as_the_memory_tool_commits_and_undo_commits_it_back(home: Path) -> None:
    repo = repo_of(home)
    before = (repo / "system" / "human.md").read_text(encoding="utf-8")
    with open_store(home) as store:
        Curator(store).edit(f"letta-code:{AGENT}:system/human", content="The user is called Dana Reis.")
    after = git(repo, "show", "HEAD:system/human.md")
    assert after == "---\ndescription: What I know about the user\n---\nThe user is called Dana Reis."
    assert git(repo, "status", "--porcelain") == ""  # committed; the journal is outside the repository
    assert git(repo, "log", "-1", "--format=%s").strip() == "edit system/human (Mnemoscope)"
    assert not (repo / ".mnemoscope").exists()
    with open_store(home) as store:
        Curator(store).undo()
    assert git(repo, "show", "HEAD:system/human.md") == before
    assert git(repo, "status", "--porcelain") == "" and len(git(repo, "log", "--format=%H").split()) == 7


def test_delete_commits_the_removal_and_undo_brings_the_block_back(home: Path) -> None:
    repo = repo_of(home)
    with open_store(home) as store:
        Curator(store).delete(f"letta-code:{AGENT}:reference/project")
        assert store.find(f"letta-code:{AGENT}:reference/project") is None
    assert not (repo / "reference" / "project.md").exists()
    assert "reference/project.md" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    with open_store(home) as store:
        Curator(store).undo()
    assert git(repo, "show", "HEAD:reference/project.md") == render_memory_file("How this project builds", PROJECT)


def test_read_only_blocks_and_a_dirty_repository_are_refused_as_letta_code_refuses_them(home: Path) -> None:
    repo = repo_of(home)
    with open_store(home) as store:
        with pytest.raises(UnsupportedError, match="read_only"):
            Curator(store).edit(f"letta-code:{AGENT}:system/org_policy", content="Push anywhere.")
    assert "Never push to main." in (repo / "system" / "org_policy.md").read_text(encoding="utf-8")
    (repo / "reference" / "draft.md").write_text("---\ndescription: A draft\n---\nnot committed yet", encoding="utf-8")
    with open_store(home) as store:
        assert any("uncommitted changes (reference/draft.md)" in p for p in store.info()["formats"][0]["problems"])
        with pytest.raises(UnsupportedError, match="uncommitted changes"):
            Curator(store).edit(f"letta-code:{AGENT}:system/human", content="changed")
    assert "prefers metric units" in (repo / "system" / "human.md").read_text(encoding="utf-8")
    assert len(git(repo, "log", "--format=%H").split()) == 5


def test_a_block_without_frontmatter_is_a_problem_and_the_hook_keeps_it_out(home: Path) -> None:
    repo = repo_of(home)
    (repo / "reference" / "loose.md").write_text("no frontmatter here", encoding="utf-8")
    with pytest.raises(subprocess.CalledProcessError):  # Letta Code's own hook refuses it
        commit_as_agent(repo, ["reference/loose.md"], "add a loose note")
    git(repo, "reset", "-q")
    with open_store(home) as store:
        problems = store.info()["formats"][0]["problems"]
    assert "reference/loose.md has no frontmatter; Letta Code's pre-commit hook rejects it" in problems
