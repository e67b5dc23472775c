"""The markdown files of one workspace folder as a source: read, plan and write their blocks.

MarkdownSource lists a workspace's markdown files (files.py), scans each into blocks (scan.py,
file_blocks.py) and answers counts, pages, searches and ids (``md:<file>:<key>``, blocks.py)
from them. Writes splice only a block's lines and replace the file atomically; every other byte
stays as it was. A parse is cached per file and reused while the file is unchanged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...atomic_file import rewrite
from ...detect.looks import is_dir, is_file, names
from ...errors import ConflictError, NotFoundError, NothingToDoError, UnsupportedError
from ...model import GLOBAL_CHANNEL, Kind, Memory, SourceRef, Status
from ...query import MemoryQuery
from ...salience import NOT_KEPT, declare_salience
from ...source import (
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
    summed,
)
from .blocks import (
    Block,
    content_key,
    normalized,
    parse_record_id,
    record_id_for,
    render_block,
)
from .file_blocks import FileBlocks
from .files import (
    BOM_BYTES,
    LEARNINGS_FILES,
    MEMORY_DIRS,
    MEMORY_FILE,
    ROOT_FILES,
    daily_date,
    inside,
    layer_for,
    require_utf8,
)
from .scan import MAX_PARSED_BYTES, MAX_SCANNED_BLOCKS, scan

CHANNEL_HEADING = re.compile(r"^(?:project|channel)\s*[:=]\s*(\S+)", re.IGNORECASE)
HASHTAG = re.compile(r"(?<![\w#&])#([A-Za-z][\w/-]*)")
# Files up to this size are compared by content, not only by stat, before a cached parse is reused.
_REHASH_BELOW = 1 << 20
_KEEP_SCANNED_BELOW = 64 << 20  # a write re-reads the file: bytes equal to the last read reuse its scan
# A markdown block keeps no salience (SOUL.md, AGENTS.md, USER.md, MEMORY.md, a daily log...): it
# shows none and is never at risk nor a cleanup candidate. (Memory.salience keeps its default.)
declare_salience(Kind.MARKDOWN.value, NOT_KEPT, "workspace markdown")


class MarkdownSource:
    """The markdown files of one workspace folder."""

    kind = Kind.MARKDOWN
    format = "markdown"
    label = "workspace markdown"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._cache: dict[str, tuple[tuple[int, ...], FileBlocks]] = {}
        self._last_scan: dict[str, tuple[bytes, FileBlocks]] = {}
        self._mirrors: set[tuple[str, str]] = set()
        for rel in self.files():  # fail on open, not later, for an unreadable file
            self._parsed(rel)

    @staticmethod
    def detect(path: Path) -> float:
        if not is_dir(path):
            return 0.0
        listed = names(path)
        if any(name in listed and is_file(path / name) for name in ROOT_FILES):
            return 1.0
        if "learnings" in listed and any(is_file(path / rel) for rel in LEARNINGS_FILES):
            return 0.9
        for d in MEMORY_DIRS:
            if d in listed and is_dir(path / d) and any(name.endswith(".md") for name in names(path / d)):
                return 0.9
        return 0.0

    @classmethod
    def open(cls, path: Path) -> MarkdownSource:
        return cls(path)

    def close(self) -> None:
        self._cache.clear()
        self._last_scan.clear()

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return Capabilities(
            editable_fields=("content",),
            can_promote=True,
            can_soft_delete=True,
            keyword_search=True,
        )

    def set_mirrors(self, pairs: set[tuple[str, str]]) -> None:
        """(file, content) pairs that are copies of memories kept in memory.db."""
        self._mirrors = {(f, normalized(c)) for f, c in pairs}

    # -- files -------------------------------------------------------------------

    def files(self) -> list[str]:
        return self._listing()[0]

    def problems(self) -> list[str]:
        files, left_out = self._listing()
        unread = [(rel, self._parsed(rel).unread_from) for rel in files]
        return left_out + [
            f"{rel} is too big to read whole: its blocks from line {line + 1} on are not listed "
            f"(Mnemoscope reads up to {MAX_SCANNED_BLOCKS:,} blocks that are not plain bullets, and "
            f"{MAX_PARSED_BYTES >> 20} MB of other markdown, per file)"
            for rel, line in unread
            if line is not None
        ]

    def _listing(self) -> tuple[list[str], list[str]]:
        """The workspace's markdown files, and why any other one was left out: a file or folder
        that links outside the workspace is neither read nor written."""
        candidates = [name for name in ROOT_FILES if (self.root / name).is_file()]
        candidates += [rel for rel in LEARNINGS_FILES if (self.root / rel).is_file()]
        left_out: list[str] = []
        for d in MEMORY_DIRS:
            folder = self.root / d
            if not folder.is_dir():
                continue
            if inside(self.root, d) is None:
                left_out.append(f"{d}/ links to a folder outside {self.root}; its files are neither read nor written")
                continue
            candidates += sorted(p.relative_to(self.root).as_posix() for p in folder.rglob("*.md") if p.is_file())
        found = []
        for rel in candidates:
            if rel != rel.encode("utf-8", "replace").decode("utf-8"):
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
                left_out.append(f"{shown!r} is not a UTF-8 file name; it is neither read nor written")
            elif inside(self.root, rel) is None:
                left_out.append(f"{rel} links to a file outside {self.root}; it is neither read nor written")
            else:
                found.append(rel)
        return found, left_out

    def blocks(self, rel: str) -> list[Block]:
        return self._parsed(rel).blocks()

    def _parsed(self, rel: str) -> FileBlocks:
        path = inside(self.root, rel)
        if path is None:
            return FileBlocks(rel, [], [], b"\n")
        try:
            st = path.stat()
        except FileNotFoundError:
            self._cache.pop(rel, None)
            self._last_scan.pop(rel, None)
            return FileBlocks(rel, [], [], b"\n")
        key: tuple[int, ...] = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cache.get(rel)
        data = None
        if st.st_size <= _REHASH_BELOW:
            # Timestamps are coarse (a few ms): an agent's same-size rewrite can keep them.
            data = path.read_bytes()
            key = (*key, hash(data))
        if cached and cached[0] == key:
            return cached[1]
        data = path.read_bytes() if data is None else data
        require_utf8(data, rel)
        parsed = scan(data.removeprefix(BOM_BYTES), rel)
        self._cache[rel] = (key, parsed)
        self._last_scan[rel] = (data, parsed) if len(data) <= _KEEP_SCANNED_BELOW else (b"", parsed)
        return parsed

    def _scan(self, rel: str, data: bytes) -> FileBlocks:
        """The blocks of data (BOM removed): the last read's when these are the bytes it scanned."""
        scanned, parsed = self._last_scan.get(rel, (None, None))
        if parsed is not None and scanned is not None and scanned.removeprefix(BOM_BYTES) == data:
            return parsed
        return scan(data, rel)

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

    def _selected(self, query: MemoryQuery) -> Iterator[tuple[FileBlocks, Memory, Sequence[int]]]:
        """Per file and heading, one of its memories (they differ in nothing a query filters or
        orders by but content and id) and the blocks there the query selects; copies of memory.db
        memories left out."""
        if not query.wants_kind(self.kind):
            return
        probe = replace(query, contains=None, ids=())
        needle = query.contains.lower() if query.contains else None
        named = self._blocks_named(query.ids) if query.ids else None
        for rel in self.files():
            if named is not None and rel not in named:
                continue
            parsed = self._parsed(rel)
            hidden = self._left_out(parsed)
            texts = list(parsed.contents()) if needle is not None else []
            only = named[rel] if named is not None else None
            for _heading, lo, hi in parsed.groups():
                sample = self.memory(parsed.raw(lo))
                if not matches(sample, probe):
                    continue
                picked: Sequence[int] = range(lo, hi)
                if hidden or needle is not None or only is not None:
                    picked = [
                        i for i in picked if i not in hidden and (needle is None or needle in texts[i].lower())
                        and (only is None or i in only)
                    ]
                if picked:
                    yield parsed, sample, picked

    def _left_out(self, parsed: FileBlocks) -> frozenset[int]:
        """The blocks of a file that are no memories of this source: copies of memory.db memories
        (a format's workspace adds its owner's template text)."""
        return parsed.hidden(frozenset(c for f, c in self._mirrors if f == parsed.rel))

    def _blocks_named(self, ids: Sequence[str]) -> dict[str, set[int]]:
        """Per file, the blocks those of ids that are markdown blocks name."""
        named: dict[str, set[int]] = {}
        files = set(self.files())
        for record_id in ids:
            parsed_id = parse_record_id(record_id) if self.owns(record_id) else None
            if parsed_id is not None and parsed_id[0] in files:
                i = self._parsed(parsed_id[0]).index_of(parsed_id[1])
                if i is not None:
                    named.setdefault(parsed_id[0], set()).add(i)
        return named

    def count(self, query: MemoryQuery) -> int:
        return sum(len(picked) for _, _, picked in self._selected(query))

    def _selected_by_file(self, query: MemoryQuery) -> Iterator[tuple[FileBlocks, list[int] | None]]:
        """Per file, the blocks the query selects, in file order (None: all of them)."""
        chosen: dict[str, tuple[FileBlocks, list[Sequence[int]]]] = {}
        for parsed, _, picked in self._selected(query):
            chosen.setdefault(parsed.rel, (parsed, []))[1].append(picked)
        for parsed, picks in chosen.values():
            everything = sum(map(len, picks)) == len(parsed)
            yield parsed, None if everything else [i for picked in picks for i in picked]

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        found: list[Memory] = []
        for parsed, among in self._selected_by_file(query):
            found += map(self.memory, parsed.top(offset + limit, query.descending, among))
        return page_of(found, query, limit, offset)

    def get(self, memory_id: str) -> Memory | None:
        block = self.block_for(memory_id)
        return self.memory(block) if block else None

    def revisions(self, ids: Sequence[str]) -> dict[str, str]:
        """The revision of each block of ids still in its file (copies of memory.db memories left
        out, as pages leave them), from one pass over the files that hold them."""
        return {m.id: m.revision for m in self.page(MemoryQuery(ids=tuple(ids), statuses=()), len(ids))}

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return summed(
            {key: n * len(picked) for key, n in count_by([sample], column).items()}
            for _, sample, picked in self._selected(query)
        )

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        return summed(
            {key: n * len(picked) for key, n in bin_by([sample], bin_format, group_by).items()}
            for _, sample, picked in self._selected(query)
        )

    def keyword_search(self, text_query: str, query: MemoryQuery, k: int) -> list[Memory]:
        words = [w.lower() for w in re.findall(r"\w+", text_query)]
        hits: list[Memory] = []
        for parsed, among in self._selected_by_file(query):
            texts = [text.lower() for text in parsed.contents()]
            indices = range(len(parsed)) if among is None else among
            scores = [(sum(texts[i].count(w) for w in words), i) for i in indices]
            hits += map(self.memory, parsed.best([(s, i) for s, i in scores if s], k))
        return keyword_rank(hits, text_query, k)

    def daily_files(self) -> list[str]:
        return [rel for rel in self.files() if daily_date(rel) is not None]

    # -- the write primitive -----------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith("md:")

    def block_for(self, record_id: str) -> Block | None:
        parsed_id = parse_record_id(record_id)
        if parsed_id is None:
            return None
        rel, key = parsed_id
        if rel not in self.files():
            return None
        parsed = self._parsed(rel)
        i = parsed.index_of(key)
        return None if i is None else parsed.block(i)

    def read_record(self, record_id: str) -> Snapshot | None:
        block = self.block_for(record_id)
        return block.snapshot() if block else None

    def find_copy(self, rel: str, content: str) -> Block | None:
        """The first block of rel whose content is content (none outside the workspace)."""
        parsed = self._parsed(rel)
        wanted = normalized(content)
        i = next((i for i, text in enumerate(parsed.contents()) if normalized(text) == wanted), None)
        return None if i is None else parsed.block(i)

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
            require_utf8(original, rel)
            data = original.removeprefix(BOM_BYTES)
            bom = original[: len(original) - len(data)]
            parsed = self._scan(rel, data)
            lines = list(parsed.lines)
            if expected is not None:
                block = _find(parsed, expected, record_id)
                if block is None:
                    raise ConflictError(
                        f"{rel} changed since it was read: the lines of {record_id} are no longer "
                        "there; nothing was written. Reload and try again."
                    )
                lines[block.line - 1 : block.end] = _byte_lines(new["text"]) if new else []
                # Where the lines were when written, so that undo puts them back there.
                expected["line"] = block.line
                result["snapshot"] = {"path": rel, "line": block.line, "text": new["text"]} if new else None
            else:
                assert new is not None
                at = _insertion_point(parsed, int(new["line"]) - 1, len(lines))
                if at > 0 and not lines[at - 1].endswith((b"\n", b"\r")):
                    lines[at - 1] += b"\r\n" if b"\r\n" in data else b"\n"
                lines[at:at] = _byte_lines(new["text"])
                result["snapshot"] = {"path": rel, "line": at + 1, "text": new["text"]}
            return bom + b"".join(lines)

        try:
            rewrite(path, splice, lines_appended_commute=True)
        finally:
            self._cache.pop(rel, None)
            self._last_scan.pop(rel, None)
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
        added = self.plan_add_to_memory_file(content)
        if not added.changes:
            return Plan([removal], new_id=added.new_id, notes=[f"{MEMORY_FILE} already held it; the entry was removed."])
        return Plan([removal, *added.changes], new_id=added.new_id)

    def plan_add_to_memory_file(self, content: str) -> Plan:
        """A bullet appended to MEMORY.md; no change where MEMORY.md already says it (new_id names that bullet)."""
        already = self.find_same(MEMORY_FILE, content)
        if already is not None:
            return Plan([], new_id=already.record_id)
        line = self.append_bullet_position(MEMORY_FILE)
        inserted = {"path": MEMORY_FILE, "line": line, "text": self.bullet_for(MEMORY_FILE, content)}
        new_id = record_id_for(MEMORY_FILE, content)
        return Plan([Change(new_id, None, inserted)], new_id=new_id)

    def find_same(self, rel: str, content: str) -> Block | None:
        """The first block of rel whose content is content (white space folded)."""
        if not (self.root / rel).is_file():
            return None
        parsed = self._parsed(rel)
        i = parsed.index_of(content_key(content))
        return None if i is None else parsed.block(i)

    def _inside(self, rel: str) -> Path:
        """rel as a path inside the workspace; anything that would leave it is refused."""
        path = inside(self.root, rel)
        if path is None:
            raise UnsupportedError(f"{rel!r} is not a file inside {self.root}; nothing was written.")
        return path

    def bullet_for(self, rel: str, content: str) -> str:
        """A bullet of content as rel would hold it: ending its lines as rel's lines end (CRLF in a
        file written on Windows), LF in a new or one-line file."""
        return render_block("- x" + self.line_ending(rel), content)

    def line_ending(self, rel: str) -> str:
        """How rel's lines end: its first line ending ("\n" where it has none, or no file)."""
        path = inside(self.root, rel)
        if path is None or not path.is_file():
            return "\n"
        for line in self._parsed(rel).lines:
            if line.endswith(b"\r\n"):
                return "\r\n"
            if line.endswith((b"\n", b"\r")):
                return line[-1:].decode("ascii")
        return "\n"

    def append_bullet_position(self, rel: str) -> int:
        """The 1-based line where a bullet appended to rel would start."""
        path = self._inside(rel)
        if not path.exists():
            return 1
        data = path.read_bytes()
        require_utf8(data, rel)
        return len(data.removeprefix(BOM_BYTES).splitlines()) + 1


