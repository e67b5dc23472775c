"""Workspace markdown: MEMORY.md, USER.md, SOUL.md, memory/YYYY-MM-DD.md, ...

Each top-level bullet, paragraph or quote is one memory, located by file and
line range (the ranges markdown-it-py's token maps give; see scan() for how a
big file is read fast). Writes splice only those lines and replace the file
atomically; every other byte stays as it was. Only files inside the workspace
are read or written (see inside()).

A block's id names its file and its text, not its line: ``md:<file>:<key>``,
where key is a digest of the block's content (white space folded) and, for the
second and later blocks with the same content in one file, ``~2``, ``~3``...
Lines added or removed elsewhere (by hand, by an agent, by another delete) move
a block without changing its id, and no other block can take over the id of a
deleted one unless it says exactly the same thing. An edit gives the block the
id of its new text; the journal entry names both.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import itertools
import operator
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ...atomic_file import rewrite
from ...errors import ConflictError, NotFoundError, NothingToDoError, UnreadableStoreError, UnsupportedError
from ...looking import is_dir, is_file, names
from ...model import GLOBAL_CHANNEL, Kind, Layer, Memory, SourceRef, Status
from ...query import MemoryQuery
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

if TYPE_CHECKING:  # numpy loads when a file's keys are first needed: a command that only starts needs none
    import numpy as np

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
CHANNEL_HEADING = re.compile(r"^(?:project|channel)\s*[:=]\s*(\S+)", re.IGNORECASE)
HASHTAG = re.compile(r"(?<![\w#&])#([A-Za-z][\w/-]*)")
LIST_MARKER = re.compile(r"^(\s*(?:[-*+]|\d{1,9}[.)])(?:\s+\[[ xX]\])?\s+)")
MEMORY_FILE = "MEMORY.md"
# Files up to this size are compared by content, not only by stat, before a cached parse is reused.
_REHASH_BELOW = 1 << 20
_KEEP_SCANNED_BELOW = 64 << 20  # a write re-reads the file: bytes equal to the last read reuse its scan

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


BOM = "\ufeff"
_BOM_BYTES = BOM.encode("utf-8")


def parse_blocks(text: str, rel_path: str) -> list[Block]:
    return scan(text.removeprefix(BOM).encode("utf-8"), rel_path).blocks()


def content_key(content: str, occurrence: int = 1) -> str:
    digest = hashlib.sha1(" ".join(content.split()).encode("utf-8")).hexdigest()[:12]
    return _with_occurrence(digest, occurrence)


def _with_occurrence(digest: str, occurrence: int) -> str:
    return digest if occurrence <= 1 else f"{digest}~{occurrence}"


def record_id_for(rel_path: str, content: str, occurrence: int = 1) -> str:
    return f"md:{rel_path}:{content_key(content, occurrence)}"


def _block(lines: list[str], span: Sequence[int], rel_path: str, heading: str, list_item: bool, offset: int = 0) -> Block:
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


# -- scanning ------------------------------------------------------------------------------
#
# markdown-it-py reads about 1,000 lines in 60 ms, minutes for a 100 MB MEMORY.md. Most lines of
# an agent's memory file are one-line bullets, headings and blank lines, whose blocks a line
# scanner finds alone; every other line is read by markdown-it in context: from the last heading
# or bullet before it (the parser's state there is known) up to the first line after it that
# markdown-it itself reads as a top-level heading or list item (its state there is known again).
# Both give the same blocks, lines and ids (tests/storage/native/test_markdown_scan.py).
#
# A "plain" line (-, * or + and a space, then text with single spaces and no task box, then the
# file's own line ending) is a one-line bullet whose content is the line minus marker and
# ending. A big file's plain lines are kept as runs of lines, hashed in bulk for their ids
# only when ids are asked for.

_BLANK, _HEADING, _BULLET = "blank", "heading", "bullet"
_NOT_PLAIN_NEXT = re.compile(rb"\n(?![-*+] [^\s\[*_-])")
# White space that str.split() folds, so that a line's content is not the text its key digests.
_ODD_SPACE_ASCII = (b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f", b"  ")
_ODD_SPACE_UTF8 = re.compile(
    rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80"
)
_ATX = re.compile(r"#{1,6}(?=[ \t]|\Z)")
_SIMPLE_BULLET = re.compile(r"[-*+] [^ \t]")
_THEMATIC_BREAK = re.compile(r"([-*_])[ \t]*(?:\1[ \t]*){2,}")
_PLAIN_PARAGRAPH_LINE = re.compile(rb"(?![0-9]{1,9}[.)](?:[ \t\r\n]|$))[A-Za-z0-9]")
MAX_SCANNED_BLOCKS = 60_000  # blocks other than plain bullets, per file
MAX_PARSED_BYTES = 3 << 20  # text markdown-it reads, per file
_CANDIDATE_STARTS = (b"#", b"-", b"*", b"+")
_FIRST_READ = 16  # lines markdown-it reads past a line it is asked about, at first


@dataclass
class _Budget:
    """What scanning one file may cost, so that any file opens in seconds: blocks that are not
    plain bullets (each one an object) and text given to markdown-it (about a microsecond a
    character). A file past either is read up to where the budget ran out."""

    blocks: int = 0
    parsed: int = 0

    def spent(self) -> bool:
        return self.blocks >= MAX_SCANNED_BLOCKS or self.parsed >= MAX_PARSED_BYTES

    def parse(self, size: int) -> bool:
        self.parsed += size
        return self.parsed <= MAX_PARSED_BYTES


@dataclass
class _Run:
    """Plain bullets on lines [start, stop) (0-based), under one heading."""

    start: int
    stop: int
    heading: str


class FileBlocks:
    """The blocks of one file in file order; plain bullets become Blocks only when asked for."""

    def __init__(
        self, rel: str, lines: list[bytes], items: list[Block | _Run], newline: bytes, unread_from: int | None = None
    ) -> None:
        self.rel = rel
        self.unread_from = unread_from  # 0-based line the scan stopped at (the file is too big to read whole)
        self.lines = lines
        self.items = items
        self.newline = newline
        self.starts = [0]
        for item in items:
            self.starts.append(self.starts[-1] + (item.stop - item.start if isinstance(item, _Run) else 1))
        self._keys: np.ndarray | None = None
        self._blocks: list[Block] | None = None
        self._hidden: tuple[frozenset[str], frozenset[int]] | None = None

    def __len__(self) -> int:
        return self.starts[-1]

    def raw(self, i: int) -> Block:
        """Block i, as if its content were the first of its kind in the file (occurrence 1)."""
        k = bisect.bisect_right(self.starts, i) - 1
        item = self.items[k]
        if isinstance(item, Block):
            return item
        return self._plain(item.start + i - self.starts[k], item.heading)

    def _plain(self, line: int, heading: str) -> Block:
        text = self.lines[line].decode("utf-8")
        content = text[2 : len(text) - len(self.newline)]
        return Block(self.rel, line + 1, line + 1, text, content, heading)

    def contents(self) -> Iterator[str]:
        """Each block's content, in file order."""
        cut = slice(2, -len(self.newline) or None)
        for item in self.items:
            if isinstance(item, Block):
                yield item.content
            else:
                yield from (line[cut].decode("utf-8") for line in self.lines[item.start : item.stop])

    def keys(self) -> np.ndarray:
        """Each block's content key without its ~n, as the number its 12 hex digits spell
        (repeats of one content share it)."""
        if self._keys is None:
            cut = operator.itemgetter(slice(2, -len(self.newline) or None))
            digests = [
                _content_digest(item.content)
                if isinstance(item, Block)
                else b"".join(map(_DIGEST, map(_sha1, map(cut, self.lines[item.start : item.stop]))))
                for item in self.items
            ]
            self._keys = _key_numbers(b"".join(digests))
        return self._keys

    def block(self, i: int) -> Block:
        return self.numbered([i])[0]

    def blocks(self) -> list[Block]:
        if self._blocks is None:
            self._blocks = list(self._with_keys(None).values())
        return self._blocks

    def numbered(self, indices: Sequence[int]) -> list[Block]:
        """Blocks by index, with their occurrence among the blocks of the same content."""
        found = self._with_keys(set(self.keys()[list(indices)].tolist()))
        return [found[i] for i in indices]

    def _with_keys(self, wanted: set[int] | None) -> dict[int, Block]:
        """Every block whose key is wanted (all when None), by index, numbered."""
        import numpy as np

        keys = self.keys()
        if wanted is None:
            indices: list[int] = list(range(len(keys)))
        else:
            indices = np.flatnonzero(np.isin(keys, np.fromiter(wanted, np.uint64, len(wanted)))).tolist()
        seen: dict[int, int] = {}
        found: dict[int, Block] = {}
        for i, key in zip(indices, keys[indices].tolist(), strict=True):
            seen[key] = occurrence = seen.get(key, 0) + 1
            block = self.raw(i)
            found[i] = replace(block, occurrence=occurrence) if occurrence > 1 else block
        return found

    def index_of(self, key: str) -> int | None:
        """The block whose key (with ~n) is key."""
        import numpy as np

        digest, _, n = key.partition("~")
        occurrence = int(n) if n.isdigit() else 1
        if _with_occurrence(digest, occurrence) != key or not _HEX12.fullmatch(digest):
            return None
        same = np.flatnonzero(self.keys() == np.uint64(int(digest, 16)))
        return int(same[occurrence - 1]) if occurrence <= len(same) else None

    def groups(self) -> list[tuple[str, int, int]]:
        """(heading, first, stop) of each stretch of blocks under one heading."""
        out: list[tuple[str, int, int]] = []
        for item, lo, hi in zip(self.items, self.starts, self.starts[1:], strict=False):
            if out and out[-1][0] == item.heading:
                out[-1] = (item.heading, out[-1][1], hi)
            else:
                out.append((item.heading, lo, hi))
        return out

    def top(self, k: int, descending: bool, among: Sequence[int] | None = None) -> list[Block]:
        """A few blocks that include the k with the highest (descending) or lowest ids among the
        blocks chosen (all by default, else indices in file order): every block whose key is one
        of the k best keys, so that repeats of one content (told apart by ~n) come in whole."""
        keys = self.keys()
        pool = keys if among is None else keys[list(among)]
        if k <= 0 or not len(pool):
            return []
        found = self._with_keys(_extremes(pool, k, largest=descending))
        if among is not None:
            found = {i: b for i, b in found.items() if _holds(among, i)}
        return list(found.values())

    def best(self, scored: list[tuple[int, int]], k: int) -> list[Block]:
        """A few of the (score, index) blocks that include the k best, highest score first and
        then lowest id: every block scored above the k-th score, and those at it whose key is
        one of the lowest keys there (repeats of one content come in whole)."""
        import numpy as np

        if k <= 0:
            return []
        if len(scored) <= k:
            return self.numbered([i for _, i in scored])
        bound = heapq.nlargest(k, (s for s, _ in scored))[-1]
        above = [i for s, i in scored if s > bound]
        tied = [i for s, i in scored if s == bound]
        tied_keys = self.keys()[tied]
        lowest = _extremes(tied_keys, k - len(above), largest=False)
        kept = np.isin(tied_keys, np.fromiter(lowest, np.uint64, len(lowest))).tolist()
        return self.numbered(sorted(above + list(itertools.compress(tied, kept))))

    def hidden(self, contents: frozenset[str]) -> frozenset[int]:
        """The blocks whose content (white space folded, case ignored) is one of contents."""
        if not contents:
            return frozenset()
        if self._hidden is None or self._hidden[0] != contents:
            found = frozenset(i for i, text in enumerate(self.contents()) if _normalize(text) in contents)
            self._hidden = (contents, found)
        return self._hidden[1]

    def find_text(self, text: str) -> list[int]:
        """The blocks whose lines are exactly text."""
        wanted = text.encode("utf-8")
        found: list[int] = []
        for item, lo in zip(self.items, self.starts, strict=False):
            if isinstance(item, Block):
                if item.text == text:
                    found.append(lo)
                continue
            line = item.start - 1
            while True:
                try:
                    line = self.lines.index(wanted, line + 1, item.stop)
                except ValueError:
                    break
                found.append(lo + line - item.start)
        return found


