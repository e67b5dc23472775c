"""Curation across every copy of a memory, each step audited and undone exactly."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers.store_state import sql_rows, state_of

from helpers.markdown_ids import md_id
from mnemoscope.storage import (
    BelowThresholdError,
    ConflictError,
    Curator,
    MemoryQuery,
    NothingToDoError,
    Status,
    StoreError,
    UnsupportedError,
    open_store,
)
from mnemoscope.storage.native.chroma.records import NATIVE_COLLECTION, STALE_KEY, record_id_for
from mnemoscope.storage.native.db.rows import memory_from_row
from mnemoscope.storage.timeutil import utcnow


def _mirrored_memory(root: Path) -> str:
    """A memory.db memory that also has a vector and a daily-log markdown copy."""
    rows = sql_rows(root, "SELECT id FROM memories WHERE md_file LIKE 'memory/%' ORDER BY id LIMIT 1")
    return rows[0][0]


def _promotable(root: Path) -> str:
    return sql_rows(root, "SELECT id FROM memories WHERE tags LIKE '%promotion-ready%' ORDER BY id LIMIT 1")[0][0]


OPERATIONS = {
    "edit content": lambda c, ids: c.edit(ids["mirrored"], content="keep the public API frozen until 2.0"),
    "edit fields": lambda c, ids: c.edit(ids["promotable"], tags=["a", "b"], layer="procedural", channel="webshop", salience=0.2),
    "promote": lambda c, ids: c.promote(ids["mirrored"], reason="test", force=True),
    "delete": lambda c, ids: c.delete(ids["mirrored"]),
    "edit markdown": lambda c, ids: c.edit(ids["daily"], content="rewritten daily entry"),
    "promote markdown": lambda c, ids: c.promote(ids["daily"]),
    "delete markdown": lambda c, ids: c.delete(ids["daily"]),
    "reinforce": lambda c, ids: c.reinforce(ids["mirrored"]),
}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_operation_is_undone_exactly_and_redone(demo_path: Path, name: str) -> None:
    with open_store(demo_path) as store:
        daily = store.page(MemoryQuery(kinds=(store._workspace.markdown.kind,), contains="Drafted release notes"), limit=1)[0]
        ids = {"mirrored": _mirrored_memory(demo_path), "promotable": _promotable(demo_path), "daily": daily.id}
        before = state_of(demo_path)
        curator = Curator(store)
        OPERATIONS[name](curator, ids)
        after = state_of(demo_path)
        assert after != before
        curator.undo()
        assert state_of(demo_path) == before
        curator.redo()
        assert state_of(demo_path) == after
        ops = [e.operation for e in store._journal.history()]
        assert ops[0] == "redo" and ops[1] == "undo"


def test_edit_reaches_sql_vector_and_markdown_copies(demo_path: Path) -> None:
    memory_id = _mirrored_memory(demo_path)
    md_file = sql_rows(demo_path, "SELECT md_file FROM memories WHERE id = ?", memory_id)[0][0]
    with open_store(demo_path) as store:
        old_vector = store._workspace.vectors.embedding_of(record_id_for(NATIVE_COLLECTION, memory_id))
        Curator(store).edit(memory_id, content="a brand new sentence about caching")
        assert store.get(memory_id).content == "a brand new sentence about caching"
        vector = store._workspace.vectors.read_record(record_id_for(NATIVE_COLLECTION, memory_id))
        assert vector["document"] == "a brand new sentence about caching"
        assert vector["embedding"] != old_vector  # re-embedded by the store's embedder
        assert STALE_KEY not in vector["metadata"]
    assert "- a brand new sentence about caching\n" in (demo_path / md_file).read_text()


def test_without_an_embedder_an_edited_vector_is_marked_stale(demo_path: Path) -> None:
    from mnemoscope.storage.settings import StoreSettings

    memory_id = _mirrored_memory(demo_path)
    with open_store(demo_path) as store:
        store.save_settings(StoreSettings(embedder="some-remote-model"))
        store._workspace.vectors.embedder_override = None
        store._workspace.vectors.collection(NATIVE_COLLECTION).modify(metadata={"mnemoscope:embedder": "remote-model"})
    with open_store(demo_path) as store:
        assert store.embedder() is None
        Curator(store).edit(memory_id, content="changed without an embedder")
        vector = store._workspace.vectors.read_record(record_id_for(NATIVE_COLLECTION, memory_id))
        assert vector["metadata"][STALE_KEY] is True
        assert store.get(memory_id).metadata["vector_state"] == "stale"


def test_promote_links_new_global_memory_and_snapshots_thresholds(demo_path: Path) -> None:
    """Seed 002: the promoted fact is a copy in _global linked PROMOTED_FROM to the original,
    which stays; the copy's access clock starts now, so it is not a cleanup candidate at once."""
    memory_id = _promotable(demo_path)
    with open_store(demo_path) as store:
        original = store.get(memory_id)
        outcome = Curator(store).promote(memory_id, reason="asked for twice")
        new = store.get(outcome.ids[0])
        assert new.channel == "_global" and new.provenance.promoted_from == memory_id
        assert store.get(memory_id) == original and store.get(memory_id).status is Status.ACTIVE
        assert new.last_accessed > original.last_accessed
        assert (utcnow() - new.last_accessed).total_seconds() < 60
        assert not store.settings.salience.is_cleanup_candidate(new, utcnow())
        relation = store._workspace.db.relations(types=["PROMOTED_FROM"], touching=new.id)[0]
        assert (relation.source_id, relation.target_id) == (new.id, memory_id)
        entry = store._journal.history(limit=1)[0]
        assert entry.operation == "promote"
        assert entry.details["thresholds"] == {"confidence": 0.85, "access_count": 5, "conversations": 2}
        assert entry.details["all_met"] is True and entry.details["forced"] is False


