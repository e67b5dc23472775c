"""Export and import (storage/transfer.py) on the demo store: a store imported into a new
workspace holds the same memories, sessions, turns, scratchpad, entities and relations; its
JSONL export imports back to the same memories; a second import adds nothing."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from mnemoscope.storage import Memory, MemoryQuery, open_store
from mnemoscope.storage.errors import StoreError, UnsupportedError
from mnemoscope.storage.query import Order
from mnemoscope.storage.transfer import (
    ALL_STATUSES,
    CSV_FIELDS,
    check_export_target,
    export_jsonl,
    export_markdown,
    export_memories,
    import_store,
    iter_memories,
)


def memories_of(path: Path) -> Counter[tuple]:
    """Every memory as a person compares two stores' memories: what it says, where, how kept."""
    with open_store(path) as store:
        return Counter(
            (m.content, m.channel, m.layer.value, m.status.value, tuple(m.tags), _kept(m, "salience"), _kept(m, "access_count"),
             m.created_at.isoformat())
            for m in iter_memories(store)
        )


def _kept(memory: Memory, name: str) -> float | None:
    """A field as its first store kept it: memory.db starts a field an imported memory's source did
    not keep (a markdown bullet's salience) as it starts a new memory's, and names it in
    fields_not_kept."""
    if name in memory.metadata.get("fields_not_kept", ()):
        return None
    value = getattr(memory, name)
    return None if value is None else round(value, 6)


def structure_of(path: Path) -> dict[str, object]:
    with open_store(path) as store:
        sessions = sorted((s.id, s.channel, s.title, s.user_id, s.started_at.isoformat()) for s in store.sessions())
        return {
            "sessions": sessions,
            "turns": {s[0]: [(t.role, t.content) for t in store.turns(s[0])] for s in sessions},
            "scratchpad": sorted((e.session_id, e.key, e.value) for e in store.scratch_entries()),
            "entities": sorted((e.id, e.name, e.type, e.channel) for e in store.entities()),
            "relations": sorted((r.id, r.source_id, r.type, r.target_id) for r in store.relations()),
        }


def test_an_imported_store_holds_the_same_memories_sessions_scratchpad_and_entities(
    demo_path: Path, tmp_path: Path
) -> None:
    dest = tmp_path / "imported"
    seen: list[tuple[int, int]] = []
    summary = import_store(demo_path, dest, progress=lambda done, total: seen.append((done, total)))
    with open_store(demo_path) as demo:
        total = demo.count(ALL_STATUSES)
        assert summary.to_dict() == {"imported": total, "already_present": 0, "skipped": {}, "sessions": 9,
                                     "entities": 18, "relations": len(demo.relations())}
    assert seen[-1] == (total, total)
    assert memories_of(dest) == memories_of(demo_path)
    assert structure_of(dest) == structure_of(demo_path)
    with open_store(dest) as imported:
        assert imported.has_memory_db
        whiskers = imported.page(MemoryQuery(contains="Whiskerino"), 1)[0]
        assert whiskers.metadata["import"]["path"] == str(demo_path.resolve())
        assert whiskers.provenance.imported_from.endswith(f"#{whiskers.metadata['import']['original_id']}")


def test_a_second_import_adds_nothing(demo_path: Path, tmp_path: Path) -> None:
    dest = tmp_path / "imported"
    first = import_store(demo_path, dest)
    before = (memories_of(dest), structure_of(dest))
    second = import_store(demo_path, dest)
    assert (second.imported, second.already_present) == (0, first.imported)
    assert (second.sessions, second.entities, second.relations) == (0, 0, 0)
    assert second.skipped == {"session id already in the destination": 9}
    assert (memories_of(dest), structure_of(dest)) == before


