"""Letta Code's memory filesystem: a git repository of markdown memory blocks.

Read from letta-ai/letta-code (src/agent/memory-filesystem.ts, memory-git.ts,
memory-git-hooks.ts, src/tools/impl/memory.ts, src/backend/local/local-backend.ts).
Each agent's memory is ``~/.letta/agents/<agent-id>/memory/`` (the local backend's:
``<storage>/memfs/<agent-id>/memory``), a git repository on branch ``main`` whose local
config names the agent (``letta.agentId``). Every block is one markdown file, its label
the path without ``.md``: ``system/`` holds the blocks attached to the system prompt
(persona, human, ...), other files are detached (listed in the memory tree, read on
demand), ``skills/<name>/SKILL.md`` are skills. A block file opens with frontmatter
(``---`` / ``description: ...`` / optional ``read_only: true`` set by the server, legacy
``limit``) and its body is the block's value. The memory tool writes a file and commits it
(``git add -A -- <path>``; ``git commit -m <reason>`` as the agent, ``<agent-id>@letta.com``);
a pre-commit hook rejects files without frontmatter or description and any change to a
``read_only`` file, and the tool refuses to write while the repository has uncommitted
changes.

Each block is a memory: system blocks core, skills procedural, the others semantic; its
times and history are its commits (the owner's change log, shown by ``history``). An edit
or delete is made as the memory tool makes it: refused for a read-only block and while the
repository has uncommitted changes, the file rewritten (frontmatter kept byte for byte) and
committed, the commit checked by Letta Code's own hook; undo commits the old text back. A
remote-synced repository pushes these commits with the agent's own on its next sync.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from ..detect.looks import as_path, is_dir, names
from ..errors import StoreError, UnsupportedError
from ..model import Kind, Layer
from ..source import Capabilities, Snapshot
from ..timeutil import parse_time
from .base import Contents, FormatSource, make_memory
from .match import FormatMatch
from .text_files import files_token, text_snapshot, write_text_file

SYSTEM_DIR = "system"
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"
FRONTMATTER = re.compile(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$")
MAX_BYTES = 2_000_000
AUTHOR = ("Mnemoscope", "mnemoscope@localhost")
# A read never writes: git must not refresh the index or take its lock while it looks.
GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
RECORD = "\x1e"
FIELD = "\x1f"


def split_block(text: str) -> tuple[dict[str, str], str, str] | None:
    """(frontmatter keys, the frontmatter text as written, body) as the memory tool's
    ``parseMemoryFile`` reads a block; None when the file has no frontmatter."""
    match = FRONTMATTER.match(text)
    if match is None:
        return None
    keys: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() and not line[:1].isspace():
            keys[key.strip()] = value.strip()
    return keys, text[: match.start(2)], match.group(2)


def git(repo: Path, *args: str, check: bool = True) -> str:
    import subprocess  # (only a Letta Code store runs git: detecting one does not)

    try:
        done = subprocess.run(
            ["git", "-c", "core.quotepath=off", *args], cwd=repo, capture_output=True, text=True,
            env={**os.environ, **GIT_ENV}, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StoreError(f"git could not run in {repo}: {exc}") from None
    if check and done.returncode != 0:
        raise StoreError(f"git {args[0]} failed in {repo}: {(done.stderr or done.stdout).strip()}")
    return done.stdout


class LettaCodeMemorySource(FormatSource):
    kind = Kind.MARKDOWN
    format = "letta-code"
    label = "Letta Code memory filesystem"
    editable_fields = ("content",)
    deletable = True

    def __init__(self, repo: Path) -> None:
        super().__init__(repo, [repo])
        self.repo = repo
        self.agent_id = git(repo, "config", "--local", "--get", "letta.agentId", check=False).strip() or repo.parent.name
        self.id_prefix = f"letta-code:{self.agent_id}:"
        self._history: dict[str, list[dict[str, Any]]] = {}

    def _paths(self) -> list[Path]:
        return sorted(p for p in self.repo.rglob("*.md") if _is_block_file(p, self.repo))

    def watched(self) -> list[Path]:
        return self._paths()

    def change_token(self) -> str:
        head = self.repo / ".git" / "HEAD"
        files = [("HEAD", head), ("index", self.repo / ".git" / "index")]
        return files_token("letta-code:", [*files, *((str(p.relative_to(self.repo)), p) for p in self._paths())])

    def load(self) -> Contents:
        contents = Contents()
        self._history = self._commits()
        dirty = self._uncommitted()
        if dirty:
            contents.problems.append(
                f"the memory repository has uncommitted changes ({', '.join(sorted(dirty)[:5])}"
                f"{', ...' if len(dirty) > 5 else ''}): Letta Code's memory tool refuses to write until they are "
                "committed or discarded, and so does Mnemoscope"
            )
        for path in self._paths():
            rel = path.relative_to(self.repo).as_posix()
            snap = text_snapshot(self.repo, rel)
            if snap is None:
                contents.problems.append(f"{rel} is not UTF-8 text; left out")
                continue
            parts = split_block(snap["text"])
            keys: dict[str, str]
            if parts is None:
                contents.problems.append(f"{rel} has no frontmatter; Letta Code's pre-commit hook rejects it")
                keys, body = {}, snap["text"]
            else:
                keys, _header, body = parts
                if not keys.get("description") and not _is_skill(rel):
                    contents.problems.append(f"{rel} has no description; Letta Code's pre-commit hook rejects it")
            commits = self._history.get(rel, [])
            stat = path.stat()
            label = rel.removesuffix(".md")
            metadata: dict[str, Any] = {
                "label": label, "file": rel, "description": keys.get("description"),
                "attached": rel.startswith(f"{SYSTEM_DIR}/"), "read_only": keys.get("read_only") == "true",
                "commits": len(commits),
            }
            if "limit" in keys:
                metadata["limit"] = keys["limit"]
            if commits:
                last = commits[0]
                metadata.update(last_commit=last["commit"][:12], last_reason=last["reason"], last_author=last["author"])
            if rel in dirty:
                metadata["uncommitted"] = True
            updated = stat.st_mtime if rel in dirty or not commits else commits[0]["at"]
            contents.memories.append(
                make_memory(
                    self, label, body, location=f"memory/{rel}", path=rel,
                    created=commits[-1]["at"] if commits else stat.st_mtime, updated=updated,
                    layer=_layer(rel), channel=self.agent_id, metadata=metadata, snapshot=snap,
                )
            )
        return contents

    def _commits(self) -> dict[str, list[dict[str, Any]]]:
        """Per file, the commits that touched it, newest first (one ``git log`` for the repository)."""
        if not git(self.repo, "rev-parse", "--verify", "--quiet", "HEAD", check=False).strip():
            return {}
        log = git(self.repo, "log", f"--format={RECORD}%H{FIELD}%an <%ae>{FIELD}%aI{FIELD}%s", "--name-only", "HEAD")
        history: dict[str, list[dict[str, Any]]] = {}
        for record in log.split(RECORD)[1:]:
            head, _, files = record.partition("\n")
            sha, author, at, reason = (head.split(FIELD) + ["", "", "", ""])[:4]
            entry = {"commit": sha, "author": author, "at": parse_time(at), "reason": reason}
            for name in filter(None, (f.strip() for f in files.splitlines())):
                history.setdefault(name, []).append(entry)
        return history

    def _uncommitted(self) -> set[str]:
        out = git(self.repo, "status", "--porcelain", "--untracked-files=all", check=False)
        return {line[3:].split(" -> ")[-1].strip('"') for line in out.splitlines() if len(line) > 3}

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return replace(super().capabilities(record_id), history=True, sessions=False, scratchpad=False)

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The block's commits, newest first: Letta Code's own change log of it."""
        self.contents()
        rel = self._rel(memory_id)
        return [
            {**c, "at": at, "created_at": at, "event": c["reason"]}  # the keys every owner's history shares
            for c in self._history.get(rel, [])
            for at in [c["at"].isoformat() if c["at"] else None]
        ]

    # -- the write primitive: a file written and committed, as the memory tool does ---------------

    def _rel(self, record_id: str) -> str:
        rel = record_id[len(self.id_prefix):] + ".md"
        target = (self.repo / rel).resolve()
        if self.repo.resolve() not in target.parents or ".git" in Path(rel).parts:
            raise UnsupportedError(f"{record_id} points outside {self.repo}.")
        return rel

    def read_record(self, record_id: str) -> Snapshot | None:
        return text_snapshot(self.repo, self._rel(record_id))

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        parts = split_block(snap["text"])
        if parts is None:
            raise UnsupportedError(f"{snap['path']} has no frontmatter; Letta Code's memory tool does not edit it either.")
        keys, header, _body = parts
        if keys.get("read_only") == "true":
            raise UnsupportedError(f"{snap['path']} is read_only: Letta Code does not let it be modified.")
        return {**snap, "text": header + requested["content"]}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        rel = self._rel(record_id)
        current = text_snapshot(self.repo, rel)
        self.check_expected(record_id, current, expected)
        if current is not None and (split_block(current["text"]) or ({},))[0].get("read_only") == "true":
            raise UnsupportedError(f"{rel} is read_only: Letta Code does not let it be modified or deleted.")
        dirty = self._uncommitted()
        if dirty:
            raise UnsupportedError(
                f"The memory repository {self.repo} has uncommitted changes ({', '.join(sorted(dirty)[:5])}); "
                "Letta Code's memory tool refuses to write until they are committed or discarded, and so does Mnemoscope."
            )
        if new == current:
            return current
        write_text_file(self.repo / rel, new)
        verb = "delete" if new is None else "create" if current is None else "edit"
        try:
            git(self.repo, "add", "-A", "--", rel)
            git(self.repo, "-c", f"user.name={AUTHOR[0]}", "-c", f"user.email={AUTHOR[1]}", "commit", "-q", "-m",
                f"{verb} {rel.removesuffix('.md')} (Mnemoscope)", "--", rel)
        except StoreError as exc:  # the hook said no: the file goes back as it was
            git(self.repo, "reset", "-q", "HEAD", "--", rel, check=False)
            if current is not None:
                write_text_file(self.repo / rel, current)
            else:
                (self.repo / rel).unlink(missing_ok=True)
            raise UnsupportedError(f"Letta Code's memory repository refused the commit: {exc}") from None
        finally:
            self.invalidate()
        return text_snapshot(self.repo, rel)