def _with_stats(root: Path, memory_id: str, confidence: float, access_count: int, conversations: int) -> None:
    with contextlib.closing(sqlite3.connect(root / "memory.db")) as con, con:
        con.execute("UPDATE memories SET confidence = ?, access_count = ?, conversations = ?, channel = 'webshop' "
                    "WHERE id = ?", (confidence, access_count, conversations, memory_id))


@pytest.mark.parametrize(("stats", "failed"), [
    ((0.85, 5, 2), []),  # the seed's thresholds, each met exactly
    ((0.84, 5, 2), ["confidence 0.84 < 0.85"]),
    ((0.95, 4, 2), ["access_count 4 < 5"]),
    ((0.95, 5, 1), ["conversations 1 < 2"]),
])
def test_promotion_below_a_threshold_needs_force_and_is_recorded(
    demo_path: Path, stats: tuple[float, int, int], failed: list[str]
) -> None:
    memory_id = _promotable(demo_path)
    _with_stats(demo_path, memory_id, *stats)
    with open_store(demo_path) as store:
        curator = Curator(store)
        if failed:
            before = state_of(demo_path)
            with pytest.raises(BelowThresholdError) as refused:
                curator.promote(memory_id)
            assert refused.value.unmet == {memory_id: failed} and failed[0] in str(refused.value)
            assert state_of(demo_path) == before  # nothing written, nothing journaled
        outcome = curator.promote(memory_id, force=bool(failed))
        entry = store._journal.history(limit=1)[0]
        assert entry.details["forced"] is bool(failed) and entry.details["failed"] == failed
        assert store.get(outcome.ids[0]).channel == "_global"


