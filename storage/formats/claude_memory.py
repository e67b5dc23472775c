"""Directories kept by Claude's memory tool (``memory_20250818``).

The tool gives the model a ``/memories`` directory and file commands over it
(view, create, str_replace, insert, delete, rename); the application maps that
directory onto a folder on disk. Whatever the model wrote there is plain text
(markdown, notes, XML, JSON), so each file is one memory, in the channel of its
top folder. Edits rewrite the file atomically and deletes remove it, which is
exactly what the tool's own create and delete commands do; undo puts the bytes
back.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from ..detect.looks import is_dir, names
from ..errors import UnsupportedError
from ..model import GLOBAL_CHANNEL, Kind, Layer
from ..source import Snapshot
from .base import Contents, FormatSource, make_memory
from .match import FormatMatch
from .text_files import edited_text, files_token, text_snapshot, write_text_file

DIR_NAME = "memories"
TEXT_SUFFIXES = {".md", ".txt", ".xml", ".json", ".yaml", ".yml", ".csv", ""}
MAX_BYTES = 2_000_000


class ClaudeMemorySource(FormatSource):
    kind = Kind.MARKDOWN
    format = "claude-memory"
    label = "Claude memory directory"
    id_prefix = "claude:"
    editable_fields = ("content",)

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, [directory])

    def _paths(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*") if _is_memory_file(p, self.root))

    def watched(self) -> list[Path]:
        return self._paths()

    def change_token(self) -> str:
        return files_token("claude:", ((str(path.relative_to(self.root)), path) for path in self._paths()))

    def load(self) -> Contents:
        contents = Contents()
        for path in self._paths():
            rel = path.relative_to(self.root).as_posix()
            snap = self._snapshot(rel)
            if snap is None:
                contents.problems.append(f"{rel} is not UTF-8 text; left out")
                continue
            st = path.stat()
            top = rel.split("/", 1)[0] if "/" in rel else GLOBAL_CHANNEL
            contents.memories.append(
                make_memory(
                    self, rel, snap["text"], location=f"{DIR_NAME}/{rel}", path=rel,
                    created=st.st_mtime, updated=st.st_mtime, layer=Layer.SEMANTIC, channel=top,
                    metadata={"file": rel, "bytes": st.st_size}, snapshot=snap,
                )
            )
        return contents

    def _snapshot(self, rel: str) -> Snapshot | None:
        return text_snapshot(self.root, rel)

    def _rel(self, record_id: str) -> str:
        rel = record_id[len(self.id_prefix):]
        target = (self.root / rel).resolve()
        if self.root.resolve() not in target.parents:
            raise UnsupportedError(f"{record_id} points outside {self.root}.")
        return rel

    def read_record(self, record_id: str) -> Snapshot | None:
        return self._snapshot(self._rel(record_id))

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        return edited_text(snap, requested)

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        rel = self._rel(record_id)
        self.check_expected(record_id, self._snapshot(rel), expected)
        write_text_file(self.root / rel, new)
        self.invalidate()
        return self._snapshot(rel)


def _is_memory_file(path: Path, root: Path) -> bool:
    rel = path.relative_to(root)
    if any(part.startswith(".") for part in rel.parts):
        return False
    return path.is_file() and path.suffix.lower() in TEXT_SUFFIXES and path.stat().st_size <= MAX_BYTES


def detect(path: Path) -> list[FormatMatch]:
    for directory in (path, path / DIR_NAME) if path.name == DIR_NAME or DIR_NAME in names(path) else ():
        if directory.name == DIR_NAME and directory.parent.name != ".agentix" and is_dir(directory):
            # (.agentix/memories is the Agentix main agent's: agentix.py reads it with its sub-agents')
            if any(_is_memory_file(p, directory) for p in directory.rglob("*")):
                # The model lists this directory; the journal stays out of its sight.
                return [FormatMatch("claude-memory", "Claude memory directory", directory,
                                    open=partial(ClaudeMemorySource, directory), journal_dir=directory.parent)]
    return []
