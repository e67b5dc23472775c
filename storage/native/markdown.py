"""Workspace markdown: MEMORY.md, USER.md, SOUL.md, memory/YYYY-MM-DD.md, ...

Each top-level bullet, paragraph or quote is one memory, located by file and
line range (markdown-it-py token maps). Writes splice only those lines and
replace the file atomically; every other byte stays as it was.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from markdown_it import MarkdownIt

from ..atomic_file import atomic_write_bytes
from ..errors import ConflictError, UnreadableStoreError
from ..model import GLOBAL_CHANNEL, Kind, Layer, Memory, SourceRef, Status
from ..query import MemoryQuery
from ..source import Capabilities, Snapshot, bin_by, count_by, keyword_rank, matches, page_of, revision_of

ROOT_FILES: dict[str, Layer] = {
    "IDENTITY.md": Layer.CORE,
    "SOUL.md": Layer.CORE,
    "AGENTS.md": Layer.CORE,
    "USER.md": Layer.SOCIAL,
    "MEMORY.md": Layer.SEMANTIC,
    "HEARTBEAT.md": Layer.PROCEDURAL,
}
LEARNINGS_FILES = ("learnings/errors.md", "learnings/corrections.md")
MEMORY_DIRS = ("memory", ".agentix/memories")
DAILY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")
CHANNEL_HEADING = re.compile(r"^(?:project|channel)\s*[:=]\s*(\S+)", re.IGNORECASE)
HASHTAG = re.compile(r"(?<![\w#&])#([A-Za-z][\w/-]*)")
LIST_MARKER = re.compile(r"^(\s*(?:[-*+]|\d{1,9}[.)])(?:\s+\[[ xX]\])?\s+)")
MEMORY_FILE = "MEMORY.md"

_parser = MarkdownIt("commonmark")


@dataclass(frozen=True)
class Block:
    """One memory-sized piece of a markdown file."""

    path: str  # relative to the workspace, forward slashes
    line: int  # 1-based first line
    end: int  # 1-based last line, inclusive
    text: str  # the exact lines, line endings included
    content: str  # the text a person reads: list marker and indentation removed
    heading: str

    @property
    def record_id(self) -> str:
        return f"md:{self.path}:{self.line}"

    def snapshot(self) -> Snapshot:
        return {"path": self.path, "line": self.line, "text": self.text}


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


def decode_markdown(data: bytes, rel_path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableStoreError(
            f"{rel_path} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "workspace markdown must be UTF-8."
        ) from None


def parse_blocks(text: str, rel_path: str) -> list[Block]:
    lines = text.splitlines(keepends=True)
    tokens = _parser.parse(text)
    blocks: list[Block] = []
    heading = ""
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open" and tok.level == 0:
            heading = tokens[i + 1].content.strip()
        elif tok.level == 0 and tok.type in ("paragraph_open", "blockquote_open") and tok.map:
            blocks.append(_block(lines, tok.map, rel_path, heading, list_item=False))
        elif tok.type == "list_item_open" and tok.level == 1 and tok.map:
            blocks.append(_block(lines, tok.map, rel_path, heading, list_item=True))
        i += 1
    return [b for b in blocks if b.content.strip()]


def _block(lines: list[str], span: list[int], rel_path: str, heading: str, list_item: bool) -> Block:
    start, end = span
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    raw = lines[start:end]
    return Block(
        path=rel_path,
        line=start + 1,
        end=end,
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
    first = old_text.splitlines()[0] if old_text else ""
    newline = "\r\n" if "\r\n" in old_text else "\n"
    ending = newline if old_text.endswith("\n") or not old_text else ""
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


def bullet_text(content: str) -> str:
    return render_block("- x\n", content)


class MarkdownSource:
    """The markdown files of one workspace folder."""

    kind = Kind.MARKDOWN
    format = "markdown"
    label = "workspace markdown"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: dict[str, tuple[tuple[int, int], list[Block]]] = {}
        self._mirrors: set[tuple[str, str]] = set()
        for rel in self.files():  # fail on open, not later, for an unreadable file
            self.blocks(rel)

    @staticmethod
    def detect(path: Path) -> float:
        path = Path(path)
        if not path.is_dir():
            return 0.0
        if any((path / name).is_file() for name in ROOT_FILES):
            return 1.0
        if any((path / rel).is_file() for rel in LEARNINGS_FILES):
            return 0.9
        for d in MEMORY_DIRS:
            folder = path / d
            if folder.is_dir() and any(folder.glob("*.md")):
                return 0.9
        return 0.0

    @classmethod
    def open(cls, path: Path) -> MarkdownSource:
        return cls(path)

    def close(self) -> None:
        self._cache.clear()

    def capabilities(self) -> Capabilities:
        return Capabilities(
            editable_fields=("content",),
            can_promote=True,
            can_soft_delete=True,
            keyword_search=True,
        )

    def set_mirrors(self, pairs: set[tuple[str, str]]) -> None:
        """(file, content) pairs that are copies of memories kept in memory.db."""
        self._mirrors = {(f, _normalize(c)) for f, c in pairs}

    # -- files -------------------------------------------------------------------

    def files(self) -> list[str]:
        found: list[str] = [name for name in ROOT_FILES if (self.root / name).is_file()]
        found += [rel for rel in LEARNINGS_FILES if (self.root / rel).is_file()]
        for d in MEMORY_DIRS:
            folder = self.root / d
            if folder.is_dir():
                found += sorted(
                    p.relative_to(self.root).as_posix() for p in folder.rglob("*.md") if p.is_file()
                )
        return found

    def blocks(self, rel: str) -> list[Block]:
        path = self.root / rel
        try:
            st = path.stat()
        except FileNotFoundError:
            self._cache.pop(rel, None)
            return []
        key = (st.st_mtime_ns, st.st_size)
        cached = self._cache.get(rel)
        if cached and cached[0] == key:
            return cached[1]
        text = decode_markdown(path.read_bytes(), rel)
        blocks = parse_blocks(text, rel)
        self._cache[rel] = (key, blocks)
        return blocks

    def _all_blocks(self) -> Iterator[Block]:
        for rel in self.files():
            for block in self.blocks(rel):
                if (block.path, _normalize(block.content)) not in self._mirrors:
                    yield block

    def change_token(self) -> str:
        parts = []
        for rel in self.files():
            try:
                st = (self.root / rel).stat()
            except OSError:
                continue
            parts.append(f"{rel}:{st.st_mtime_ns}:{st.st_size}")
        return "markdown:" + hashlib.sha1("|".join(parts).encode("utf-8")).hexdigest()[:16]

    # -- memories ------------------------------------------------------------------

    def memory(self, block: Block) -> Memory:
        date = daily_date(block.path)
        if date is None:
            cached = self._cache.get(block.path)
            mtime_ns = cached[0][0] if cached else (self.root / block.path).stat().st_mtime_ns
            date = datetime.fromtimestamp(mtime_ns // 1_000_000_000, timezone.utc)
        m = CHANNEL_HEADING.match(block.heading)
        channel = m.group(1) if m else GLOBAL_CHANNEL
        return Memory(
            id=block.record_id,
            source=SourceRef(
                Kind.MARKDOWN,
                f"{block.path}:{block.line}-{block.end}",
                path=block.path,
                line_start=block.line,
                line_end=block.end,
            ),
            layer=layer_for(block.path),
            channel=channel,
            content=block.content,
            created_at=date,
            updated_at=date,
            last_accessed=date,
            tags=tuple(dict.fromkeys(HASHTAG.findall(block.content))),
            metadata={"heading": block.heading} if block.heading else {},
            status=Status.ACTIVE,
            revision=revision_of(block.snapshot()),
        )

    def _matching(self, query: MemoryQuery) -> list[Memory]:
        if not query.wants_kind(self.kind):
            return []
        return [m for m in map(self.memory, self._all_blocks()) if matches(m, query)]

    def count(self, query: MemoryQuery) -> int:
        return len(self._matching(query))

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        return page_of(self._matching(query), query, limit, offset)

    def get(self, memory_id: str) -> Memory | None:
        block = self._block_for(memory_id)
        return self.memory(block) if block else None

    def counts_by(self, column: str) -> dict[str, int]:
        return count_by(self._matching(MemoryQuery()), column)

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str):
        return bin_by(self._matching(query), bin_format, group_by)

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        return keyword_rank(self._matching(query), text_query, k)

    def daily_files(self) -> list[str]:
        return [rel for rel in self.files() if daily_date(rel) is not None]

    # -- the write primitive -----------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith("md:")

    def _block_for(self, record_id: str) -> Block | None:
        parsed = parse_record_id(record_id)
        if parsed is None:
            return None
        rel, line = parsed
        for block in self.blocks(rel):
            if block.line == line:
                return block
        return None

    def read_record(self, record_id: str) -> Snapshot | None:
        block = self._block_for(record_id)
        return block.snapshot() if block else None

    def find_copy(self, rel: str, content: str) -> Block | None:
        wanted = _normalize(content)
        for block in self.blocks(rel):
            if _normalize(block.content) == wanted:
                return block
        return None

    def write_record(
        self, record_id: str, expected: Snapshot | None, new: Snapshot | None
    ) -> Snapshot | None:
        target = expected or new
        assert target is not None
        rel = target["path"]
        path = self.root / rel
        original = path.read_bytes() if path.exists() else b""
        lines = decode_markdown(original, rel).splitlines(keepends=True)
        if expected is not None:
            start = _locate(lines, expected["text"], int(expected["line"]))
            if start is None:
                raise ConflictError(
                    f"{rel} changed since it was read: the lines of {record_id} are no longer "
                    "there; nothing was written. Reload and try again."
                )
            count = len(expected["text"].splitlines(keepends=True))
            replacement = new["text"].splitlines(keepends=True) if new else []
            lines[start : start + count] = replacement
            result = {"path": rel, "line": start + 1, "text": new["text"]} if new else None
        else:
            assert new is not None
            at = min(max(int(new["line"]) - 1, 0), len(lines))
            if at > 0 and not lines[at - 1].endswith("\n"):
                lines[at - 1] += "\n"
            lines[at:at] = new["text"].splitlines(keepends=True)
            result = {"path": rel, "line": at + 1, "text": new["text"]}
        atomic_write_bytes(path, "".join(lines).encode("utf-8"))
        self._cache.pop(rel, None)
        return result

    def append_bullet_position(self, rel: str) -> int:
        """The 1-based line where a bullet appended to rel would start."""
        path = self.root / rel
        if not path.exists():
            return 1
        text = decode_markdown(path.read_bytes(), rel)
        return len(text.splitlines()) + 1


def parse_record_id(record_id: str) -> tuple[str, int] | None:
    if not record_id.startswith("md:"):
        return None
    rel, _, line = record_id[3:].rpartition(":")
    if not rel or not line.isdigit():
        return None
    return rel, int(line)


def _locate(lines: list[str], text: str, line: int) -> int | None:
    """0-based index where the exact block text starts: at line if it is still
    there, else its single occurrence elsewhere; None when absent or ambiguous."""
    block = text.splitlines(keepends=True)
    n = len(block)
    if not block:
        return None
    if lines[line - 1 : line - 1 + n] == block:
        return line - 1
    hits = [i for i in range(len(lines) - n + 1) if lines[i : i + n] == block]
    return hits[0] if len(hits) == 1 else None


def _normalize(content: str) -> str:
    return " ".join(content.split()).casefold()