def test_promotion_candidates_are_the_project_facts_that_meet_every_threshold(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        candidates = store.promotion_candidates()
        thresholds = store.settings.promotion
        everything = store.page(MemoryQuery(), limit=store.count(MemoryQuery()))
        expected = {m.id for m in everything if m.channel != "_global" and m.source.kind.value == "sqlite"
                    and thresholds.check(m)["all_met"]}
        assert expected and {m.id for m in candidates} == expected
        promoted = Curator(store).promote(candidates[0].id).ids[0]
        after = {m.id for m in store.promotion_candidates()}
        assert candidates[0].id not in after and promoted not in after  # promoted once, and _global is no project


def test_promoting_a_daily_bullet_moves_it_into_memory_md(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        daily = store.page(MemoryQuery(kinds=(store._workspace.markdown.kind,), contains="Drafted release notes"), limit=1)[0]
        daily_file = demo_path / daily.source.path
        outcome = Curator(store).promote(daily.id)
        assert outcome.ids[0].startswith("md:MEMORY.md:")
        assert store.get(outcome.ids[0]).content == daily.content
    assert daily.content not in daily_file.read_text()
    assert f"- {daily.content}\n" in (demo_path / "MEMORY.md").read_text()


def test_soft_delete_hides_and_restore_brings_back(demo_path: Path) -> None:
    memory_id = _mirrored_memory(demo_path)
    md_file = sql_rows(demo_path, "SELECT md_file FROM memories WHERE id = ?", memory_id)[0][0]
    original_md = (demo_path / md_file).read_bytes()
    with open_store(demo_path) as store:
        total = store.count()
        curator = Curator(store)
        curator.delete(memory_id)
        assert store.count() == total - 1
        assert store.get(memory_id).status is Status.DELETED
        curator.restore(memory_id)
        assert store.get(memory_id).status is Status.ACTIVE
        assert store.count() == total
    assert (demo_path / md_file).read_bytes() == original_md


def test_markdown_delete_and_restore_put_the_lines_back(markdown_only: Path) -> None:
    target = markdown_only / "learnings" / "errors.md"
    original = target.read_bytes()
    with open_store(markdown_only) as store:
        curator = Curator(store)
        memory_id = md_id(store, "learnings/errors.md", 3)
        curator.delete(memory_id)
        assert b"cargo publish failed" not in target.read_bytes()
        curator.restore(memory_id)
        assert target.read_bytes() == original
        assert store.get(memory_id).source.line_start == 3  # the same id, back at its line
        with pytest.raises(NothingToDoError):
            curator.restore(memory_id)
    # The journal of a markdown-only workspace lives in a sidecar, not in a memory.db.
    assert (markdown_only / ".mnemoscope" / "journal.db").exists()
    assert not (markdown_only / "memory.db").exists()


def test_undo_works_across_separate_openings(demo_path: Path) -> None:
    memory_id = _promotable(demo_path)
    before = state_of(demo_path)
    with open_store(demo_path) as store:
        Curator(store).edit(memory_id, salience=0.11)
    with open_store(demo_path) as store:
        Curator(store).undo()
    assert state_of(demo_path) == before


def test_a_concurrent_write_is_detected_not_overwritten(demo_path: Path) -> None:
    memory_id = _promotable(demo_path)
    with open_store(demo_path) as store:
        seen = store.get(memory_id)
        con = sqlite3.connect(demo_path / "memory.db")  # an agent writes meanwhile
        con.execute("UPDATE memories SET content = 'agent wrote this' WHERE id = ?", (memory_id,))
        con.commit()
        con.close()
        with pytest.raises(ConflictError, match="changed since it was read"):
            Curator(store).edit(memory_id, content="my edit", expected_revision=seen.revision)
        assert store.get(memory_id).content == "agent wrote this"
        assert store._journal.count() == 0


def test_undo_refuses_when_an_agent_changed_the_memory_since(demo_path: Path) -> None:
    memory_id = _promotable(demo_path)
    with open_store(demo_path) as store:
        Curator(store).edit(memory_id, content="curated text")
        con = sqlite3.connect(demo_path / "memory.db")
        con.execute("UPDATE memories SET salience = 0.01, access_count = access_count + 1 WHERE id = ?", (memory_id,))
        con.commit()
        con.close()
        with pytest.raises(ConflictError):
            Curator(store).undo()
        assert store.get(memory_id).content == "curated text"
        assert store._journal.next_to_undo().operation == "edit"


def test_undo_of_an_edit_keeps_the_access_counts_an_agent_added_since(demo_path: Path) -> None:
    memory_id = _promotable(demo_path)
    with open_store(demo_path) as store:
        original = store.get(memory_id)
        Curator(store).edit(memory_id, content="curated text")
        con = sqlite3.connect(demo_path / "memory.db")
        for _ in range(10):  # the agent retrieves it ten times: its own counters move
            con.execute("UPDATE memories SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
                        ("2026-11-29T09:00:00+00:00", memory_id))
            con.commit()
        con.close()
        undone = Curator(store).undo()
        now = store.get(memory_id)
        assert undone.operation == "undo"
        assert now.content == original.content
        assert now.access_count == (original.access_count or 0) + 10
        assert now.last_accessed.isoformat().startswith("2026-11-29T09:00:00")
        assert [f for f in store.consistency_checks() if memory_id in str(f)] == []  # its vector's text too
        Curator(store).redo()  # redone on top of the agent's counters too
        again = store.get(memory_id)
        assert again.content == "curated text" and again.access_count == (original.access_count or 0) + 10


def test_undo_of_an_edit_with_a_markdown_copy_keeps_the_agents_access_counts(demo_path: Path) -> None:
    memory_id = _mirrored_memory(demo_path)
    with open_store(demo_path) as store:
        original = store.get(memory_id)
        Curator(store).edit(memory_id, content="keep the public API frozen until 2.0")
        with sqlite3.connect(demo_path / "memory.db") as con:
            con.execute("UPDATE memories SET access_count = access_count + 3 WHERE id = ?", (memory_id,))
        con.close()
        Curator(store).undo()
        now = store.get(memory_id)
        md_file = sql_rows(demo_path, "SELECT md_file FROM memories WHERE id = ?", memory_id)[0][0]
        assert (now.content, now.access_count) == (original.content, (original.access_count or 0) + 3)
        assert original.content in (demo_path / md_file).read_text(encoding="utf-8")


def test_undo_of_a_reinforce_after_the_agents_own_bump_takes_back_the_persons_count_only(demo_path: Path) -> None:
    memory_id = _promotable(demo_path)
    with open_store(demo_path) as store:
        start = store.get(memory_id).access_count or 0
        Curator(store).reinforce(memory_id)
        with sqlite3.connect(demo_path / "memory.db") as con:
            con.execute("UPDATE memories SET access_count = access_count + 1 WHERE id = ?", (memory_id,))
        con.close()
        Curator(store).undo()
        assert store.get(memory_id).access_count == start + 1  # the agent's access, not the person's
        assert store._journal.next_to_redo().operation == "reinforce"


def test_a_failed_copy_write_leaves_every_copy_unchanged(demo_path: Path) -> None:
    from mnemoscope.storage.settings import StoreSettings

    memory_id = _mirrored_memory(demo_path)
    with open_store(demo_path) as store:
        # A misconfigured embedder: 16-dimensional vectors for a 256-dimensional collection.
        store.save_settings(StoreSettings(embedder="mnemoscope-hashing-16"))
    before = state_of(demo_path)
    with open_store(demo_path) as store:
        with pytest.raises(StoreError, match="every copy was left as it was"):
            Curator(store).edit(memory_id, content="should not land anywhere")
        # The attempt is audited (its intent was written first), and there is nothing to undo.
        assert [e.state for e in store._journal.history()] == ["failed"]
        assert store._journal.next_to_undo() is None
    assert state_of(demo_path) == before


def test_markdown_memories_refuse_fields_markdown_cannot_hold(markdown_only: Path) -> None:
    with open_store(markdown_only) as store:
        with pytest.raises(UnsupportedError, match="cannot be stored there"):
            Curator(store).edit(md_id(store, "USER.md", 3), salience=0.9)


def test_new_step_after_undo_drops_redo(demo_path: Path) -> None:
    memory_id = _promotable(demo_path)
    with open_store(demo_path) as store:
        curator = Curator(store)
        curator.edit(memory_id, salience=0.3)
        curator.undo()
        curator.edit(memory_id, salience=0.4)
        with pytest.raises(NothingToDoError, match="Nothing to redo"):
            curator.redo()
        states = {e.operation: e.state for e in store._journal.history() if e.operation == "edit"}
        assert set(states.values()) <= {"done", "dropped"}
        assert json.dumps(store.get(memory_id).salience) == "0.4"


def test_reinforce_raises_effective_salience_now(demo_path: Path) -> None:
    from datetime import timedelta

    from mnemoscope.storage.timeutil import utcnow

    memory_id = _mirrored_memory(demo_path)
    with open_store(demo_path) as store:
        model = store.settings.salience
        before = store.get(memory_id)
        Curator(store).reinforce(memory_id)
        after = store.get(memory_id)
        assert after.access_count == before.access_count + 1
        assert utcnow() - after.last_accessed < timedelta(minutes=1)
        assert model.effective(after, utcnow()) > model.effective(before, utcnow())


def test_reembed_refreshes_stale_vectors_in_one_undoable_step(demo_path: Path) -> None:
    from mnemoscope.storage.settings import StoreSettings

    memory_id = _mirrored_memory(demo_path)
    with open_store(demo_path) as store:
        settings = store.settings
        store.save_settings(StoreSettings(embedder="remote-model-not-here"))
        store._workspace.vectors.collection(NATIVE_COLLECTION).modify(metadata={"mnemoscope:embedder": "remote-model"})
    with open_store(demo_path) as store:
        Curator(store).edit(memory_id, content="edited while offline")
        assert store.get(memory_id).metadata["vector_state"] == "stale"
        store.save_settings(settings)  # an embedder is available again
        stale = state_of(demo_path)
        outcome = Curator(store).reembed()
        assert outcome.ids == [memory_id]
        assert store.get(memory_id).metadata["vector_state"] == "fresh"
        vector = store._workspace.vectors.read_record(record_id_for(NATIVE_COLLECTION, memory_id))
        assert STALE_KEY not in vector["metadata"]
        from mnemoscope.storage.embedders.local import LocalEmbedder

        expected = LocalEmbedder().embed(["edited while offline"])[0]  # the demo's embedder
        assert [round(x, 4) for x in vector["embedding"]] == [round(x, 4) for x in expected]
        with pytest.raises(NothingToDoError):
            Curator(store).reembed()
        Curator(store).undo()
        assert state_of(demo_path) == stale


def _mixed_selection(store, root: Path) -> list[str]:
    """Three bullets of one daily log, two memory.db memories and a vector record of its own."""
    embedder = store.embedder()
    text = "a standalone vector fact about invoices"
    meta = {"channel": "webshop", "layer": "semantic", "status": "active", "created_at": "2026-10-01T00:00:00+00:00"}
    store._workspace.vectors.add_records(NATIVE_COLLECTION, ["solo-1"], [text], [meta], embedder.embed([text]))
    markdown = store.page(MemoryQuery(kinds=(store._workspace.markdown.kind,)), limit=500)
    by_file: dict[str, list[str]] = {}
    for memory in markdown:
        if memory.source.path.startswith("memory/"):
            by_file.setdefault(memory.source.path, []).append(memory.id)
    daily = next(ids for ids in by_file.values() if len(ids) >= 3)[:3]
    return [*daily, _mirrored_memory(root), _promotable(root), record_id_for(NATIVE_COLLECTION, "solo-1")]


def test_a_mixed_selection_is_deleted_undone_and_restored_as_one_step(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        ids = _mixed_selection(store, demo_path)
        before = state_of(demo_path)
        entries = store._journal.count()
        events = []
        store.subscribe(events.append)
        curator = Curator(store)
        outcome = curator.delete(ids)
        assert store._journal.count() == entries + 1 and outcome.ids == ids
        assert events and events[-1].journal and set(ids) <= set(events[-1].ids)
        for memory_id in ids[:3]:
            assert store.find(memory_id) is None  # markdown has no soft delete: the lines went
        for memory_id in ids[3:]:
            assert store.get(memory_id).status is Status.DELETED
        curator.undo()
        assert state_of(demo_path) == before
        curator.redo()
        restored = curator.restore(ids)
        assert restored.ids == ids and store._journal.history(limit=1)[0].operation == "restore"
        assert all(store.get(i).status is Status.ACTIVE for i in ids)
        assert state_of(demo_path)["files"] == before["files"]  # every bullet back, byte for byte


def test_a_mixed_selection_is_promoted_as_one_step(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        ids = _mixed_selection(store, demo_path)
        before = state_of(demo_path)
        curator = Curator(store)
        with pytest.raises(BelowThresholdError) as refused:
            curator.promote(ids)
        assert set(refused.value.unmet) == {ids[3], ids[5]}  # markdown bullets count no accesses: by hand
        outcome = curator.promote(ids, force=True)
        assert len(outcome.ids) == len(ids)
        memory_md = (demo_path / "MEMORY.md").read_text()
        for new_id in outcome.ids:
            promoted = store.get(new_id)
            assert promoted.channel == "_global" or promoted.source.path == "MEMORY.md"
        for memory_id in ids[:3]:
            assert store.find(memory_id) is None  # moved out of the daily log ...
        assert sum(1 for i in outcome.ids if i.startswith("md:MEMORY.md:")) == 3  # ... into MEMORY.md
        assert memory_md.count("\n- ") >= 3
        curator.undo()
        assert state_of(demo_path) == before


def test_deleting_a_vector_copy_deletes_the_memory_it_copies(demo_path: Path) -> None:
    with open_store(demo_path) as store:
        memory_id = _mirrored_memory(demo_path)
        outcome = Curator(store).delete(record_id_for(NATIVE_COLLECTION, memory_id))
        assert outcome.ids == [memory_id]
        assert store.get(memory_id).status is Status.DELETED
        vector = store._workspace.vectors.read_record(record_id_for(NATIVE_COLLECTION, memory_id))
        assert vector["metadata"]["status"] == "deleted"


def test_a_step_routes_no_record_a_second_time(demo_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each change carries the source that planned it: deleting a memory with a vector and a
    markdown copy asks which source holds a record only while planning (of the memory itself),
    and undoing it routes each change read back from the journal once."""
    from mnemoscope.storage.native.workspace import NativeWorkspace
    from mnemoscope.storage.store import MemoryStore

    asked: list[str] = []
    for cls, name in ((MemoryStore, "source_for"), (NativeWorkspace, "part_for")):
        original = getattr(cls, name)

        def counted(self, record_id, _original=original):  # type: ignore[no-untyped-def]
            asked.append(record_id)
            return _original(self, record_id)

        monkeypatch.setattr(cls, name, counted)
    memory_id = sql_rows(demo_path, "SELECT id FROM memories WHERE md_file LIKE 'memory/%' ORDER BY id LIMIT 1")[0][0]
    with open_store(demo_path) as store:
        copies = [c["record"] for c in store.copies(memory_id)]
        assert len(copies) == 2  # a vector and a markdown block
        asked.clear()
        outcome = Curator(store).delete(memory_id)
        changed = [c.record for c in store._journal.changes(outcome.seq)]
        assert sorted(changed) == sorted([memory_id, *copies])
        assert [r for r in asked if r != memory_id] == []  # the copies: never looked up
        asked.clear()
        Curator(store).undo()
        # one routing per change (the store, then the workspace's part), none while writing
        assert sorted(asked) == sorted(r for r in changed for _level in range(2))
        assert store.get(memory_id).status.value == "active"


def test_a_bulk_delete_planned_from_rows_writes_and_journals_what_one_by_one_planning_does(
        demo_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many memory.db memories (some with vector and daily-log copies) deleted by the row path,
    which builds no Memory, leave the store and the journal as the general path leaves a copy."""
    from mnemoscope.storage import curation
    from mnemoscope.storage.native.db import reads

    monkeypatch.setattr(curation, "utcnow", lambda: utcnow().replace(year=2026, month=11, day=1, hour=12, minute=0,
                                                                     second=0, microsecond=0))
    other = tmp_path / "other"
    shutil.copytree(demo_path, other)
    ids = [r[0] for copied in ("IS NOT NULL", "IS NULL") for r in sql_rows(  # half of them with a markdown copy
        demo_path, f"SELECT id FROM memories WHERE status = 'active' AND md_file {copied} ORDER BY id LIMIT 6")]
    assert len(ids) == 12
    built = []
    monkeypatch.setattr(reads, "memory_from_row", lambda *a, **k: built.append(1) or memory_from_row(*a, **k))
    entries = []
    for root, revisions in ((demo_path, None), (other, {})):  # {}: each id's revision unknown, one by one
        with open_store(root) as store:
            built.clear()
            outcome = Curator(store).delete(ids, expected_revision=revisions)
            entries.append((outcome.details, store._journal.history(limit=1)[0].after))
            assert (len(built) == 0) is (revisions is None)
    assert entries[0] == entries[1]
    assert state_of(demo_path) == state_of(other)
    active = sql_rows(demo_path, "SELECT id FROM memories WHERE status = 'active' LIMIT 1")[0][0]
    with open_store(demo_path) as store:  # one already deleted: refused by name, nothing written
        with pytest.raises(NothingToDoError, match=ids[1]):
            Curator(store).delete([active, ids[1]])
    assert state_of(demo_path) == state_of(other)


def test_a_memory_edited_while_deleted_comes_back_with_its_markdown_copy_saying_the_new_text(demo_path: Path) -> None:
    from mnemoscope.storage.consistency import check

    memory_id, md_file = sqlite3.connect(demo_path / "memory.db").execute(
        "SELECT id, md_file FROM memories WHERE md_file IS NOT NULL ORDER BY id LIMIT 1").fetchone()
    with open_store(demo_path) as store:
        curator = Curator(store)
        curator.delete([memory_id])
        curator.edit(memory_id, content="said again while it was deleted")
        curator.restore([memory_id])
        assert check(store).clean
        assert "- said again while it was deleted\n" in (demo_path / md_file).read_text(encoding="utf-8")
        for _ in range(3):
            curator.undo()
        assert check(store).clean
