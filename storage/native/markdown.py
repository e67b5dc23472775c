"""Workspace markdown: MEMORY.md, USER.md, SOUL.md, memory/YYYY-MM-DD.md, ...

Each top-level bullet, paragraph or quote is one memory, located by file and
line range (markdown-it-py token maps). Writes splice only those lines and
replace the file atomically; every other byte stays as it was.

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
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from ..atomic_file import rewrite
from ..errors import ConflictError, NotFoundError, NothingToDoError, UnreadableStoreError, UnsupportedError
from ..model import GLOBAL_CHANNEL, Kind, Layer, Memory, SourceRef, Status
from ..query import MemoryQuery
from ..source import (
    DELETE,
    EDIT,
    PROMOTE,
    PURGE,
    Capabilities,
    Change,
    Plan,
    PlanContext,
    Snapshot,
    bin_by,
    count_by,
    keyword_rank,
    matches,
    page_of,
    revision_of,
)

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
# Files up to this size are compared by content, not only by stat, before a cached parse is reused.
_REHASH_BELOW = 1 << 20

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
    occurrence: int = 1  # 2 for the second block of this file with the same content, ...

    @property
    def key(self) -> str:
        return content_key(self.content, self.occurrence)

    @property
    def record_id(self) -> str:
        return record_id_for(self.path, self.content, self.occurrence)

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


BOM = "\ufeff"


def parse_blocks(text: str, rel_path: str) -> list[Block]:
    text = text.removeprefix(BOM)  # a byte-order mark belongs to the file, not to its first block
    lines = split_lines(text)
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
    return _numbered([b for b in blocks if b.content.strip()])


def _numbered(blocks: list[Block]) -> list[Block]:
    """Blocks with their occurrence among blocks of the same content, in file order."""
    seen: dict[str, int] = {}
    out = []
    for block in blocks:
        digest = content_key(block.content)
        seen[digest] = seen.get(digest, 0) + 1
        out.append(replace(block, occurrence=seen[digest]) if seen[digest] > 1 else block)
    return out


def content_key(content: str, occurrence: int = 1) -> str:
    digest = hashlib.sha1(" ".join(content.split()).encode("utf-8")).hexdigest()[:12]
    return digest if occurrence <= 1 else f"{digest}~{occurrence}"


def record_id_for(rel_path: str, content: str, occurrence: int = 1) -> str:
    return f"md:{rel_path}:{content_key(content, occurrence)}"


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


class MarkdownSource:
    """The markdown files of one workspace folder."""

    kind = Kind.MARKDOWN
    format = "markdown"
    label = "workspace markdown"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: dict[str, tuple[tuple[int, ...], list[Block]]] = {}
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

    def capabilities(self, record_id: str | None = None) -> Capabilities:
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
        key: tuple[int, ...] = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cache.get(rel)
        data = None
        if st.st_size <= _REHASH_BELOW:
            # Timestamps are coarse (a few ms): an agent's same-size rewrite can keep them.
            data = path.read_bytes()
            key = (*key, hash(data))
        if cached and cached[0] == key:
            return cached[1]
        text = decode_markdown(path.read_bytes() if data is None else data, rel)
        blocks = parse_blocks(text, rel)
        self._cache[rel] = (key, blocks)
        return blocks

    def _all_blocks(self) -> Iterator[Block]:
        for rel in self.files():
            for block in self.blocks(rel):
                if (block.path, _normalize(block.content)) not in self._mirrors:
                    yield block

    def problems(self) -> list[str]:
        return []

    def describe(self) -> dict[str, Any]:
        return {"format": self.format, "label": self.label, "path": str(self.root)}

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
        block = self.block_for(memory_id)
        return self.memory(block) if block else None

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return count_by(self._matching(query), column)

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str):
        return bin_by(self._matching(query), bin_format, group_by)

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        return keyword_rank(self._matching(query), text_query, k)

    def daily_files(self) -> list[str]:
        return [rel for rel in self.files() if daily_date(rel) is not None]

    # -- the write primitive -----------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith("md:")

    def block_for(self, record_id: str) -> Block | None:
        parsed = parse_record_id(record_id)
        if parsed is None:
            return None
        rel, key = parsed
        if rel not in self.files():
            return None
        return next((b for b in self.blocks(rel) if b.key == key), None)

    def read_record(self, record_id: str) -> Snapshot | None:
        block = self.block_for(record_id)
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
        path = self._inside(rel)
        result: dict[str, Snapshot | None] = {}

        def splice(original: bytes) -> bytes:
            """Our change applied to the file as it is now (run again if an agent wrote meanwhile)."""
            text = decode_markdown(original, rel)
            bom = BOM if text.startswith(BOM) else ""
            text = text.removeprefix(BOM)
            lines = split_lines(text)
            blocks = parse_blocks(text, rel)
            if expected is not None:
                block = _find(blocks, expected, record_id)
                if block is None:
                    raise ConflictError(
                        f"{rel} changed since it was read: the lines of {record_id} are no longer "
                        "there; nothing was written. Reload and try again."
                    )
                lines[block.line - 1 : block.end] = split_lines(new["text"]) if new else []
                # Where the lines were when written, so that undo puts them back there.
                expected["line"] = block.line
                result["snapshot"] = {"path": rel, "line": block.line, "text": new["text"]} if new else None
            else:
                assert new is not None
                at = _insertion_point(blocks, int(new["line"]) - 1, len(lines))
                if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
                    lines[at - 1] += "\r\n" if "\r\n" in text else "\n"
                lines[at:at] = split_lines(new["text"])
                result["snapshot"] = {"path": rel, "line": at + 1, "text": new["text"]}
            return (bom + "".join(lines)).encode("utf-8")

        try:
            rewrite(path, splice, lines_appended_commute=True)
        finally:
            self._cache.pop(rel, None)
        return result["snapshot"]

    # -- planning ------------------------------------------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        snap = self.read_record(memory.id)
        if snap is None:
            raise NotFoundError(f"No memory {memory.id} in {self.root}.")
        if operation == EDIT:
            return self.plan_edit(memory.id, snap, fields["content"])
        if operation in (DELETE, PURGE):
            return Plan([Change(memory.id, snap, None)])
        if operation == PROMOTE:
            return self.plan_promote(memory, snap)
        raise UnsupportedError(f"{memory.id} is a markdown block, which keeps no access count, status or vector.")

    def plan_edit(self, record_id: str, snap: Snapshot, content: str) -> Plan:
        """New lines for a block, shaped like the old ones; refuses to make two blocks of one
        file say the same thing (their ids would be told apart by order only)."""
        new_text = render_block(snap["text"], content)
        if new_text == snap["text"]:
            return Plan()
        rel = snap["path"]
        twin = self.find_same(rel, content)
        if twin is not None and twin.record_id != record_id:
            raise UnsupportedError(
                f"{rel} already says that at line {twin.line} ({twin.record_id}); delete this one instead."
            )
        return Plan([Change(record_id, snap, {**snap, "text": new_text})], new_id=record_id_for(rel, content))

    def plan_promote(self, memory: Memory, snap: Snapshot) -> Plan:
        """A daily-log entry (or a project section's) moves into MEMORY.md."""
        if memory.source.path == MEMORY_FILE:
            raise NothingToDoError(f"{memory.id} is already curated in {MEMORY_FILE}.")
        if daily_date(memory.source.path) is None and memory.channel == GLOBAL_CHANNEL:
            raise UnsupportedError(
                f"{memory.id} is in {memory.source.path}; only daily-log entries "
                "(memory/YYYY-MM-DD.md) or project sections are promoted to MEMORY.md."
            )
        return self.plan_move_to_memory_file(memory.id, snap, memory.content)

    def plan_move_to_memory_file(self, record_id: str, snap: Snapshot, content: str) -> Plan:
        removal = Change(record_id, snap, None)
        already = self.find_same(MEMORY_FILE, content)
        if already is not None:
            return Plan([removal], new_id=already.record_id, notes=[f"{MEMORY_FILE} already held it; the entry was removed."])
        line = self.append_bullet_position(MEMORY_FILE)
        inserted = {"path": MEMORY_FILE, "line": line, "text": bullet_text(content)}
        new_id = record_id_for(MEMORY_FILE, content)
        return Plan([removal, Change(new_id, None, inserted)], new_id=new_id)

    def find_same(self, rel: str, content: str) -> Block | None:
        """The first block of rel whose content is content (white space folded)."""
        key = content_key(content)
        return next((b for b in self.blocks(rel) if b.key == key), None) if (self.root / rel).is_file() else None

    def _inside(self, rel: str) -> Path:
        """rel as a path inside the workspace; anything that would leave it is refused."""
        path = (self.root / rel).resolve()
        if rel.startswith("/") or ".." in rel.split("/") or not path.is_relative_to(self.root.resolve()):
            raise UnsupportedError(f"{rel!r} is not a file inside {self.root}; nothing was written.")
        return path

    def append_bullet_position(self, rel: str) -> int:
        """The 1-based line where a bullet appended to rel would start."""
        path = self.root / rel
        if not path.exists():
            return 1
        text = decode_markdown(path.read_bytes(), rel)
        return len(split_lines(text)) + 1


def parse_record_id(record_id: str) -> tuple[str, str] | None:
    """(file, key) of an ``md:<file>:<key>`` id; None for anything else."""
    if not record_id.startswith("md:"):
        return None
    rel, _, key = record_id[3:].rpartition(":")
    if not rel or not re.fullmatch(r"[0-9a-f]{12}(~[0-9]+)?", key):
        return None
    return rel, key


def _find(blocks: list[Block], expected: Snapshot, record_id: str) -> Block | None:
    """The block whose lines are exactly the expected text: when the text repeats, the one
    the id names, else the one nearest the line it was read at."""
    same = [b for b in blocks if b.text == expected["text"]]
    if len(same) <= 1:
        return same[0] if same else None
    named = [b for b in same if b.record_id == record_id]
    if named:
        return named[0]
    line = int(expected.get("line") or 0)
    return min(same, key=lambda b: abs(b.line - line))


def _insertion_point(blocks: list[Block], at: int, line_count: int) -> int:
    """0-based line to insert at: at, moved past any block it would split."""
    at = min(max(at, 0), line_count)
    for block in blocks:
        if block.line - 1 < at < block.end:
            return block.end
    return at


_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, broken where the markdown parser breaks them
    (LF, CRLF, lone CR) and nowhere else: U+2028, form feed and NEL stay inside a line."""
    parts = _LINE_BREAK.split(text)
    return parts[:-1] if parts and parts[-1] == "" else parts


def _normalize(content: str) -> str:
    return " ".join(content.split()).casefold()
