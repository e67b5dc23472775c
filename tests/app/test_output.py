"""app/output.py: the human renderings of the command line's JSON documents, on documents a real
store gives (the demo workspace), and the column arithmetic of its tables."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.app import output
from mnemoscope.storage import Kind, MemoryQuery, open_store


def test_info_names_every_kind_count_and_the_journal(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        data = store.info()
    text = output.info(data)
    assert text.splitlines()[0] == data["path"]
    assert "  kinds: sqlite, chroma, markdown" in text
    assert f"  memories: {data['total']} " in text and "per channel: _global " in text
    assert f"  journal: {data['journal']['entries']} entries in " in text


def test_the_memory_table_pages_and_clips_by_terminal_columns(demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        memories = [m.to_dict() for m in store.page(MemoryQuery(), limit=3, offset=2)]
        total = store.count(MemoryQuery())
    text = output.memory_table({"total": total, "offset": 2, "limit": 3, "memories": memories})
    header, rule, *rows, footer = text.splitlines()
    assert header.split() == ["ID", "LAYER", "CHANNEL", "KIND", "SAL(STORED)", "UPDATED", "STATUS", "CONTENT"]
    assert set(rule.replace(" ", "")) == {"-"} and len(rows) == 3
    assert footer == f"(3-5 of {total})"
    assert output.memory_table({"total": 0, "offset": 0, "limit": 3, "memories": []}).endswith("(none of 0)")


def test_clip_counts_wide_characters_twice_and_table_aligns_by_them() -> None:
    from rich.cells import cell_len

    assert output._clip("a  b\n c", 10) == "a b c"
    clipped = output._clip("東京" * 10, 9)
    assert cell_len(clipped) <= 9 and clipped.endswith("…")
    table = output._table([["東京", "x"], ["ab", "y"]], ["NAME", "V"])
    assert [cell_len(line[: line.rindex(v)]) for line, v in zip(table.splitlines()[2:], "xy", strict=True)] == [6, 6]


def test_a_curation_outcome_and_the_audit_log_read_as_sentences(demo_path: Path) -> None:
    from mnemoscope.storage import Curator

    with open_store(demo_path) as store:
        target = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), limit=1)[0].id
        done = Curator(store).reinforce([target]).to_dict()
        entries = [e.to_dict() for e in store._journal.history(limit=1)]
    assert output.outcome(done).startswith("reinforce done (journal #")
    assert "reinforce" in output.history({"entries": entries})