def _find(parsed: FileBlocks, expected: Snapshot, record_id: str) -> Block | None:
    """The block whose lines are exactly the expected text: when the text repeats, the one
    the id names, else the one nearest the line it was read at."""
    found = parsed.find_text(expected["text"])
    if len(found) <= 1:
        return parsed.raw(found[0]) if found else None
    same = parsed.numbered(found)
    named = [b for b in same if b.record_id == record_id]
    if named:
        return named[0]
    line = int(expected.get("line") or 0)
    return min(same, key=lambda b: abs(b.line - line))


def _insertion_point(parsed: FileBlocks, at: int, line_count: int) -> int:
    """0-based line to insert at: at, moved past any block it would split (plain bullets are
    one line each, never split)."""
    at = min(max(at, 0), line_count)
    if parsed.unread_from is not None and at > parsed.unread_from:
        raise UnsupportedError(
            f"{parsed.rel} is too big to read whole; Mnemoscope adds nothing past line {parsed.unread_from + 1}, "
            "which it has not read. Nothing was written."
        )
    for block in parsed.items:
        if isinstance(block, Block) and block.line - 1 < at < block.end:
            return block.end
    return at


def _byte_lines(text: str) -> list[bytes]:
    return text.encode("utf-8").splitlines(keepends=True)
