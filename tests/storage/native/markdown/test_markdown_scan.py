"""The line scanner finds exactly the blocks markdown-it-py finds reading the whole file.

The oracle (tests/helpers/markdown_oracle.py) is the parse Mnemoscope used before the scanner:
markdown-it over the whole text, one block per top-level paragraph, quote or list item. Documents are drawn from lines
that are easy (bullets, headings, blank lines) and lines that change what the lines around
them mean (indented continuations, fences, HTML, quotes, setext underlines, thematic breaks,
odd white space), with every line ending markdown-it knows.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.markdown_oracle import oracle
from mnemoscope.storage.native.markdown.blocks import Block, split_lines
from mnemoscope.storage.native.markdown.files import BOM
from mnemoscope.storage.native.markdown.scan import (
    _VECTORIZED_FROM,
    MAX_SCANNED_BLOCKS,
    parse_blocks,
    quick_groups,
    scan,
)

REL = "MEMORY.md"


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


@settings(max_examples=40, deadline=None)
@given(doc=documents, at=st.integers(0, 30), double=st.booleans())
def test_a_big_file_is_scanned_as_a_small_one(doc: str, at: int, double: bool) -> None:
    """From _VECTORIZED_FROM bytes, two spaces (and a space ending a line) are looked for in a
    vectorized pass: the same blocks."""
    lines = split_lines(doc.removeprefix(BOM))
    ending = "\r\n" if "\r\n" in doc else "\n"
    filler = [f"- filler fact{'  ' if double and i == 999 else ' '}{i}{ending}" for i in range(1_800)]
    at = min(at, len(lines))
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += ending
    text = "".join(lines[:at] + filler + lines[at:])
    assert len(text.encode("utf-8")) >= _VECTORIZED_FROM
    assert _facts(parse_blocks(text, REL)) == _facts(oracle(text))


def _groups(data: bytes) -> list[tuple[str, int]]:
    return [(heading, hi - lo) for heading, lo, hi in scan(data, REL).groups()]


@settings(max_examples=1500, deadline=None)
@given(doc=documents, plain=st.integers(0, 40), at=st.integers(0, 30))
def test_quick_groups_are_the_scanners_where_they_answer(doc: str, plain: int, at: int) -> None:
    lines = split_lines(doc.removeprefix(BOM))
    ending = "\r\n" if "\r\n" in doc else "\n"
    at = min(at, len(lines))
    if at and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += ending
    data = "".join(lines[:at] + [f"- plain {i}{ending}" for i in range(plain)] + lines[at:]).encode("utf-8")
    quick = quick_groups(data)
    assert quick is None or quick == _groups(data)


def test_quick_groups_answer_for_a_daily_log() -> None:
    day = "# 2024-01-01\n\n## Session 1\n\n- a\n- b  c\n- \u00a0\n* e \n+ ü\n\n## Session 1\n- f\n## Empty\n\n## Last\n- g"
    for text in (day, day.replace("\n", "\r\n"), day + "\n"):
        data = text.encode("utf-8")
        assert quick_groups(data) == _groups(data) == [("Session 1", 5), ("Last", 1)]
    assert quick_groups(b"- a\nparagraph\n") is None and quick_groups(b"- a\r- b\n") is None


MEMORY = """# Memory

Intro paragraph that spans
two lines.

## project: rust-cli

- first fact #rust
- second fact
  continues here
* third fact with a star

> a quoted thought
"""


def test_blocks_have_content_and_line_ranges() -> None:
    blocks = parse_blocks(MEMORY, "MEMORY.md")
    assert [(b.line, b.end, b.content) for b in blocks] == [
        (3, 4, "Intro paragraph that spans\ntwo lines."),
        (8, 8, "first fact #rust"),
        (9, 10, "second fact\ncontinues here"),
        (11, 11, "third fact with a star"),
        (13, 13, "a quoted thought"),
    ]
    assert blocks[1].heading == "project: rust-cli"


def test_a_files_bytes_are_scanned_as_they_are(tmp_path: Path) -> None:
    """A CRLF file on disk: its lines kept with their endings, blocks found with their lines
    and headings, the file's own line ending remembered for the plain bullets."""
    path = tmp_path / "MEMORY.md"
    path.write_bytes(MEMORY.replace("\n", "\r\n").encode("utf-8"))
    parsed = scan(path.read_bytes(), "MEMORY.md")
    assert parsed.newline == b"\r\n" and parsed.unread_from is None
    assert b"".join(parsed.lines) == path.read_bytes()
    assert [(b.line, b.end, b.content, b.heading) for b in parsed.blocks()] == [
        (b.line, b.end, b.content, b.heading) for b in parse_blocks(MEMORY, "MEMORY.md")
    ]
    assert parsed.blocks()[0].text == "Intro paragraph that spans\r\ntwo lines.\r\n"


def test_a_file_past_the_block_budget_is_read_up_to_where_it_ran_out() -> None:
    count = MAX_SCANNED_BLOCKS + 50
    text = "".join(f"Paragraph {n}.\n\n" for n in range(count))
    parsed = scan(text.encode(), REL)
    assert parsed.unread_from is not None
    assert MAX_SCANNED_BLOCKS - 2 <= len(parsed) <= MAX_SCANNED_BLOCKS < count
    last = parsed.raw(len(parsed) - 1)
    assert last.end <= parsed.unread_from and last.content == f"Paragraph {len(parsed) - 1}."
    assert scan(b"Paragraph.\n", REL).unread_from is None
