"""Scanning a markdown file into its blocks, fast enough for a 100 MB MEMORY.md.

markdown-it-py reads about 1,000 lines in 60 ms, minutes for a 100 MB MEMORY.md. Most lines of
an agent's memory file are one-line bullets, headings and blank lines, whose blocks a line
scanner finds alone; every other line is read by markdown-it in context: from the last heading
or bullet before it (the parser's state there is known) up to the first line after it that
markdown-it itself reads as a top-level heading or list item (its state there is known again).
Both give the same blocks, lines and ids (tests/storage/native/markdown/test_markdown_scan.py).

A "plain" line (-, * or + and a space, then text with single spaces and no task box, then the
file's own line ending) is a one-line bullet whose content is the line minus marker and
ending. A big file's plain lines are kept as runs of lines (file_blocks.py), hashed in bulk for
their ids only when ids are asked for.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .blocks import Block, block_from_lines
from .file_blocks import FileBlocks, PlainRun
from .files import BOM

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token


@functools.cache
def _parser() -> MarkdownIt:
    """CommonMark's parser, made at the first file parsed: a command on a store without markdown
    files never imports markdown-it (a fifth of a command's imports)."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


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
_VECTORIZED_FROM = 32 << 10  # bytes from which two-byte white space is looked for with numpy


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


def parse_blocks(text: str, rel_path: str) -> list[Block]:
    """The blocks of a file's text (a byte-order mark allowed)."""
    return scan(text.removeprefix(BOM).encode("utf-8"), rel_path).blocks()


def scan(data: bytes, rel_path: str) -> FileBlocks:
    """The blocks of a file's bytes (UTF-8, byte-order mark removed)."""
    lines = data.splitlines(keepends=True)  # LF, CRLF and lone CR, as markdown-it breaks lines
    newline = _uniform_newline(data)
    special = _special_lines(data, len(lines), newline) if newline else None
    items: list[Block | PlainRun] = []
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
            items.append(PlainRun(i, following, heading))
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
            items.append(block_from_lines(text_lines, (0, end - i), rel_path, heading, list_item=False, offset=i))
            budget.blocks += 1
            anchor, i, settled = i, end, False
            continue
        if kind == _HEADING:
            heading, anchor = value, i
        elif kind == _BULLET:
            block = block_from_lines([line], (0, 1), rel_path, heading, list_item=True, offset=i)
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
    return (line for line, _ in _special_starts(data, line_count, newline))


def _special_starts(data: bytes, line_count: int, newline: bytes) -> Iterator[tuple[int, int]]:
    """The lines that may not be plain bullets, in order, each with the offset of its first byte."""
    sources: list[Iterator[int]] = [(m.end() for m in _NOT_PLAIN_NEXT.finditer(data))]
    sources += [
        _once_per_line(re.compile(re.escape(odd)), data) for odd in _odd_spaces_in(data, newline)
    ]
    if not data.isascii():
        sources.append(_once_per_line(_ODD_SPACE_UTF8, data))
    yield 0, 0
    line = at = 0
    for mark in heapq.merge(*sources):
        if mark > at:
            found = line + data.count(b"\n", at, mark)
            if found >= line_count:
                break
            if found > line:
                yield found, data.rfind(b"\n", 0, mark) + 1
            line, at = found, mark
    if line < line_count - 1:  # the last line, whose ending may be missing
        yield line_count - 1, data.rfind(b"\n", 0, len(data) - data.endswith(b"\n")) + 1


def quick_groups(data: bytes) -> list[tuple[str, int]] | None:
    """The blocks per heading scan(data) finds (as FileBlocks.groups() runs them, with their
    counts), found without making the file's lines, where every line the scanner looks at is a
    blank line, a heading or a one-line bullet (a daily log's: the other lines are plain bullets);
    None for any other file, which scan() reads."""
    newline = _uniform_newline(data)
    if newline is None or not data:
        return None
    line_count = data.count(b"\n") + (not data.endswith(b"\n"))
    groups: list[tuple[str, int]] = []
    heading = ""
    counted = scanned = 0  # lines before `counted` are in groups; one-line bullets seen

    def add(n: int) -> None:
        if n <= 0:
            return
        if groups and groups[-1][0] == heading:
            groups[-1] = (heading, groups[-1][1] + n)
        else:
            groups.append((heading, n))

    for line, start in _special_starts(data, line_count, newline):
        add(line - counted)  # plain bullets
        end = data.find(b"\n", start)
        text = (data[start:] if end < 0 else data[start : end + 1]).decode("utf-8")
        kind, value = _line_kind(text)
        if kind is None:
            return None
        if kind == _HEADING:
            heading = value
        elif kind == _BULLET and block_from_lines([text], (0, 1), "", heading, list_item=True).content.strip():
            add(1)
            scanned += 1
            if scanned >= MAX_SCANNED_BLOCKS:
                return None
        counted = line + 1
    add(line_count - counted)
    return groups


def _odd_spaces_in(data: bytes, newline: bytes) -> list[bytes]:
    """Which of the white space str.split() folds otherwise than one space (and a space ending a
    line) data holds. Two spaces are looked for in one vectorized pass over a big file (a
    substring search for a pair of common bytes goes about one byte at a time)."""
    odd = [b for b in _ODD_SPACE_ASCII if len(b) == 1 and b in data]
    pairs = [b for b in _ODD_SPACE_ASCII if len(b) > 1] + [b" " + newline]
    if len(data) < _VECTORIZED_FROM or any(len(pair) != 2 for pair in pairs):
        return odd + [pair for pair in pairs if pair in data]
    import numpy as np

    at = np.frombuffer(data, np.uint8)
    space = at[:-1] == 0x20
    after = at[1:]
    return odd + [pair for pair in pairs if bool((space & (after == pair[1])).any())]


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


def _drop_from(items: list[Block | PlainRun], line: int) -> None:
    """Forget the blocks found from line (0-based) on."""
    while items:
        last = items[-1]
        if isinstance(last, PlainRun) and last.stop > line:
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
        tokens = _parser().parse("".join(text_lines))
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
            blocks.append(block_from_lines(lines, tok.map, rel_path, heading, list_item=False, offset=offset))
        elif tok.type == "list_item_open" and tok.level == 1 and tok.map:
            blocks.append(block_from_lines(lines, tok.map, rel_path, heading, list_item=True, offset=offset))
    return [b for b in blocks if b.content.strip()], heading
