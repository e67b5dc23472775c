"""Blocks and their ids: an id names the file and the content (white space folded), a repeat
of one content in a file is told apart by ~n, and new lines for a block keep its shape."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mnemoscope.storage.native.markdown.blocks import (
    Block,
    block_content,
    block_from_lines,
    bullet_text,
    content_digest,
    content_key,
    normalized,
    parse_record_id,
    record_id_for,
    render_block,
    split_key,
    split_lines,
)


def test_a_content_key_is_the_digest_of_the_content_with_white_space_folded() -> None:
    digest = hashlib.sha1(b"likes green tea").hexdigest()
    assert content_digest("  likes\tgreen\n tea ") == bytes.fromhex(digest)
    assert content_key("likes  green\ttea") == content_key("likes green tea") == digest[:12]
    assert content_key("likes green tea", 1) == digest[:12]
    assert content_key("likes green tea", 3) == digest[:12] + "~3"
    assert content_key("Likes green tea") != digest[:12]  # case is content


def test_a_blocks_id_names_its_file_and_its_content_not_its_line() -> None:
    first = Block("memory/2026-03-14.md", 3, 3, "- tea\n", "tea", "log")
    moved = Block("memory/2026-03-14.md", 9, 9, "- tea\n", "tea", "log")
    again = Block("memory/2026-03-14.md", 12, 12, "*  tea\n", "tea", "log", occurrence=2)
    assert first.record_id == moved.record_id == record_id_for("memory/2026-03-14.md", "tea")
    assert first.record_id == "md:memory/2026-03-14.md:" + content_key("tea")
    assert again.key == content_key("tea") + "~2" and again.record_id == f"md:memory/2026-03-14.md:{again.key}"
    assert first.snapshot() == {"path": "memory/2026-03-14.md", "line": 3, "text": "- tea\n"}


@pytest.mark.parametrize(
    ("record_id", "parsed"),
    [
        ("md:MEMORY.md:0123456789ab", ("MEMORY.md", "0123456789ab")),
        ("md:MEMORY.md:0123456789ab~12", ("MEMORY.md", "0123456789ab~12")),
        ("md:notes/a:b.md:0123456789ab", ("notes/a:b.md", "0123456789ab")),  # a colon in the file name
        ("md::0123456789ab", None),
        ("md:MEMORY.md:0123456789AB", None),
        ("md:MEMORY.md:0123456789a", None),
        ("md:MEMORY.md:0123456789ab~", None),
        ("md:MEMORY.md", None),
        ("vec:memories:0123456789ab", None),
        ("m-0123456789ab", None),
    ],
)
def test_parse_record_id_takes_markdown_ids_only(record_id: str, parsed: tuple[str, str] | None) -> None:
    assert parse_record_id(record_id) == parsed


def test_split_key_takes_keys_only_as_content_key_writes_them() -> None:
    key = content_key("tea")
    assert split_key(key) == (key, 1)
    assert split_key(content_key("tea", 2)) == (key, 2)
    for bad in (key + "~1", key + "~02", key + "~", key + "~x", key.upper(), key[:11], key + "0", ""):
        assert split_key(bad) is None, bad


def test_a_block_from_lines_drops_trailing_blank_lines_and_counts_from_the_offset() -> None:
    lines = ["- first\n", "  continued\n", "\n", "\n"]
    block = block_from_lines(lines, (0, 4), "MEMORY.md", "Facts", list_item=True, offset=10)
    assert (block.line, block.end, block.text) == (11, 12, "- first\n  continued\n")
    assert (block.content, block.heading, block.occurrence) == ("first\ncontinued", "Facts", 1)


@pytest.mark.parametrize(
    ("lines", "list_item", "content"),
    [
        (["- [ ] buy tea\n"], True, "buy tea"),
        (["12. twelfth\r\n", "    more\r\n"], True, "twelfth\nmore"),
        (["* star\n", "      deeper\n", "back\n"], True, "star\n    deeper\nback"),  # the marker's width removed
        (["> quoted\n", ">more\n", "  > third\n"], False, "quoted\nmore\nthird"),
        (["  a paragraph\n", "   over lines  \n"], False, "a paragraph\nover lines"),
        ([], False, ""),
    ],
)
def test_block_content_is_the_text_a_person_reads(lines: list[str], list_item: bool, content: str) -> None:
    assert block_content(lines, list_item) == content


@pytest.mark.parametrize(
    ("old", "new", "rendered"),
    [
        ("- old\n", "new", "- new\n"),
        ("* old\r\n", "one\ntwo", "* one\r\n  two\r\n"),
        ("1. old\n", "one\n\ntwo", "1. one\n\n   two\n"),
        ("- [x] done\n", "still done", "- [x] still done\n"),
        ("> old\n", "one\n\ntwo", "> one\n>\n> two\n"),
        ("A paragraph\n", "Another\none", "Another\none\n"),
        ("- no ending", "new", "- new"),
        ("", "new", "new\n"),
    ],
)
def test_new_lines_keep_the_blocks_marker_indent_and_line_ending(old: str, new: str, rendered: str) -> None:
    assert render_block(old, new) == rendered


def test_a_bullet_for_new_content() -> None:
    assert bullet_text("likes tea") == "- likes tea\n"
    assert bullet_text("two\nlines") == "- two\n  lines\n"


def test_lines_break_where_markdown_breaks_them_only() -> None:
    assert split_lines("a\nb\r\nc\rd\u2028e\x0cf\x85g") == ["a\n", "b\r\n", "c\r", "d\u2028e\x0cf\x85g"]
    assert split_lines("a\n") == ["a\n"] and split_lines("") == []
    assert split_lines("\r\n\r\n") == ["\r\n", "\r\n"]


def test_copies_are_compared_with_white_space_folded_and_case_ignored() -> None:
    assert normalized("  Likes\tGreen\n TEA ") == normalized("likes green tea") == "likes green tea"
    assert normalized("Straße") == normalized("STRASSE")


def test_a_block_read_from_a_file_carries_the_id_its_content_gives(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(b"# Facts\r\n\r\n- likes  tea\r\n")
    lines = split_lines(path.read_bytes().decode("utf-8"))
    block = block_from_lines(lines, (2, 3), "MEMORY.md", "Facts", list_item=True)
    assert block.record_id == record_id_for("MEMORY.md", "likes tea")
    assert (block.line, block.text) == (3, "- likes  tea\r\n")
    assert render_block(block.text, "likes coffee") == "- likes coffee\r\n"
