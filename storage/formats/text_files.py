"""Memories kept one per text file (Claude's memory tool, Agentix's Memories tool): the file's
text as a snapshot, an edit as the tools make it, and the write that puts either on disk."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..atomic_file import atomic_write_bytes
from ..source import Snapshot


def text_snapshot(folder: Path, rel: str) -> Snapshot | None:
    """The file rel of folder as {"path", "text"}; None when it is gone or not UTF-8 text."""
    try:
        data = (folder / rel).read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        return {"path": rel, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return None


def edited_text(snap: Snapshot, requested: dict[str, Any]) -> Snapshot:
    """The snapshot with the requested content, keeping a final line break the file had."""
    text = requested["content"]
    if snap["text"].endswith("\n") and not text.endswith("\n"):
        text += "\n"
    return {**snap, "text": text}


def write_text_file(path: Path, new: Snapshot | None) -> None:
    """The tools' own create/str_replace (an atomic rewrite) or delete (new is None)."""
    if new is None:
        os.unlink(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, new["text"].encode("utf-8"))


def files_token(prefix: str, files: Iterable[tuple[str, Path]]) -> str:
    """A change token over the files (each named as the store names it): any file added,
    removed, renamed, rewritten or touched gives another one."""
    parts = []
    for name, path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        parts.append(f"{name}:{st.st_mtime_ns}:{st.st_size}")
    return prefix + "/".join(parts)