_DIGEST = operator.methodcaller("digest")
try:  # CPython's own SHA-1 starts a hash sooner than OpenSSL's: it counts for millions of short bullets
    from _sha1 import sha1 as _sha1
except ImportError:  # a Python built without it
    _sha1 = hashlib.sha1
_HEX12 = re.compile(r"[0-9a-f]{12}")


def _content_digest(content: str) -> bytes:
    return hashlib.sha1(" ".join(content.split()).encode("utf-8")).digest()


def _key_numbers(digests: bytes) -> np.ndarray:
    """The first 6 bytes (12 hex digits) of each 20-byte SHA-1 digest, as unsigned integers."""
    import numpy as np

    count = len(digests) // 20
    padded = np.zeros((count, 8), np.uint8)
    padded[:, 2:] = np.frombuffer(digests, np.uint8).reshape(count, 20)[:, :6]
    return padded.view(">u8").ravel().astype(np.uint64)


def _extremes(keys: np.ndarray, k: int, largest: bool) -> set[int]:
    """The distinct values among the k largest (or smallest) of keys."""
    import numpy as np

    if k <= 0:
        return set()
    if k < len(keys):
        keys = np.partition(keys, len(keys) - k)[len(keys) - k :] if largest else np.partition(keys, k - 1)[:k]
    return set(keys.tolist())


