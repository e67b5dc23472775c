"""MarkdownSource: a workspace's markdown files as memories, and byte-exact splicing."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.markdown_ids import md_id
from mnemoscope.storage import (
    ConflictError,
    Curator,
    Kind,
    Layer,
    MemoryQuery,
    NothingToDoError,
    open_store,
)
from mnemoscope.storage.native.markdown.blocks import record_id_for, render_block, split_lines
from mnemoscope.storage.query import Order, sort_key
from mnemoscope.storage.native.markdown.source import MarkdownSource

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


def test_workspace_memories_carry_layer_channel_date_and_tags(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(MEMORY)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-03-14.md").write_text("# log\n\n- did a thing\n")
    (tmp_path / "SOUL.md").write_text("Be kind.\n")
    with open_store(tmp_path) as store:
        assert store.kinds == [Kind.MARKDOWN]
        first = store.get(md_id(store, "MEMORY.md", 8))
        assert (first.layer, first.channel, first.tags) == (Layer.SEMANTIC, "rust-cli", ("rust",))
        assert first.source.line_start == 8 and first.source.path == "MEMORY.md"
        daily = store.get(md_id(store, "memory/2026-03-14.md", 3))
        assert daily.layer is Layer.EPISODIC
        assert daily.created_at.date().isoformat() == "2026-03-14"
        assert store.get(md_id(store, "SOUL.md", 1)).layer is Layer.CORE


def test_a_non_utf8_file_is_left_out_with_one_message_and_the_rest_read(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- fine\n")
    (tmp_path / "USER.md").write_bytes(b"- caf\xe9 in latin-1\n")
    with open_store(tmp_path) as store:
        assert [m.content for m in store.page()] == ["fine"]
        [problem] = store.problems()
        assert "USER.md is not UTF-8 text (byte 0xe9 at offset 5)" in problem


def test_edit_splices_only_that_memorys_lines(tmp_path: Path) -> None:
    text = MEMORY.replace("\n", "\r\n")  # CRLF files keep CRLF
    (tmp_path / "MEMORY.md").write_bytes(text.encode())
    with open_store(tmp_path) as store:
        Curator(store).edit(md_id(store, "MEMORY.md", 9), content="second fact, edited\nover two lines")
    after = (tmp_path / "MEMORY.md").read_bytes().decode()
    expected = text.replace("- second fact\r\n  continues here\r\n", "- second fact, edited\r\n  over two lines\r\n")
    assert after == expected


# Characters Python's str.splitlines() would break at but markdown does not (VT, FF, FS, GS, RS,
# NEL, U+2028, U+2029) are in; a line break is LF, CRLF or a lone CR, and a file may start with a BOM.
lines = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=40)
line_kinds = st.one_of(
    lines.map(lambda t: f"- {t}"),
    lines.map(lambda t: f"1. {t}"),
    lines.map(lambda t: f"## {t}"),
    lines,
    st.just(""),
    lines.map(lambda t: f"    {t}"),
)
documents = st.tuples(
    st.sampled_from(["", "\ufeff"]),
    st.lists(line_kinds, max_size=25),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
).map(lambda t: t[0] + t[2].join(t[1]) + (t[2] if t[3] else ""))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents)
def test_reading_and_rewriting_unchanged_blocks_is_byte_identical(tmp_path_factory, doc: str) -> None:
    root = tmp_path_factory.mktemp("ws")
    path = root / "MEMORY.md"
    path.write_bytes(doc.encode("utf-8"))
    source = MarkdownSource(root)
    for block in source.blocks("MEMORY.md"):
        snap = block.snapshot()
        source.write_record(block.record_id, snap, snap)
    assert path.read_bytes() == doc.encode("utf-8")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents, new=st.text(alphabet="abcdefgh xyz", min_size=1, max_size=30).filter(str.strip), pick=st.integers(0, 100))
def test_an_edit_changes_only_its_own_lines(tmp_path_factory, doc: str, new: str, pick: int) -> None:
    root = tmp_path_factory.mktemp("ws")
    path = root / "MEMORY.md"
    path.write_bytes(doc.encode("utf-8"))
    source = MarkdownSource(root)
    blocks = source.blocks("MEMORY.md")
    if not blocks:
        return
    block = blocks[pick % len(blocks)]
    bom = "\ufeff" if doc.startswith("\ufeff") else ""
    before_lines = split_lines(doc.removeprefix(bom))
    new_text = render_block(block.text, new)
    source.write_record(block.record_id, block.snapshot(), {**block.snapshot(), "text": new_text})
    written = path.read_bytes().decode("utf-8")
    assert written.startswith(bom)
    after_lines = split_lines(written.removeprefix(bom))
    start, end, count = block.line - 1, block.end, len(split_lines(new_text))
    assert after_lines[:start] == before_lines[:start]
    assert after_lines[start + count :] == before_lines[end:]
    assert "".join(after_lines[start : start + count]) == new_text
    assert path.read_bytes().endswith(b"\n") == doc.encode("utf-8").endswith(b"\n")


def test_agent_memory_folders_and_learnings_are_read(tmp_path: Path) -> None:
    notes = tmp_path / ".agentix" / "memories"
    notes.mkdir(parents=True)
    (notes / "preferences.md").write_text("# Preferences\n\n- likes tea\n")
    (tmp_path / "learnings").mkdir()
    (tmp_path / "learnings" / "corrections.md").write_text("- say colour\n")
    with open_store(tmp_path) as store:
        by_id = {m.id: m for m in store.page(limit=10)}
        assert by_id["agentix:main/preferences.md"].content == "# Preferences\n\n- likes tea\n"  # one file, one note
        assert by_id[md_id(store, "learnings/corrections.md", 1)].layer is Layer.PROCEDURAL
        assert len(by_id) == 2


def test_a_folder_is_detected_by_its_memory_files(tmp_path: Path) -> None:
    assert MarkdownSource.detect(tmp_path) == 0.0
    assert MarkdownSource.detect(tmp_path / "missing") == 0.0
    (tmp_path / "memory").mkdir()
    assert MarkdownSource.detect(tmp_path) == 0.0  # an empty memory/ says nothing
    (tmp_path / "memory" / "2026-03-14.md").write_text("- logged\n")
    assert MarkdownSource.detect(tmp_path) == 0.9
    (tmp_path / "USER.md").write_text("- likes tea\n")
    assert MarkdownSource.detect(tmp_path) == 1.0
    learnings = tmp_path / "other"
    (learnings / "learnings").mkdir(parents=True)
    (learnings / "learnings" / "errors.md").write_text("- a lesson\n")
    assert MarkdownSource.detect(learnings) == 0.9


def test_files_are_listed_and_read_into_memories(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text(MEMORY)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-03-14.md").write_text("# log\n\n- did a thing\n")
    (tmp_path / "NOTES.md").write_text("- not a memory file\n")
    source = MarkdownSource(tmp_path)
    assert source.files() == ["MEMORY.md", "memory/2026-03-14.md"]
    assert source.daily_files() == ["memory/2026-03-14.md"]
    assert source.count(MemoryQuery()) == 6
    first = source.memory(source.blocks("MEMORY.md")[1])
    assert (first.content, first.channel, first.tags, first.layer) == ("first fact #rust", "rust-cli", ("rust",), Layer.SEMANTIC)
    assert source.get(first.id) == first and source.get("md:MEMORY.md:000000000000") is None
    hits = source.keyword_search("fact", MemoryQuery(), 10)
    assert {m.content for m in hits} == {"first fact #rust", "second fact\ncontinues here", "third fact with a star"}
    assert [m.id for m in source.page(MemoryQuery(contains="thing"), limit=5)] == [
        source.blocks("memory/2026-03-14.md")[0].record_id
    ]


def test_copies_of_memory_db_rows_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- Likes  TEA\n- likes coffee\n")
    source = MarkdownSource(tmp_path)
    source.set_mirrors({("MEMORY.md", "likes tea")})
    assert [m.content for m in source.page(MemoryQuery(), limit=10)] == ["likes coffee"]
    assert source.count(MemoryQuery()) == 1


def test_promote_plans_a_move_from_the_daily_log_into_memory_md(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n- kept\n")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-03-14.md").write_text("- worth keeping\n")
    source = MarkdownSource(tmp_path)
    daily = source.memory(source.blocks("memory/2026-03-14.md")[0])
    plan = source.plan_promote(daily, source.read_record(daily.id))
    assert [(c.record, c.before is not None, c.after) for c in plan.changes] == [
        (daily.id, True, None),
        (plan.new_id, False, {"path": "MEMORY.md", "line": 4, "text": "- worth keeping\n"}),
    ]
    assert plan.new_id == record_id_for("MEMORY.md", "worth keeping")
    kept = source.memory(source.blocks("MEMORY.md")[0])
    with pytest.raises(NothingToDoError):
        source.plan_promote(kept, source.read_record(kept.id))


@pytest.mark.parametrize("ending", [b"\r\n", b"\n"], ids=["crlf", "lf"])
def test_promote_writes_memory_md_with_its_own_line_endings_and_undo_puts_its_bytes_back(
    tmp_path: Path, ending: bytes
) -> None:
    memory_md = tmp_path / "MEMORY.md"
    before = ending.join([b"# Memory", b"", b"- kept", b""])
    memory_md.write_bytes(before)
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-03-14.md").write_bytes(b"- worth keeping\n- and this\n")  # the log's own: LF
    with open_store(tmp_path) as store:
        daily = [m for m in store.page(MemoryQuery(), 10) if m.source.path == "memory/2026-03-14.md"]
        Curator(store).promote(daily[0].id)
        assert memory_md.read_bytes() == before + b"- worth keeping" + ending
        Curator(store).promote(daily[1].id)
        assert memory_md.read_bytes() == before + b"- worth keeping" + ending + b"- and this" + ending
        Curator(store).undo()
        Curator(store).undo()
    assert memory_md.read_bytes() == before
    assert (tmp_path / "memory" / "2026-03-14.md").read_bytes() == b"- worth keeping\n- and this\n"


def test_a_bullet_takes_the_line_ending_of_the_file_it_goes_into(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_bytes(b"# Memory\r\n\r\n- kept")  # CRLF, no last line ending
    (tmp_path / "USER.md").write_bytes(b"- one line, no ending")
    source = MarkdownSource(tmp_path)
    assert source.bullet_for("MEMORY.md", "two\nlines") == "- two\r\n  lines\r\n"
    assert source.bullet_for("USER.md", "x") == source.bullet_for("SOUL.md", "x") == "- x\n"  # none to follow, no file


def test_a_write_changes_the_token_and_a_stale_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "MEMORY.md"
    path.write_text("- one\n- two\n")
    source = MarkdownSource(tmp_path)
    token = source.change_token()
    block = source.blocks("MEMORY.md")[1]
    snap = source.write_record(block.record_id, block.snapshot(), {**block.snapshot(), "text": "- deux\n"})
    assert snap == {"path": "MEMORY.md", "line": 2, "text": "- deux\n"}
    assert path.read_text() == "- one\n- deux\n" and source.change_token() != token
    with pytest.raises(ConflictError, match="changed since it was read"):
        source.write_record(block.record_id, block.snapshot(), None)
    assert path.read_text() == "- one\n- deux\n"


@pytest.mark.parametrize("order", [Order.RECENT, Order.CREATED, Order.SALIENCE])
@pytest.mark.parametrize("descending", [True, False])
def test_walking_pages_after_the_last_memory_gives_every_memory_once_in_order(
        tmp_path: Path, order: Order, descending: bool) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n" + "".join(f"- fact {n % 7}\n" for n in range(60)))
    for day in ("2026-01-01", "2026-01-02"):
        (tmp_path / "memory" / f"{day}.md").write_text(
            f"# {day}\n\n" + "".join("- same again\n" if n % 3 else f"- note {n % 11}\n" for n in range(400)))
    query = MemoryQuery(order=order, descending=descending)
    key = sort_key(order)
    with open_store(tmp_path, read_only=True) as store:
        everything = sorted(store.page(query, 10_000), key=key, reverse=descending)
        walked, last = [], None
        for _ in range(100):  # 24 pages hold them all: a walk that does not end fails, not hangs
            page = store.page(query, 37, after=last)
            if not page:
                break
            walked += page
            last = page[-1]
    assert len(everything) == 860 and len({m.id for m in everything}) == 860
    assert [m.id for m in walked] == [m.id for m in everything]
