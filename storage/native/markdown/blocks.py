"""Blocks: the memory-sized pieces of a markdown file, and the ids they are known by.

Each top-level bullet, paragraph or quote is one block, located by file and line range (scan.py
finds them). Writes splice only a block's lines (render_block() shapes new lines like the old
ones).

A block's id names its file and its text, not its line: ``md:<file>:<key>``,
where key is a digest of the block's content (white space folded) and, for the
second and later blocks with the same content in one file, ``~2``, ``~3``...
Lines added or removed elsewhere (by hand, by an agent, by another delete) move
a block without changing its id, and no other block can take over the id of a
deleted one unless it says exactly the same thing. An edit gives the block the
id of its new text; the journal entry names both.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...source import Snapshot

LIST_MARKER = re.compile(r"^(\s*(?:[-*+]|\d{1,9}[.)])(?:\s+\[[ xX]\])?\s+)")
_HEX12 = re.compile(r"[0-9a-f]{12}")


@dataclass(frozen=True)
class Block:
    """One memory-sized piece of a markdown file."""

    path: str  # relative to the workspace, forward slashes
    line: int  # 1-based first line
    end: int  # 1-based last line, inclusive
    text: str  # the exact lines, line endings included
    content: str  # the text a person reads: list marker and indentation removed
    heading: str
    occurrence: int = 1  # 2 for the second block of this file with the same content, ...

    @property
    def key(self) -> str:
        return content_key(self.content, self.occurrence)

    @property
    def record_id(self) -> str:
        return record_id_for(self.path, self.content, self.occurrence)

    def snapshot(self) -> Snapshot:
        return {"path": self.path, "line": self.line, "text": self.text}


def content_digest(content: str) -> bytes:
    """The SHA-1 digest of content with its white space folded: a content key's 12 hex digits begin it."""
    return hashlib.sha1(" ".join(content.split()).encode("utf-8")).digest()


def content_key(content: str, occurrence: int = 1) -> str:
    return _with_occurrence(content_digest(content).hex()[:12], occurrence)


def _with_occurrence(digest: str, occurrence: int) -> str:
    return digest if occurrence <= 1 else f"{digest}~{occurrence}"


def record_id_for(rel_path: str, content: str, occurrence: int = 1) -> str:
    return f"md:{rel_path}:{content_key(content, occurrence)}"


def parse_record_id(record_id: str) -> tuple[str, str] | None:
    """(file, key) of an ``md:<file>:<key>`` id; None for anything else."""
    if not record_id.startswith("md:"):
        return None
    rel, _, key = record_id[3:].rpartition(":")
    if not rel or not re.fullmatch(r"[0-9a-f]{12}(~[0-9]+)?", key):
        return None
    return rel, key


def split_key(key: str) -> tuple[str, int] | None:
    """(12 hex digits, occurrence) of a content key as content_key() writes it (``~n`` only
    for n >= 2); None for anything else."""
    digest, _, n = key.partition("~")
    occurrence = int(n) if n.isdigit() else 1
    if _with_occurrence(digest, occurrence) != key or not _HEX12.fullmatch(digest):
        return None
    return digest, occurrence


def block_from_lines(
    lines: list[str], span: Sequence[int], rel_path: str, heading: str, list_item: bool, offset: int = 0
) -> Block:
    """The block on lines[span[0]:span[1]] (trailing blank lines left out); offset is the
    0-based line of lines[0] in its file."""
    start, end = span
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    raw = lines[start:end]
    return Block(
        path=rel_path,
        line=offset + start + 1,
        end=offset + end,
        text="".join(raw),
        content=block_content(raw, list_item),
        heading=heading,
    )


def block_content(raw_lines: list[str], list_item: bool) -> str:
    stripped = [line.rstrip("\r\n") for line in raw_lines]
    if not stripped:
        return ""
    if list_item:
        m = LIST_MARKER.match(stripped[0])
        width = len(m.group(1)) if m else 0
        first = stripped[0][width:]
        rest = [line[width:] if line[:width].strip() == "" else line.lstrip() for line in stripped[1:]]
        return "\n".join([first, *rest]).strip()
    if stripped[0].lstrip().startswith(">"):
        return "\n".join(re.sub(r"^\s*>\s?", "", line) for line in stripped).strip()
    return "\n".join(line.strip() for line in stripped).strip()


def render_block(old_text: str, new_content: str) -> str:
    """The lines for new_content, shaped like old_text (marker, indent, line ending)."""
    old_lines = split_lines(old_text) or [""]
    first = old_lines[0].rstrip("\r\n")
    newline = _line_ending(old_lines[0]) or _line_ending(old_lines[-1]) or "\n"
    ending = _line_ending(old_lines[-1]) if old_text else "\n"
    content_lines = new_content.strip("\n").split("\n")
    m = LIST_MARKER.match(first)
    if m:
        prefix = m.group(1)
        indent = " " * len(prefix)
        out = [prefix + content_lines[0]] + [
            (indent + line) if line else "" for line in content_lines[1:]
        ]
    elif first.lstrip().startswith(">"):
        out = ["> " + line if line else ">" for line in content_lines]
    else:
        out = content_lines
    return newline.join(out) + ending


def _line_ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else line[-1:] if line.endswith(("\r", "\n")) else ""


def bullet_text(content: str) -> str:
    return render_block("- x\n", content)


_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, broken where the markdown parser breaks them
    (LF, CRLF, lone CR) and nowhere else: U+2028, form feed and NEL stay inside a line."""
    parts = _LINE_BREAK.split(text)
    return parts[:-1] if parts and parts[-1] == "" else parts


def normalized(content: str) -> str:
    """Content as copies are compared: white space folded, case ignored."""
    return " ".join(content.split()).casefold()