def _holds(ordered: Sequence[int], value: int) -> bool:
    at = bisect.bisect_left(ordered, value)
    return at < len(ordered) and ordered[at] == value


def scan(data: bytes, rel_path: str) -> FileBlocks:
    """The blocks of a file's bytes (UTF-8, byte-order mark removed)."""
    lines = data.splitlines(keepends=True)  # LF, CRLF and lone CR, as markdown-it breaks lines
    newline = _uniform_newline(data)
    special = _special_lines(data, len(lines), newline) if newline else None
    items: list[Block | _Run] = []
    heading = ""
    anchor = 0  # the last heading or bullet line: where markdown-it starts reading when it must
    upcoming = special if special is not None else iter(range(len(lines)))
    following = next(upcoming, len(lines))
    settled = True  # nothing open before line i: it follows a blank line or a heading (or is the first)
    budget = _Budget()
    i = 0
    while i < len(lines):
        if budget.spent():
            _drop_from(items, anchor if not settled else i)
            return FileBlocks(rel_path, lines, items, newline or b"", unread_from=anchor if not settled else i)
        while following < i:
            following = next(upcoming, len(lines))
        if i < following:
            items.append(_Run(i, following, heading))
            anchor, i, settled = following - 1, following, False
            continue
        line = lines[i].decode("utf-8")
        kind, value = _line_kind(line)
        if kind is None:
            end = _plain_paragraph_end(lines, i) if settled else None
            if end is None:
                _drop_from(items, anchor)
                read = _read_in_context(lines, anchor, i, heading, rel_path, budget)
                if read is None:
                    return FileBlocks(rel_path, lines, items, newline or b"", unread_from=anchor)
                found, heading, i = read
                items += found
                budget.blocks += len(found)
                anchor, settled = i, False
                continue
            text_lines = [raw.decode("utf-8") for raw in lines[i:end]]
            items.append(_block(text_lines, (0, end - i), rel_path, heading, list_item=False, offset=i))
            budget.blocks += 1
            anchor, i, settled = i, end, False
            continue
        if kind == _HEADING:
            heading, anchor = value, i
        elif kind == _BULLET:
            block = _block([line], (0, 1), rel_path, heading, list_item=True, offset=i)
            if block.content.strip():
                items.append(block)
                budget.blocks += 1
            anchor = i
        settled = kind != _BULLET
        i += 1
    return FileBlocks(rel_path, lines, items, newline or b"")


