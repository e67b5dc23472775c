"""A workspace counted from its files' summaries and paged a run of files at a time answers as
reading every block does, and the summaries kept between opens are trusted only while their file
is unchanged.

The reference here is the plainest reading: every block of every file made a Memory, filtered by
storage.source.matches and ordered by storage.source.page_of (what MarkdownSource did before it
kept summaries).
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemoscope.storage import Layer, MemoryQuery, Order
from mnemoscope.storage.model import Kind, Memory
from mnemoscope.storage.native.markdown.blocks import normalized
from mnemoscope.storage.native.markdown.file_index import SETTLED_NS, FileIndex, index_folder, summarize
from mnemoscope.storage.native.markdown.scan import scan
from mnemoscope.storage.native.markdown.source import MarkdownSource
from mnemoscope.storage.source import matches, page_of

MEMORY_MD = """---
title: front matter, as a person might write it
---

# Memory

Intro paragraph that spans
two lines.

## project: alpha

- deploy with the blue pipeline
- nested fact
  - a child bullet
  - another child
- naïve café fact, ünïcode #tag
- deploy with the blue pipeline

```
- not a bullet: inside a fence
- neither is this
```

## channel = beta

1. numbered one
2. numbered two

> a quoted thought
> over two lines
"""

CRLF_DAY = "# 2024-01-01\r\n\r\n## project: alpha\r\n\r\n- crlf fact one\r\n- crlf fact two\r\n  continued\r\n\r\n- deploy in crlf\r\n"

FENCED_DAY = """# 2024-01-02

~~~md
- fenced line
~~~

- after the fence
- after the fence
- Ωmega and ΣΑΣ in greek
* star bullet
+ plus bullet
-   spaced bullet
- [x] a task
"""


def _day(n: int, bullets: int) -> str:
    lines = [f"# day {n}\n"]
    for i in range(bullets):
        if i % 7 == 0:
            lines.append(f"\n## {'project: alpha' if i % 14 == 0 else 'Session'} {i}\n\n")
        lines.append(f"- fact {n}-{i}: deploy step {i % 5}\n")
    return "".join(lines)


def _write_workspace(root: Path) -> None:
    (root / "memory" / "sub").mkdir(parents=True)
    (root / "learnings").mkdir()
    (root / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (root / "USER.md").write_text("- prefers trains\n- prefers trains\n", encoding="utf-8")
    (root / "learnings" / "errors.md").write_text("- the build broke on Tuesday\n", encoding="utf-8")
    (root / "memory" / "2024-01-01.md").write_bytes(CRLF_DAY.encode("utf-8"))
    (root / "memory" / "2024-01-02.md").write_text(FENCED_DAY, encoding="utf-8")
    for n in range(3, 12):
        (root / "memory" / f"2024-01-{n:02d}.md").write_text(_day(n, 3 * n), encoding="utf-8")
    (root / "memory" / "sub" / "2024-01-05.md").write_text(_day(105, 9), encoding="utf-8")  # a second file of a date
    (root / "memory" / "empty.md").write_text("", encoding="utf-8")
    (root / "memory" / "headings-only.md").write_text("# a\n\n## b\n", encoding="utf-8")
    (root / "memory" / "notes.md").write_text("".join(f"- undated note {n}\n" for n in range(12)), encoding="utf-8")
    # ids md:memory/notes.md:<key> and md:memory/notes.md:8.md:<key> interleave
    (root / "memory" / "notes.md:8.md").write_text("- a file named as another's name, ':' and more\n", encoding="utf-8")
    old = time.time() - 86_400
    os.utime(root / "USER.md", (old, old))  # the files that take their date from their mtime differ
    os.utime(root / "memory" / "notes.md", (old - 3600, old - 3600))
    os.utime(root / "memory" / "notes.md:8.md", (old - 3600, old - 3600))


def _reference(source: MarkdownSource, query: MemoryQuery) -> list[Memory]:
    hidden = {(f, c) for f, c in source._mirrors}
    every = [
        source.memory(block) for rel in source.files() for block in source.blocks(rel)
        if (rel, normalized(block.content)) not in hidden
    ]
    return [m for m in every if query.wants_kind(Kind.MARKDOWN) and matches(m, query)]


QUERIES = [
    MemoryQuery(),
    MemoryQuery(descending=False),
    MemoryQuery(order=Order.CREATED),
    MemoryQuery(order=Order.ACCESSED, descending=False),
    MemoryQuery(order=Order.SALIENCE),
    MemoryQuery(order=Order.SALIENCE, descending=False),
    MemoryQuery(order=Order.EFFECTIVE_SALIENCE),
    MemoryQuery(channels=("alpha",)),
    MemoryQuery(channels=("beta", "_global"), descending=False),
    MemoryQuery(layers=(Layer.EPISODIC,)),
    MemoryQuery(layers=(Layer.SEMANTIC, Layer.SOCIAL), order=Order.SALIENCE),
    MemoryQuery(since=datetime(2024, 1, 4, tzinfo=timezone.utc), until=datetime(2024, 1, 9, tzinfo=timezone.utc)),
    MemoryQuery(contains="deploy"),
    MemoryQuery(contains="DEPLOY STEP 3", descending=False),
    MemoryQuery(contains="café"),
    MemoryQuery(contains="σας"),
    MemoryQuery(contains="fact two\ncontinued"),
    MemoryQuery(contains="not a bullet"),
    MemoryQuery(kinds=(Kind.SQLITE,)),
    MemoryQuery(statuses=()),
]
WINDOWS = [(50, 0), (1, 0), (3, 2), (7, 20), (25, 60), (1000, 0), (5, 10_000)]


def _check_against_reference(ws: Path, mirrors: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Each query's count, pages and counts per channel and layer from a source opened for it
    (nothing scanned yet) against the reference's, from another."""
    reference = MarkdownSource(ws)
    reference.set_mirrors(set(mirrors))
    for query in QUERIES:
        expected = _reference(reference, query)
        source = MarkdownSource(ws)
        source.set_mirrors(set(mirrors))
        assert source.count(query) == len(expected), query
        for limit, offset in WINDOWS:
            got = [m.id for m in source.page(query, limit, offset)]
            assert got == [m.id for m in page_of(expected, query, limit, offset)], (query, limit, offset)
        assert source.counts_by("channel", query) == _tally(expected, "channel"), query
        assert source.counts_by("layer", query) == _tally(expected, "layer"), query


