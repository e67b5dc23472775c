"""The line scanner finds exactly the blocks markdown-it-py finds reading the whole file.

The oracle below is the parse Mnemoscope used before the scanner: markdown-it over the whole
text, one block per top-level paragraph, quote or list item. Documents are drawn from lines
that are easy (bullets, headings, blank lines) and lines that change what the lines around
them mean (indented continuations, fences, HTML, quotes, setext underlines, thematic breaks,
odd white space), with every line ending markdown-it knows.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from mnemoscope.storage.native.markdown.blocks import Block, block_from_lines, content_key, split_lines
from mnemoscope.storage.native.markdown.file_blocks import FileBlocks
from mnemoscope.storage.native.markdown.files import BOM
from mnemoscope.storage.native.markdown.scan import parse_blocks, scan

REL = "MEMORY.md"
_oracle_parser = MarkdownIt("commonmark")


def oracle(text: str) -> list[Block]:
    text = text.removeprefix(BOM)
    lines = split_lines(text)
    tokens = _oracle_parser.parse(text)
    blocks: list[Block] = []
    heading = ""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0:
            heading = tokens[i + 1].content.strip()
        elif tok.level == 0 and tok.type in ("paragraph_open", "blockquote_open") and tok.map:
            blocks.append(block_from_lines(lines, tok.map, REL, heading, list_item=False))
        elif tok.type == "list_item_open" and tok.level == 1 and tok.map:
            blocks.append(block_from_lines(lines, tok.map, REL, heading, list_item=True))
    seen: dict[str, int] = {}
    numbered = []
    for block in (b for b in blocks if b.content.strip()):
        seen[block.key] = seen.get(block.key, 0) + 1
        numbered.append(replace(block, occurrence=seen[block.key]))
    return numbered


words = st.sampled_from([
    "fact", "tea", "Rust", "x", "über", "#tag", "*em*", "`code`", "<b>", "[x]", "1.", "2)", "-", "+", "##", ">",
    "<!--", "```", "~~~", "<div>", "|a|", "=", "&amp;", "\\", "[a]:",
])
phrase = st.lists(words, min_size=1, max_size=4).map(" ".join)
odd_space = st.sampled_from(["  ", "\t", "\u00a0", "\u2028", "\x0c", "\x1f", "\u3000", " \u0085"])
line = st.one_of(
    phrase.map(lambda t: f"- {t}"),
    phrase.map(lambda t: f"* {t}"),
    phrase.map(lambda t: f"+ {t}"),
    st.tuples(phrase, odd_space, phrase).map(lambda t: f"- {t[0]}{t[1]}{t[2]}"),
    phrase.map(lambda t: f"- {t} "),
    phrase.map(lambda t: f"- [ ] {t}"),
    phrase.map(lambda t: f"-  {t}"),
    phrase.map(lambda t: f"-    {t}"),
    phrase.map(lambda t: f"-\t{t}"),
    phrase.map(lambda t: f"1. {t}"),
    phrase.map(lambda t: f"2) {t}"),
    phrase.map(lambda t: f"#{t}"),
    st.tuples(st.integers(1, 7), phrase).map(lambda t: "#" * t[0] + " " + t[1]),
    phrase.map(lambda t: f"## {t} ##"),
    phrase.map(lambda t: f"#\t{t} #"),
    phrase.map(lambda t: f"  {t}"),
    phrase.map(lambda t: f"    {t}"),
    phrase.map(lambda t: f"   - {t}"),
    phrase.map(lambda t: f"> {t}"),
    phrase,
    st.sampled_from([
        "", " ", "\t", "-", "- ", "*", "#", "# #", "###", "---", "***", "___", "- - -", "* * *", "- ---",
        "===", "```", "~~~", "```py", "<div>", "</div>", "<!--", "-->", "<pre>", "</pre>", ">",
        "[ref]: /url", "- # heading in a bullet", "- > quote in a bullet", "- ```", "- <div>",
        "- - nested", "\x00", "# a\x00b", "\u00a0", "\ufeff- bom inside",
    ]),
)
documents = st.tuples(
    st.sampled_from(["", BOM]),
    st.lists(line, max_size=30),
    st.sampled_from(["\n", "\r\n", "\r", "mixed"]),
    st.booleans(),
    st.randoms(use_true_random=False),
).map(lambda t: _join(*t))


def _join(bom: str, lines: list[str], ending: str, last: bool, rnd) -> str:
    endings = ["\n", "\r\n", "\r"] if ending == "mixed" else [ending]
    parts = [bom]
    for i, text in enumerate(lines):
        parts.append(text)
        if i < len(lines) - 1 or last:
            parts.append(rnd.choice(endings))
    return "".join(parts)


def _facts(blocks: list[Block]) -> list[tuple]:
    return [(b.line, b.end, b.text, b.content, b.heading, b.record_id) for b in blocks]


@settings(max_examples=1500, deadline=None)
@given(doc=documents)
def test_the_scanner_finds_the_blocks_markdown_it_finds(doc: str) -> None:
    assert _facts(parse_blocks(doc, REL)) == _facts(oracle(doc))


@settings(max_examples=300, deadline=None)
@given(doc=documents, plain=st.integers(0, 40), at=st.integers(0, 30))
def test_runs_of_plain_bullets_around_any_line(doc: str, plain: int, at: int) -> None:
    lines = split_lines(doc.removeprefix(BOM))
    ending = "\r\n" if "\r\n" in doc else "\n"
    starts = ["- fact", "* tea", "+ <!--", "- > quote", "- 1. one", "- ```", "- # x", "- <div>", "- ü"]
    bullets = [f"{starts[i % len(starts)]} {i % 7}{ending}" for i in range(plain)]
    at = min(at, len(lines))
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += ending
    text = "".join(lines[:at] + bullets + lines[at:])
    assert _facts(parse_blocks(text, REL)) == _facts(oracle(text))


def _big(count: int) -> str:
    out = ["# Memory\n", "\n"]
    for n in range(count):
        if n % 500 == 0:
            out += ["\n", f"## project: p{n // 500}\n", "\n"]
        out.append(f"- fact number {n % 997} about something\n")
    return "".join(out)


def test_file_blocks_answer_like_the_blocks_they_stand_for() -> None:
    text = _big(3000) + "A closing paragraph\nover two lines.\n"
    parsed: FileBlocks = scan(text.encode(), REL)
    blocks = oracle(text)
    assert parsed.blocks() == blocks and len(parsed) == len(blocks)
    assert list(parsed.contents()) == [b.content for b in blocks]
    assert [f"{k:012x}" for k in parsed.keys().tolist()] == [content_key(b.content) for b in blocks]
    for i in (0, 1, 996, 997, 2999, len(blocks) - 1):
        assert parsed.block(i) == blocks[i]
        assert parsed.index_of(blocks[i].key) == i
    assert parsed.index_of(blocks[997].key.split("~")[0] + "~1") is None
    by_id = sorted(blocks, key=lambda b: b.record_id)
    for k in (1, 7, 50):
        assert sorted(parsed.top(k, descending=True), key=lambda b: b.record_id)[-k:] == by_id[-k:]
        assert sorted(parsed.top(k, descending=False), key=lambda b: b.record_id)[:k] == by_id[:k]
    among = list(range(0, len(blocks), 3))
    top = sorted(parsed.top(5, descending=True, among=among), key=lambda b: b.record_id)[-5:]
    assert top == sorted((blocks[i] for i in among), key=lambda b: b.record_id)[-5:]
    assert parsed.find_text(blocks[10].text) == [i for i, b in enumerate(blocks) if b.text == blocks[10].text]
    assert [(h, lo, hi) for h, lo, hi in parsed.groups()][:2] == [("project: p0", 0, 500), ("project: p1", 500, 1000)]


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_plain_bullet_keys_are_the_content_digests(ending: str) -> None:
    text = "- plain one" + ending + "- plain two" + ending
    parsed = scan(text.encode(), REL)
    assert [f"{k:012x}" for k in parsed.keys().tolist()] == [hashlib.sha1(c).hexdigest()[:12] for c in (b"plain one", b"plain two")]
