"""Agentix's Memories tool (seed 001): the notes an agent keeps as files under ``.agentix``.

The main agent's memories are ``<cwd>/.agentix/memories/``. Each sub-agent with a memory scope
keeps its own folder, ``<name>`` being the sanitized sub-agent name:

    user     ~/.agentix/agent-memory/<name>/              shared by every project on the machine
    project  <cwd>/.agentix/agent-memory/<name>/          per project (committed)
    local    <cwd>/.agentix/agent-memory-local/<name>/    per project, this machine only

Opening a project folder (or its ``.agentix``, or one memory folder in it) shows all of them:
the main agent's, every sub-agent's in the project and local scopes, and the user scope's from
the home folder; opening the home folder shows the user scope (and the main agent's memories of
a process run there). The tool writes any file the model asks for (view, create, str_replace,
delete, rename), so every text file is one memory; its channel is ``main`` or
``<scope>/<sub-agent>`` (the scope and the sub-agent are the facets). Edits rewrite the file
atomically and deletes remove it, as the tool's own commands do; undo puts the bytes back.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

from ..detect.looks import is_dir, names
from ..errors import UnsupportedError
from ..model import Kind, Layer
from ..native.markdown.files import inside
from ..source import Snapshot
from .base import Contents, FormatSource, make_memory
from .match import FormatMatch
from .text_files import edited_text, files_token, text_snapshot, write_text_file

AGENTIX = ".agentix"
MAIN = "main"
SCOPE_FOLDERS = {"project": "agent-memory", "local": "agent-memory-local"}
MAX_BYTES = 2_000_000


def memory_folders(project: Path | None, home: Path | None) -> dict[str, Path]:
    """Channel ("main", "<scope>/<sub-agent>") -> the folder the Memories tool writes for it."""
    folders: dict[str, Path] = {}
    if project is not None:
        base = project / AGENTIX
        if is_dir(base / "memories"):
            folders[MAIN] = base / "memories"
        if home is None or project.resolve() != home.resolve():
            for scope, name in SCOPE_FOLDERS.items():
                folders.update({f"{scope}/{agent.name}": agent for agent in _agents(base / name)})
    if home is not None:
        folders.update({f"user/{agent.name}": agent for agent in _agents(home / AGENTIX / "agent-memory")})
    return folders


def sub_agents(channel_counts: dict[str, int]) -> dict[str, tuple[tuple[str, ...], int]]:
    """Sub-agent -> (its channels in every scope, how many memories they hold): the facet across
    scopes that the channels (one per scope and sub-agent) do not give."""
    found: dict[str, tuple[tuple[str, ...], int]] = {}
    for channel, n in sorted(channel_counts.items()):
        scope, _, agent = channel.partition("/")
        if agent and scope in (*SCOPE_FOLDERS, "user"):
            channels, total = found.get(agent, ((), 0))
            found[agent] = ((*channels, channel), total + n)
    return found


def _agents(folder: Path) -> list[Path]:
    return [folder / name for name in sorted(names(folder)) if not name.startswith(".") and is_dir(folder / name)]


class AgentixSource(FormatSource):
    kind = Kind.MARKDOWN
    format = "agentix"
    label = "Agentix memories"
    id_prefix = "agentix:"
    editable_fields = ("content",)

    def __init__(self, project: Path | None, home: Path | None) -> None:
        super().__init__(project or home or Path.home(), [])
        self.project, self.home = project, home

    def folders(self) -> dict[str, Path]:
        return memory_folders(self.project, self.home)

    def _files(self) -> list[tuple[str, Path, str]]:
        """(channel, folder, path inside it) of every file the tool may have written."""
        found = []
        for channel, folder in self.folders().items():
            for dirpath, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    if not name.startswith("."):
                        found.append((channel, folder, os.path.relpath(os.path.join(dirpath, name), folder)))
        return found

    def watched(self) -> list[Path]:
        return [folder / rel for _channel, folder, rel in self._files()]

    def change_token(self) -> str:
        return files_token("agentix:", ((f"{channel}/{rel}", folder / rel) for channel, folder, rel in self._files()))

    def load(self) -> Contents:
        contents = Contents()
        for channel, folder, rel in self._files():
            path = folder / rel
            shown = _shown(folder, rel, self.project, self.home)
            try:
                st = path.stat()
            except OSError:
                continue
            if st.st_size > MAX_BYTES:
                contents.problems.append(f"{shown} is larger than {MAX_BYTES:,} bytes; left out")
                continue
            snap = self._snapshot(folder, rel)
            if snap is None:
                contents.problems.append(f"{shown} is not UTF-8 text; left out")
                continue
            scope, _slash, agent = channel.partition("/")
            contents.memories.append(
                make_memory(
                    self, f"{channel}/{rel}", snap["text"], location=shown, path=shown,
                    created=st.st_mtime, updated=st.st_mtime, layer=Layer.SEMANTIC, channel=channel,
                    metadata={"scope": scope if agent else MAIN, "agent": agent or MAIN, "file": rel,
                              "bytes": st.st_size},
                    snapshot=snap,
                )
            )
        return contents

    @staticmethod
    def _snapshot(folder: Path, rel: str) -> Snapshot | None:
        return text_snapshot(folder, rel)

    def _located(self, record_id: str) -> tuple[Path, str]:
        """The memory folder and the path inside it that record_id names; nothing outside."""
        rest = record_id[len(self.id_prefix):]
        head, _slash, tail = rest.partition("/")
        channel, rel = (head, tail) if head == MAIN else (f"{head}/{tail.partition('/')[0]}", tail.partition("/")[2])
        folder = self.folders().get(channel)
        if folder is None or inside(folder, rel) is None:
            raise UnsupportedError(f"{record_id} names no file in an Agentix memory folder.")
        return folder, rel

    def read_record(self, record_id: str) -> Snapshot | None:
        return self._snapshot(*self._located(record_id))

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        return edited_text(snap, requested)

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        folder, rel = self._located(record_id)
        self.check_expected(record_id, self._snapshot(folder, rel), expected)
        write_text_file(folder / rel, new)
        self.invalidate()
        return self._snapshot(folder, rel)

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "files": [str(f) for f in self.folders().values()]}


def _shown(folder: Path, rel: str, project: Path | None, home: Path | None) -> str:
    """The file as a person finds it: relative to the project (or to ~ for the user scope)."""
    for base, prefix in ((project, ""), (home, "~/")):
        if base is not None:
            try:
                return prefix + (folder / rel).relative_to(base).as_posix()
            except ValueError:
                continue
    return str(folder / rel)


def _holds_files(folder: Path) -> bool:
    return bool(names(folder))


def _project_of(path: Path) -> Path | None:
    """The folder whose .agentix path is, or is in (a project, or the home folder)."""
    for candidate in (path, *path.parents[:3]):
        if candidate.name == AGENTIX:
            return candidate.parent
    return path if AGENTIX in names(path) and is_dir(path / AGENTIX) else None


def detect(path: Path) -> list[FormatMatch]:
    project = _project_of(path)
    if project is None:
        return []
    home = Path.home()
    if not any(_holds_files(folder) for folder in memory_folders(project, home).values()):
        return []
    return [FormatMatch("agentix", AgentixSource.label, project / AGENTIX,
                        open=partial(AgentixSource, project, home), journal_dir=project)]
