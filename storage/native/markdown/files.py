"""Which files of a workspace are its markdown memory files, and how they are read.

The files: MEMORY.md, USER.md, SOUL.md, ... at the root, learnings/*.md, memory/*.md (daily logs
are memory/YYYY-MM-DD.md); each gives its blocks a layer, and a daily log its date. A file is
UTF-8 (a byte-order mark is allowed), and only files inside the workspace are read or written
(see inside(): no absolute path, no '..', no link that leads out).
"""

from __future__ import annotations

import os
import re
import stat
from datetime import datetime, timezone
from pathlib import Path

from ...errors import StoreFileError, UnreadableStoreError
from ...model import Layer

ROOT_FILES: dict[str, Layer] = {
    "IDENTITY.md": Layer.CORE,
    "SOUL.md": Layer.CORE,
    "AGENTS.md": Layer.CORE,
    "USER.md": Layer.SOCIAL,
    "MEMORY.md": Layer.SEMANTIC,
    "HEARTBEAT.md": Layer.PROCEDURAL,
}
LEARNINGS_FILES = ("learnings/errors.md", "learnings/corrections.md")
MEMORY_DIRS = ("memory",)  # (.agentix/memories is the Agentix format's, files of every kind: formats/agentix.py)
DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
MEMORY_FILE = "MEMORY.md"
BOM = "\ufeff"
BOM_BYTES = BOM.encode("utf-8")


def layer_for(rel_path: str) -> Layer:
    if rel_path in ROOT_FILES:
        return ROOT_FILES[rel_path]
    if rel_path.startswith("learnings/"):
        return Layer.PROCEDURAL
    if rel_path.startswith("memory/") and DAILY_NAME.match(rel_path.split("/")[-1]):
        return Layer.EPISODIC
    return Layer.SEMANTIC


def daily_date(rel_path: str) -> datetime | None:
    m = DAILY_NAME.match(rel_path.split("/")[-1])
    if not m or not rel_path.startswith("memory/"):
        return None
    try:
        return datetime(int(m[1]), int(m[2]), int(m[3]), tzinfo=timezone.utc)
    except ValueError:
        return None


def require_utf8(data: bytes, rel_path: str) -> None:
    """Refuse a file that is not UTF-8: workspace markdown must be."""
    if data.isascii():
        return
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableStoreError(
            f"{rel_path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "workspace markdown must be UTF-8."
        ) from None


def inside(root: Path, rel: str) -> Path | None:
    """The real path of rel inside root, or None when rel leaves root: an absolute path, a '..'
    step, or a link (the file's or a folder's on the way) whose target is outside root."""
    if not rel or rel.startswith(("/", "\\")) or Path(rel).is_absolute() or ".." in re.split(r"[/\\]", rel):
        return None
    try:
        real_root = root.resolve()
        path = (real_root / rel).resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL in the name
        return None
    return path if path.is_relative_to(real_root) and path != real_root else None


def file_or_unreadable(path: Path) -> bool:
    """Whether path is a file, or may be one this user cannot look at (a folder on its way denies
    it): listed, so that reading it says why it cannot be read instead of leaving it out unsaid."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False


def unlisted_folder(root: Path, rel: str) -> str:
    """Why the files of root's folder rel are not read ("" when they are): it cannot be listed here,
    or it links outside root."""
    if not os.access(root / rel, os.R_OK | os.X_OK):
        return f"{rel}/ cannot be listed here (permission denied); its files are not read"
    if inside(root, rel) is None:
        return f"{rel}/ links to a folder outside {root}; its files are neither read nor written"
    return ""


def refuse_unwritable(root: Path, rel: str) -> None:
    """StoreFileError when rel cannot be replaced here (the atomic write makes a file beside it and
    renames it over rel: its folder must let this user in and write); a step is refused with it
    before anything is written."""
    path = inside(root, rel)
    folder = path.parent if path is not None else None
    if folder is not None and folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        shown = folder.relative_to(root.resolve()).as_posix() if folder != root.resolve() else "the workspace folder"
        raise StoreFileError(f"{rel} cannot be written: {shown} is read-only here; nothing was written.")


def markdown_files_under(root: Path, folder: str) -> tuple[list[str], list[str]]:
    """The *.md files under root/folder as Path.rglob finds them (every level, links to folders not
    followed), relative to root: (links, plain files). A plain file under a folder reached without
    a link is inside root; a link must be resolved to tell."""
    links: list[str] = []
    plain: list[str] = []
    pending = [(root / folder, folder)]
    while pending:
        here, rel = pending.pop()
        try:
            with os.scandir(here) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            try:
                if entry.is_dir() and not entry.is_symlink():
                    pending.append((Path(entry.path), f"{rel}/{entry.name}"))
                elif entry.name.endswith(".md") and entry.is_file():
                    (links if entry.is_symlink() else plain).append(f"{rel}/{entry.name}")
            except OSError:
                continue
    return links, plain