def _plain_paragraph_end(lines: list[bytes], start: int) -> int | None:
    """Where a paragraph that needs no markdown-it ends: lines from start that each begin with an
    ASCII letter or digit (no block starts so: no marker, indent, fence, quote, HTML or table
    delimiter; no ordered-list number), ended by a blank line, a heading, a bullet or the end.
    None when any line of it could be read otherwise (a setext underline, say)."""
    end = start
    while end < len(lines) and _PLAIN_PARAGRAPH_LINE.match(lines[end]):
        end += 1
    if end == start:
        return None
    if end < len(lines) and _line_kind(lines[end].decode("utf-8"))[0] is None:
        return None
    return end


def _uniform_newline(data: bytes) -> bytes | None:
    """The line ending of every line of data, if they all end alike."""
    if b"\r" not in data:
        return b"\n"
    if data.count(b"\r") == data.count(b"\n") == data.count(b"\r\n"):
        return b"\r\n"
    return None


def _special_lines(data: bytes, line_count: int, newline: bytes) -> Iterator[int]:
    """The lines that may not be plain bullets, in order; found as the scan asks for them (a
    file read only up to its budget is not searched to its end)."""
    sources: list[Iterator[int]] = [(m.end() for m in _NOT_PLAIN_NEXT.finditer(data))]
    sources += [
        _once_per_line(re.compile(re.escape(odd)), data) for odd in (*_ODD_SPACE_ASCII, b" " + newline) if odd in data
    ]
    if not data.isascii():
        sources.append(_once_per_line(_ODD_SPACE_UTF8, data))
    yield 0
    line = at = 0
    for mark in heapq.merge(*sources):
        if mark > at:
            found = line + data.count(b"\n", at, mark)
            if found >= line_count:
                break
            if found > line:
                yield found
            line, at = found, mark
    if line < line_count - 1:
        yield line_count - 1  # the last line, whose ending may be missing


