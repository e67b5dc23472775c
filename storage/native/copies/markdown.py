"""The workspace's markdown copies (a row's ``md_file`` bullet) against the memory rows.

A row names the file its bullet is in; the bullet is found by its text (markdown/blocks.py's
blocks are keyed by content). A row whose text no file block says, next to a block of that
file that copies no row and says nearly the same, is one memory whose two copies were
edited apart (text-mismatch: which one is right is a person's call); a row with no such
block has lost its bullet (missing-bullet). A bullet that copies a deleted row, or the text
of a vector copy whose row is gone, is an orphan.
"""

from __future__ import annotations

import difflib
import posixpath
from collections.abc import Iterator
from itertools import groupby
from typing import Any

from ...consistency_report import Finding
from ..markdown.blocks import record_id_for as block_id_for
from ..markdown.files import inside
from .rows import markdown_files, row_pages

SAME_MEMORY = 0.7  # difflib ratio from which a lone block and a lone row are one memory edited apart
SOURCE = "markdown"


def folded(text: str) -> str:
    return " ".join(text.split()).casefold()


class MarkdownCheck:
    def __init__(self, db: Any, markdown: Any, root: Any) -> None:
        self.db = db
        self.markdown = markdown
        self.root = root
        self.checked_blocks = 0

    def rows(self) -> Iterator[Finding]:
        for rel in markdown_files(self.db):  # a file's rows are compared with its blocks together
            yield from self._file(rel, [row for page in row_pages(self.db, md_file=rel) for row in page])

    def _file(self, rel: str, rows: list[dict[str, Any]]) -> Iterator[Finding]:
        if inside(self.root, rel) is None:
            return  # md_file is data: a file outside the workspace is neither read nor written
        if posixpath.normpath(rel) in self.markdown.unreadable():
            return  # one unreadable-file finding says it: its rows' bullets cannot be compared
        blocks = self.markdown.blocks(rel) if rel in self.markdown.files() else []
        self.checked_blocks += len(blocks)
        by_text = {key: list(group) for key, group in groupby(sorted(blocks, key=lambda b: folded(b.content)),
                                                               key=lambda b: folded(b.content))}
        copied = {folded(r["content"]) for r in rows}
        lone_blocks = [b for b in blocks if folded(b.content) not in copied]
        for row in rows:
            held = by_text.get(folded(row["content"]), [])
            if row["status"] == "deleted":
                for block in held:  # a delete takes the bullet out; this one stayed behind
                    yield Finding("orphan-bullet", block.record_id, f"{rel}:{block.line} copies deleted memory {row['id']}",
                                  row["id"], SOURCE)
                continue
            if held:
                continue
            twin = _closest(row["content"], lone_blocks)
            if twin is not None:
                lone_blocks.remove(twin)
                yield Finding("text-mismatch", twin.record_id,
                              f"{rel}:{twin.line} says {_short(twin.content)!r}; the row says {_short(row['content'])!r}",
                              row["id"], SOURCE)
            else:
                where = f"{rel} has no bullet saying it" if blocks or (self.root / rel).is_file() else f"{rel} is gone"
                yield Finding("missing-bullet", block_id_for(rel, row["content"]), where, row["id"], SOURCE)

    def orphans_of(self, texts: list[str]) -> Iterator[Finding]:
        """Bullets saying what a vector copy of a gone memory said (that memory's markdown copy)."""
        wanted = {folded(t) for t in texts if t.strip()}
        if not wanted:
            return
        for rel in self.markdown.files():
            for block in self.markdown.blocks(rel):
                if folded(block.content) in wanted and self.db.memory_with_markdown_copy(rel, block.content) is None:
                    yield Finding("orphan-bullet", block.record_id,
                                  f"{rel}:{block.line} copies a memory no longer in memory.db", None, SOURCE)


def _closest(text: str, blocks: list[Any]) -> Any:
    best, best_ratio = None, SAME_MEMORY
    for block in blocks:
        ratio = difflib.SequenceMatcher(None, folded(text), folded(block.content)).ratio()
        if ratio >= best_ratio:
            best, best_ratio = block, ratio
    return best


def _short(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
