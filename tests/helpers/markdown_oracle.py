"""The parse Mnemoscope used before its line scanner: markdown-it over the whole text, one
block per top-level paragraph, quote or list item, numbered by content. The scanner
(storage/native/markdown/scan.py) and a file's keyed blocks (file_blocks.py) are checked
against it."""

from __future__ import annotations

from dataclasses import replace

from markdown_it import MarkdownIt

from mnemoscope.storage.native.markdown.blocks import Block, block_from_lines, split_lines
from mnemoscope.storage.native.markdown.files import BOM

_oracle_parser = MarkdownIt("commonmark")


def oracle(text: str, rel: str = "MEMORY.md") -> list[Block]:
    text = text.removeprefix(BOM)
    lines = split_lines(text)
    tokens = _oracle_parser.parse(text)
    blocks: list[Block] = []
    heading = ""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0:
            heading = tokens[i + 1].content.strip()
        elif tok.level == 0 and tok.type in ("paragraph_open", "blockquote_open") and tok.map:
            blocks.append(block_from_lines(lines, tok.map, rel, heading, list_item=False))
        elif tok.type == "list_item_open" and tok.level == 1 and tok.map:
            blocks.append(block_from_lines(lines, tok.map, rel, heading, list_item=True))
    seen: dict[str, int] = {}
    numbered = []
    for block in (b for b in blocks if b.content.strip()):
        seen[block.key] = seen.get(block.key, 0) + 1
        numbered.append(replace(block, occurrence=seen[block.key]))
    return numbered