def _once_per_line(pattern: re.Pattern[bytes], data: bytes) -> Iterator[int]:
    """Where pattern first matches on each line that holds it (an indented list has millions of
    double spaces: one mark per line is all the scanner needs)."""
    m = pattern.search(data)
    while m is not None:
        yield m.start()
        end = data.find(b"\n", m.start())
        if end < 0:
            return
        m = pattern.search(data, end + 1)


def _line_kind(line: str) -> tuple[str | None, str]:
    """What a line is when no block is open before it: (_BLANK, ""), (_HEADING, its text),
    (_BULLET, "") for a one-line bullet; (None, "") when markdown-it must read it in context."""
    body = line.rstrip("\r\n")
    if not body.strip(" \t"):
        return _BLANK, ""
    m = _ATX.match(body)
    if m and "\0" not in body:
        text = body[m.end() :]
        end = len(text.rstrip(" \t"))
        closing = len(text[:end].rstrip("#"))
        if closing > 0 and text[closing - 1] in " \t":
            end = closing
        return _HEADING, text[:end].strip()
    if _SIMPLE_BULLET.match(body) and not _THEMATIC_BREAK.fullmatch(body):
        return _BULLET, ""
    return None, ""


def _drop_from(items: list[Block | _Run], line: int) -> None:
    """Forget the blocks found from line (0-based) on."""
    while items:
        last = items[-1]
        if isinstance(last, _Run) and last.stop > line:
            if last.start >= line:
                items.pop()
            else:
                last.stop = line
        elif isinstance(last, Block) and last.line > line:
            items.pop()
        else:
            return


def _read_in_context(
    lines: list[bytes], start: int, line: int, heading: str, rel_path: str, budget: _Budget
) -> tuple[list[Block], str, int] | None:
    """markdown-it's blocks from start (a heading or bullet line, or the first line) up to the first
    line after line it reads as a top-level heading or bullet; that line (or the end) is returned.
    None when reading them would overrun the budget."""
    reach = _FIRST_READ
    while True:
        end = min(len(lines), max(line + reach, _next_candidate(lines, line + 1) + _FIRST_READ))
        if not budget.parse(sum(map(len, lines[start:end]))):
            return None
        text_lines = [raw.decode("utf-8") for raw in lines[start:end]]
        tokens = _parser.parse("".join(text_lines))
        stop = _boundary(tokens, text_lines, line - start)
        if stop is not None or end == len(lines):
            found, heading = _token_blocks(tokens, text_lines, rel_path, heading, start, stop)
            return found, heading, start + (len(text_lines) if stop is None else stop)
        reach *= 4