def _is_skill(rel: str) -> bool:
    return rel.startswith(f"{SKILLS_DIR}/") and rel.endswith(f"/{SKILL_FILE}")


def _layer(rel: str) -> Layer:
    if rel.startswith(f"{SYSTEM_DIR}/"):
        return Layer.CORE
    return Layer.PROCEDURAL if _is_skill(rel) else Layer.SEMANTIC


def _is_block_file(path: Path, repo: Path) -> bool:
    rel = path.relative_to(repo)
    if any(part.startswith(".") for part in rel.parts):
        return False
    try:
        return path.is_file() and path.stat().st_size <= MAX_BYTES
    except OSError:
        return False


def is_memory_repo(path: Path) -> bool:
    """A git repository laid out as Letta Code's memory: a ``system/`` folder of block files, the
    first of which opens with frontmatter (or a local config naming the agent)."""
    if not (is_dir(path) and ".git" in names(path) and SYSTEM_DIR in names(path) and is_dir(path / SYSTEM_DIR)):
        return False
    config = path / ".git" / "config"
    try:
        if "[letta]" in config.read_text(encoding="utf-8", errors="replace"):
            return True
    except OSError:
        pass
    blocks = sorted(name for name in names(path / SYSTEM_DIR) if name.endswith(".md"))
    if not blocks:
        return False
    try:
        return split_block((path / SYSTEM_DIR / blocks[0]).read_text(encoding="utf-8")) is not None
    except (OSError, UnicodeDecodeError):
        return False


def detect(path: Path) -> list[FormatMatch]:
    """The memory repository itself, an agent's folder (``agents/<id>``), or a Letta home
    (``~/.letta``, or the local backend's ``memfs``) holding one per agent."""
    path = as_path(path)
    listed = names(path)  # (a name not there costs no Path: most folders hold none of these)
    candidates = [path, path / "memory"] if "memory" in listed else [path]
    for agents in (path / folder for folder in ("agents", "memfs") if folder in listed):
        if is_dir(agents):
            candidates += [agents / name / "memory" for name in sorted(names(agents))]
    return [
        # The journal stays outside the repository: a file in it would be an uncommitted change.
        FormatMatch("letta-code", LettaCodeMemorySource.label, repo, open=partial(LettaCodeMemorySource, repo),
                    claims=((Kind.MARKDOWN, repo),), journal_dir=repo.parent)
        for repo in candidates
        if is_memory_repo(repo)
    ]