def test_the_jsonl_export_imports_back_to_the_same_memories_once(demo_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo.jsonl"
    with open_store(demo_path) as store, out.open("w", encoding="utf-8") as handle:
        written = export_jsonl(store, handle)
        assert written == store.count(ALL_STATUSES)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == written and {"id", "content", "channel", "layer", "status"} <= set(lines[0])
    first = import_store(out, tmp_path / "restored")
    assert first.imported == written
    assert memories_of(tmp_path / "restored") == memories_of(demo_path)
    again = import_store(out, tmp_path / "restored")
    assert (again.imported, again.already_present) == (0, written)


def test_memories_come_a_page_at_a_time_in_creation_order(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        every = list(iter_memories(store))
        assert len(every) == len({m.id for m in every}) == store.count(ALL_STATUSES)
        assert every == store.page(ALL_STATUSES, limit=len(every))
        webshop = list(iter_memories(store, MemoryQuery(channels=("webshop",), order=Order.CREATED)))
        assert webshop and {m.channel for m in webshop} == {"webshop"}


def test_a_selection_exports_as_csv_markdown_or_jsonl(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        chosen = store.page(MemoryQuery(channels=("rust-cli",)), 3)
        csv_out = io.StringIO()
        assert export_memories(chosen, csv_out, "csv", "x") == 3
        lines = csv_out.getvalue().splitlines()
        assert lines[0] == ",".join(CSV_FIELDS) and len(lines) == 4 and lines[1].startswith(chosen[0].id + ",rust-cli,")
        md_out = io.StringIO()
        assert export_memories(chosen, md_out, "markdown", "three rust-cli memories") == 3
        text = md_out.getvalue()
        assert text.startswith("# Memory export of three rust-cli memories\n") and "\n## rust-cli\n" in text
        assert all(f"<!-- {m.id} {m.created_at:%Y-%m-%d} -->" in text for m in chosen)
        jsonl_out = io.StringIO()
        assert export_memories(chosen, jsonl_out, "jsonl", "x") == 3
        assert [json.loads(line)["id"] for line in jsonl_out.getvalue().splitlines()] == [m.id for m in chosen]
        with pytest.raises(UnsupportedError, match="use one of jsonl, csv, markdown"):
            export_memories(chosen, io.StringIO(), "xml", "x")


def test_the_markdown_export_is_the_active_memories_by_channel_then_layer(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        out = io.StringIO()
        n = export_markdown(store, out)
        assert n == store.count(MemoryQuery())
    text = out.getvalue()
    assert text.startswith(f"# Memory export of {demo_path.name}\n")
    channels = [line[3:] for line in text.splitlines() if line.startswith("## ")]
    assert channels == sorted(channels) and {"_global", "rust-cli", "webshop"} <= set(channels)
    assert text.count("\n- ") == n


def test_import_refuses_the_same_store_and_a_destination_without_memory_db(
    demo_path: Path, markdown_only: Path, tmp_path: Path
) -> None:
    with pytest.raises(UnsupportedError, match="the same store"):
        import_store(demo_path, demo_path / "." / "")
    with pytest.raises(UnsupportedError, match="has no memory.db"):
        import_store(demo_path, markdown_only)
    with pytest.raises(StoreError, match="is a folder"):
        check_export_target(tmp_path)
    check_export_target(tmp_path / "new.jsonl")  # a file to be: fine


def test_a_cancelled_import_resumes_without_duplicates(tmp_path: Path) -> None:
    from mnemoscope.storage.native.db.sqlite_source import SqliteSource
    from mnemoscope.storage.transfer import IMPORT_BATCH, ImportCancelled, import_store

    src = tmp_path / "big"
    source = SqliteSource.open(src / "memory.db", create=True)
    source.insert_memory_rows([source.memory_row(f"fact {i}") for i in range(IMPORT_BATCH + 700)])
    source.close()
    with pytest.raises(ImportCancelled, match="run it again"):
        import_store(src, tmp_path / "dest", cancelled=lambda: True)
    summary = import_store(src, tmp_path / "dest")
    assert summary.already_present == IMPORT_BATCH and summary.imported == 700