def _next_candidate(lines: list[bytes], start: int) -> int:
    """The first line from start on that may end a block read in context: one that starts at
    column 0 as a heading or a bullet (markdown-it decides whether it does). Reading up to it at
    once saves re-reading a long indented list in growing pieces."""
    for i in range(start, len(lines)):
        if lines[i][:1] in _CANDIDATE_STARTS and _line_kind(lines[i].decode("utf-8"))[0] in (_HEADING, _BULLET):
            return i
    return len(lines)


def _boundary(tokens: list[Token], lines: list[str], after: int) -> int | None:
    for tok in tokens:
        if tok.map and tok.map[0] > after and _top_level_start(tok):
            if _line_kind(lines[tok.map[0]])[0] in (_HEADING, _BULLET):
                return tok.map[0]
    return None


def _top_level_start(tok: Token) -> bool:
    return (tok.type == "heading_open" and tok.level == 0) or (tok.type == "list_item_open" and tok.level == 1)


def _token_blocks(
    tokens: list[Token], lines: list[str], rel_path: str, heading: str, offset: int, stop: int | None
) -> tuple[list[Block], str]:
    blocks: list[Block] = []
    for i, tok in enumerate(tokens):
        if stop is not None and tok.map and tok.map[0] >= stop:
            break
        if tok.type == "heading_open" and tok.level == 0:
            heading = tokens[i + 1].content.strip()
        elif tok.level == 0 and tok.type in ("paragraph_open", "blockquote_open") and tok.map:
            blocks.append(_block(lines, tok.map, rel_path, heading, list_item=False, offset=offset))
        elif tok.type == "list_item_open" and tok.level == 1 and tok.map:
            blocks.append(_block(lines, tok.map, rel_path, heading, list_item=True, offset=offset))
    return [b for b in blocks if b.content.strip()], heading


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
        self._mirrors = {(f, _normalize(c)) for f, c in pairs}

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
        parsed = scan(data.removeprefix(_BOM_BYTES), rel)
        self._cache[rel] = (key, parsed)
        self._last_scan[rel] = (data, parsed) if len(data) <= _KEEP_SCANNED_BELOW else (b"", parsed)
        return parsed

    def _scan(self, rel: str, data: bytes) -> FileBlocks:
        """The blocks of data (BOM removed): the last read's when these are the bytes it scanned."""
        scanned, parsed = self._last_scan.get(rel, (None, None))
        if parsed is not None and scanned is not None and scanned.removeprefix(_BOM_BYTES) == data:
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
            hidden = parsed.hidden(frozenset(c for f, c in self._mirrors if f == rel))
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
        wanted = _normalize(content)
        i = next((i for i, text in enumerate(parsed.contents()) if _normalize(text) == wanted), None)
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
            data = original.removeprefix(_BOM_BYTES)
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
        inserted = {"path": MEMORY_FILE, "line": line, "text": bullet_text(content)}
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

    def append_bullet_position(self, rel: str) -> int:
        """The 1-based line where a bullet appended to rel would start."""
        path = self._inside(rel)
        if not path.exists():
            return 1
        data = path.read_bytes()
        require_utf8(data, rel)
        return len(data.removeprefix(_BOM_BYTES).splitlines()) + 1


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


def parse_record_id(record_id: str) -> tuple[str, str] | None:
    """(file, key) of an ``md:<file>:<key>`` id; None for anything else."""
    if not record_id.startswith("md:"):
        return None
    rel, _, key = record_id[3:].rpartition(":")
    if not rel or not re.fullmatch(r"[0-9a-f]{12}(~[0-9]+)?", key):
        return None
    return rel, key


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


_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, broken where the markdown parser breaks them
    (LF, CRLF, lone CR) and nowhere else: U+2028, form feed and NEL stay inside a line."""
    parts = _LINE_BREAK.split(text)
    return parts[:-1] if parts and parts[-1] == "" else parts


def _normalize(content: str) -> str:
    return " ".join(content.split()).casefold()
