"""One file's blocks as the scanner keeps them: plain bullets as runs of lines, looked up by
key, numbered by content and ordered by id without becoming Blocks all at once. Answers are
checked against the blocks markdown-it finds reading the whole file (tests/helpers/markdown_oracle.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from helpers.markdown_oracle import oracle
from mnemoscope.storage.native.markdown.blocks import Block, content_key
from mnemoscope.storage.native.markdown.file_blocks import FileBlocks, PlainRun
from mnemoscope.storage.native.markdown.scan import scan

REL = "MEMORY.md"


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


def _scanned(tmp_path: Path, text: str) -> FileBlocks:
    path = tmp_path / REL
    path.write_text(text, encoding="utf-8", newline="")
    return scan(path.read_bytes(), REL)


def test_a_run_of_plain_bullets_becomes_blocks_only_when_asked(tmp_path: Path) -> None:
    parsed = _scanned(tmp_path, "# Notes\n\n- tea\n- coffee\n- tea\n\nA paragraph.\n")
    assert [type(item) for item in parsed.items] == [PlainRun, Block]
    assert (parsed.items[0].start, parsed.items[0].stop, parsed.items[0].heading) == (2, 5, "Notes")
    assert len(parsed) == 4 and parsed.starts == [0, 3, 4]
    assert list(parsed.contents()) == ["tea", "coffee", "tea", "A paragraph."]
    assert parsed.raw(2) == Block(REL, 5, 5, "- tea\n", "tea", "Notes")  # raw: occurrence 1
    assert parsed.block(2).occurrence == 2 and parsed.block(2).key == content_key("tea") + "~2"
    assert [b.record_id for b in parsed.numbered([2, 0])] == [
        f"md:{REL}:{content_key('tea', 2)}", f"md:{REL}:{content_key('tea')}"
    ]
    assert parsed.blocks() == oracle((tmp_path / REL).read_text())


def test_keys_are_looked_up_only_as_content_key_writes_them(tmp_path: Path) -> None:
    parsed = _scanned(tmp_path, "- tea\n- tea\n- coffee\n")
    tea = content_key("tea")
    assert (parsed.index_of(tea), parsed.index_of(tea + "~2"), parsed.index_of(content_key("coffee"))) == (0, 1, 2)
    for key in (tea + "~1", tea + "~02", tea + "~3", tea.upper(), tea[:11], tea + "~", "", "tea"):
        assert parsed.index_of(key) is None, key


def test_hidden_blocks_are_those_whose_content_is_a_copy(tmp_path: Path) -> None:
    parsed = _scanned(tmp_path, "- Likes  TEA\n- coffee\n\nLikes tea\n")
    assert parsed.hidden(frozenset()) == frozenset()
    assert parsed.hidden(frozenset({"likes tea"})) == frozenset({0, 2})
    assert parsed.hidden(frozenset({"coffee"})) == frozenset({1})


def test_find_text_finds_every_block_with_exactly_those_lines(tmp_path: Path) -> None:
    parsed = _scanned(tmp_path, "- tea\n- coffee\n- tea\n\nA paragraph.\n\n- tea \n")
    assert parsed.find_text("- tea\n") == [0, 2]
    assert parsed.find_text("A paragraph.\n") == [3]
    assert parsed.find_text("- milk\n") == []


def test_best_keeps_the_k_highest_scores_then_lowest_ids_with_repeats_whole(tmp_path: Path) -> None:
    parsed = _scanned(tmp_path, "".join(f"- fact {n}\n" for n in range(20)) + "- fact 3\n")
    blocks = parsed.blocks()
    score = {b: 1 if int(b.content.split()[1]) % 2 else 2 for b in blocks}  # both "fact 3" score 1
    scored = [(score[b], i) for i, b in enumerate(blocks)]
    assert parsed.best(scored, 0) == []
    assert parsed.best(scored[:3], 5) == blocks[:3]
    for k in (3, 12, 15):
        picked = parsed.best(scored, k)
        above = [b for b in blocks if score[b] == 2] if k > 10 else []
        assert set(above) <= set(picked) and len(picked) >= k
        tied = sorted((b for b in blocks if score[b] == (1 if k > 10 else 2)), key=lambda b: b.record_id)
        assert tied[: k - len(above)] == sorted(set(picked) - set(above), key=lambda b: b.record_id)[: k - len(above)]
        threes = [b for b in blocks if b.content == "fact 3"]
        assert all(b in picked for b in threes) or not any(b in picked for b in threes)  # repeats come in whole
        assert [blocks.index(b) for b in picked] == sorted(blocks.index(b) for b in picked)  # file order
    odd_keys = sorted({b.key.split("~")[0] for b in blocks if score[b] == 1})
    k = 10 + odd_keys.index(content_key("fact 3")) + 1  # the k-th best is the first copy of "fact 3"
    picked = parsed.best(scored, k)
    assert len(picked) == k + 1 and all(b in picked for b in blocks if b.content == "fact 3")


def test_an_empty_file_has_no_blocks(tmp_path: Path) -> None:
    for parsed in (_scanned(tmp_path, ""), FileBlocks(REL, [], [], b"\n")):
        assert len(parsed) == 0 and parsed.blocks() == [] and list(parsed.contents()) == []
        assert parsed.top(5, descending=True) == [] and parsed.groups() == [] and parsed.index_of(content_key("x")) is None


def _repeats() -> str:
    """A daily log of 30 contents repeated unevenly: one of them 1,200 times (ids ~2 to ~1200)."""
    lines = ["# 2026-01-01\n", "\n"]
    for n in range(3_000):
        lines.append("- the same note again\n" if n % 5 < 2 else f"- note {n % 29}\n")
    return "".join(lines)


@pytest.mark.parametrize("descending", [False, True])
def test_top_gives_the_k_best_ids_without_every_repeat(descending: bool) -> None:
    parsed: FileBlocks = scan(_repeats().encode(), REL)
    every = sorted(oracle(_repeats()), key=lambda b: b.record_id, reverse=descending)
    for k in (1, 7, 100, 2_500):
        top = parsed.top(k, descending)
        assert sorted(top, key=lambda b: b.record_id, reverse=descending)[:k] == every[:k]
        assert sum(b.content == "the same note again" for b in top) <= k  # not all 1,200 repeats for each page
    among = list(range(0, 3_000, 3))
    chosen = sorted((b for i, b in enumerate(oracle(_repeats())) if i in set(among)),
                    key=lambda b: b.record_id, reverse=descending)
    assert sorted(parsed.top(50, descending, among), key=lambda b: b.record_id, reverse=descending)[:50] == chosen[:50]


@pytest.mark.parametrize("descending", [False, True])
def test_beyond_is_every_block_after_an_id_in_id_order(descending: bool) -> None:
    parsed: FileBlocks = scan(_repeats().encode(), REL)
    blocks = oracle(_repeats())
    ids = sorted(b.record_id for b in blocks)
    for pivot in (ids[0], ids[1], ids[len(ids) // 2], ids[-2], ids[-1], "md:MEMORY.md:", "md:ZZZ", "md:A"):
        expected = {i for i, b in enumerate(blocks) if (b.record_id < pivot if descending else b.record_id > pivot)}
        assert set(parsed.beyond(pivot, descending)) == expected, pivot