def _tally(memories: list[Memory], column: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in memories:
        key = getattr(m, column).value if column == "layer" else getattr(m, column)
        out[key] = out.get(key, 0) + 1
    return out


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_counts_and_pages_are_those_of_reading_every_block(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    _write_workspace(ws)
    assert len(_reference(MarkdownSource(ws), MemoryQuery())) > 150
    _check_against_reference(ws)


def test_copies_of_memory_db_memories_are_left_out_of_counts_and_pages(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    _write_workspace(ws)
    mirrors = frozenset({("memory/2024-01-05.md", "fact 5-3: deploy step 3"), ("USER.md", "prefers trains")})
    source = MarkdownSource(ws)
    source.set_mirrors(set(mirrors))
    assert source.count(MemoryQuery()) == len(_reference(MarkdownSource(ws), MemoryQuery())) - 3
    _check_against_reference(ws, mirrors)


def test_a_summary_is_kept_between_opens_and_trusted_only_while_its_file_is_unchanged(
    tmp_path: Path, home: Path
) -> None:
    ws = tmp_path / "ws"
    _write_workspace(ws)
    before = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*"))
    MarkdownSource(ws)
    assert not index_folder().exists() or not any(index_folder().iterdir())  # just written: none trusted yet
    time.sleep(SETTLED_NS / 1e9 + 0.2)
    MarkdownSource(ws)
    (kept,) = index_folder().glob("*.json")
    assert set(json.loads(kept.read_text(encoding="utf-8"))["files"]) == set(MarkdownSource(ws).files())
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*")) == before  # nothing beside the owner's files

    # An agent appends to one file, rewrites another to the same size and puts its mtime back.
    with (ws / "memory" / "2024-01-03.md").open("a", encoding="utf-8") as out:
        out.write("- appended by an agent\n")
    day4 = ws / "memory" / "2024-01-04.md"
    st = day4.stat()
    day4.write_text(day4.read_text(encoding="utf-8").replace("fact 4-0", "FACT 4-0"), encoding="utf-8")
    os.utime(day4, ns=(st.st_atime_ns, st.st_mtime_ns))
    source = MarkdownSource(ws)
    contents = {m.content for m in source.page(MemoryQuery(), 1000)}
    assert "appended by an agent" in contents and "FACT 4-0: deploy step 0" in contents
    assert "fact 4-0: deploy step 0" not in contents
    _check_against_reference(ws)


def test_a_summary_made_right_after_its_file_changed_is_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_text("# h\n\n- a\n- b\n\n## k\n\n- c\n", encoding="utf-8")
    st = path.stat()
    parsed = scan(path.read_bytes(), "f.md")
    fresh = summarize(parsed, st, st.st_mtime_ns + 1_000_000)
    settled = summarize(parsed, st, max(st.st_mtime_ns, st.st_ctime_ns) + SETTLED_NS + 1)
    assert fresh.groups == settled.groups == (("h", 2), ("k", 1)) and settled.blocks == 3
    index = FileIndex(tmp_path, tmp_path / "cache")
    index.put("f.md", fresh)
    index.put("g.md", settled)
    index.save()
    again = FileIndex(tmp_path, tmp_path / "cache")
    assert again.get("f.md", fresh.token) is None
    assert again.get("g.md", settled.token) == settled
    assert again.get("g.md", (settled.token[0] + 1, *settled.token[1:])) is None


def test_an_unreadable_index_is_ignored(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    _write_workspace(ws)
    index_folder().mkdir(parents=True)
    for name in ("a", "b"):
        (index_folder() / f"{name}.json").write_text("{not json", encoding="utf-8")
    FileIndex(ws)._where.write_text('{"format": 1, "root": "elsewhere", "files": {}}', encoding="utf-8")
    _check_against_reference(ws)
