"""The native memory.db: schema versioning, WAL, filters pushed into SQL, FTS5."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Layer, MemoryQuery, Order, Status, UnreadableStoreError, open_store
from mnemoscope.storage.native.db.schema import SCHEMA_VERSION
from mnemoscope.storage.native.db.sqlite_source import SqliteSource


def test_new_database_is_versioned_and_in_wal_mode(tmp_path: Path) -> None:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    source.add_memory("hello")
    source.close()
    con = sqlite3.connect(tmp_path / "memory.db")
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    con.close()


def test_a_newer_schema_is_refused_not_downgraded(tmp_path: Path) -> None:
    SqliteSource.open(tmp_path / "memory.db", create=True).close()
    con = sqlite3.connect(tmp_path / "memory.db")
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(UnreadableStoreError, match="schema version 99"):
        open_store(tmp_path)


def test_every_cli_filter_and_order_uses_an_index(tmp_path: Path) -> None:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    source.close()
    con = sqlite3.connect(tmp_path / "memory.db")
    plans = {
        "channel+status": "SELECT * FROM memories WHERE status='active' AND channel='x' ORDER BY updated_at DESC LIMIT 50",
        "created": "SELECT * FROM memories WHERE created_at >= '2026' ORDER BY created_at DESC LIMIT 50",
        "salience": "SELECT * FROM memories ORDER BY salience DESC LIMIT 50",
        "accessed": "SELECT * FROM memories ORDER BY last_accessed DESC LIMIT 50",
    }
    for name, sql in plans.items():
        plan = " ".join(r[3] for r in con.execute("EXPLAIN QUERY PLAN " + sql))
        assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, (name, plan)
    con.close()


def test_filters_and_orders_are_evaluated_by_sqlite(tmp_path: Path) -> None:
    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    t = lambda d: datetime(2026, 1, d, tzinfo=timezone.utc)  # noqa: E731
    source.add_memory("alpha fact", channel="p", layer=Layer.SEMANTIC, created_at=t(1), salience=0.2)
    source.add_memory("beta fact", channel="p", layer=Layer.EPISODIC, created_at=t(2), salience=0.9)
    source.add_memory("gamma fact", channel="_global", created_at=t(3), salience=0.5)
    source.add_memory("deleted fact", channel="p", created_at=t(4), status=Status.DELETED)
    q = MemoryQuery(channels=("p",), order=Order.SALIENCE)
    assert [m.content for m in source.page(q, 10)] == ["beta fact", "alpha fact"]
    ascending = MemoryQuery(channels=("p",), order=Order.SALIENCE, descending=False)
    assert [m.content for m in source.page(ascending, 10)] == ["alpha fact", "beta fact"]
    assert source.count(MemoryQuery(statuses=())) == 4
    assert source.count(MemoryQuery(since=t(2), until=t(3))) == 1
    assert [m.content for m in source.page(MemoryQuery(layers=(Layer.EPISODIC,)), 10)] == ["beta fact"]
    assert [m.content for m in source.page(MemoryQuery(contains="ALPHA"), 10)] == ["alpha fact"]
    assert [m.content for m in source.keyword_search("gamma", MemoryQuery(), 5)] == ["gamma fact"]
    assert source.keyword_search('"; DROP TABLE memories; --', MemoryQuery(), 5) == []
    source.close()


def test_keyword_search_follows_edits(demo_path: Path) -> None:
    from mnemoscope.storage import Curator

    with open_store(demo_path) as store:
        target = store._workspace.db.page(MemoryQuery(contains="Whiskerino"), 1)[0]
        Curator(store).edit(target.id, content="The cat is called Marmalade now.")
        assert store._workspace.db.keyword_search("Whiskerino", MemoryQuery(), 10) == []
        assert store._workspace.db.keyword_search("marmalade", MemoryQuery(), 10)[0].id == target.id


def test_a_locked_database_gives_a_readable_message(demo_path: Path) -> None:
    from mnemoscope.storage import Curator, StoreError

    con = sqlite3.connect(demo_path / "memory.db", timeout=0)
    con.execute("BEGIN EXCLUSIVE")
    try:
        with open_store(demo_path) as store:
            target = store._workspace.db.page(MemoryQuery(), 1)[0]
    except StoreError as exc:
        assert "locked" in str(exc)
    else:
        with pytest.raises(StoreError, match="locked"):
            Curator(store).edit(target.id, salience=0.3)
    finally:
        con.rollback()
        con.close()


def test_text_another_program_put_in_number_columns_reads_and_deletes(tmp_path: Path) -> None:
    """SQLite keeps whatever a column is given: such a memory still lists, shows what could not
    be read, and can be deleted and undone without its odd values being rewritten."""
    from mnemoscope.storage import Curator

    source = SqliteSource.open(tmp_path / "memory.db", create=True)
    odd = source.add_memory("the deploy key rotates monthly", salience=0.9)
    fine = source.add_memory("staging runs on Fridays")
    source.close()
    con = sqlite3.connect(tmp_path / "memory.db")
    con.execute("UPDATE memories SET salience = 'high', access_count = 'many', confidence = x'00' WHERE id = ?", [odd])
    con.commit()
    con.close()
    with open_store(tmp_path) as store:
        listed = {m.id: m for m in store.page(MemoryQuery(), limit=10)}
        assert set(listed) == {odd, fine}
        memory = listed[odd]
        assert (memory.salience, memory.access_count, memory.confidence) == (0.5, 0, 1.0)
        assert memory.metadata["unreadable_values"] == {
            "salience": "'high'", "access_count": "'many'", "confidence": "b'\\x00'",
        }
        assert "unreadable_values" not in listed[fine].metadata
        curator = Curator(store)
        curator.delete([odd])
        assert store.get(odd).status == Status.DELETED
        curator.undo()
        assert store.get(odd).status == Status.ACTIVE
    con = sqlite3.connect(tmp_path / "memory.db")
    assert con.execute("SELECT salience, access_count, confidence FROM memories WHERE id = ?", [odd]).fetchone() == (
        "high", "many", b"\x00",
    )
    con.close()


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_an_open_reads_on_the_connection_that_read_the_schema(tmp_path: Path, read_only: bool) -> None:
    """A file whose rows changed since this process read it: the open's look at its schema stays
    open as the first reader, so the open and its first page parse the schema once; and its empty
    -wal is gone when the store closes."""
    from helpers.file_calls import connections_to, file_system_calls
    from mnemoscope.storage.opening import detect_everything

    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    source.add_memory("the deploy key rotates monthly")
    source.close()
    detect_everything(tmp_path)  # (remembered: the rows written next leave the file's tables as they are)
    with sqlite3.connect(db) as con:  # another program
        con.execute("UPDATE memories SET salience = 0.75")
    con.close()
    with file_system_calls() as calls, open_store(tmp_path, read_only=read_only) as store:
        assert [m.salience for m in store.page(MemoryQuery(), limit=10)] == [0.75]
        assert store.count() == 1
    assert connections_to(calls, db) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.db"]


def test_a_file_replaced_while_the_open_reads_its_schema_is_read_as_it_is_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The open's schema connection is kept as the first reader under the identity the file had
    before it connected: a file replaced meanwhile (a restore, a sync) is read anew, not through
    the old one's connection."""
    from mnemoscope.storage.native.db import sqlite_source

    for name, text in (("old", "the old file's memory"), ("new", "the new file's memory")):
        source = SqliteSource.open(tmp_path / name / "memory.db", create=True)
        source.add_memory(text)
        source.close()
    connect = sqlite_source.read_only_connection

    def connect_then_replace(*args: object, **kwargs: object) -> sqlite3.Connection:
        con = connect(*args, **kwargs)
        (tmp_path / "new" / "memory.db").replace(tmp_path / "old" / "memory.db")
        return con

    monkeypatch.setattr(sqlite_source, "read_only_connection", connect_then_replace)
    with open_store(tmp_path / "old", read_only=True) as store:
        monkeypatch.undo()
        assert [m.content for m in store.page(MemoryQuery(), limit=10)] == ["the new file's memory"]


def test_rm_and_undo_each_connect_once_and_reads_after_them_still_refuse_writes(tmp_path: Path) -> None:
    """`rm ID` and `undo` as the CLI runs them (open, step, close): the step writes on the
    connection the open read the schema with, so each command parses the schema once; a read
    after the step connects again, and that connection refuses writes as every reader does."""
    from helpers.file_calls import connections_to, file_system_calls
    from mnemoscope.storage import Curator

    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    kept, gone = (source.add_memory(text) for text in ("the deploy key rotates monthly", "staging is on port 8443"))
    source.close()
    open_store(tmp_path).close()
    for step in (lambda curator: curator.delete(gone), lambda curator: curator.undo()):
        with file_system_calls() as calls, open_store(tmp_path) as store:
            step(Curator(store))
        assert connections_to(calls, db) == 1
    with open_store(tmp_path) as store:
        Curator(store).delete(gone)
        assert store.get(gone).status is Status.DELETED
        with store._workspace.db.reading() as dbapi, pytest.raises(sqlite3.OperationalError, match="readonly"):
            dbapi.execute("DELETE FROM memories")
        Curator(store).undo()
    with open_store(tmp_path, read_only=True) as store:
        assert {m.id: m.status for m in store.page(MemoryQuery(), limit=10)} == {kept: Status.ACTIVE, gone: Status.ACTIVE}


def _killed_mid_step(db: Path, seq: int) -> None:
    """Another process's step, its intent written and the process killed before it finished."""
    with sqlite3.connect(db) as con:
        con.execute("UPDATE audit SET state = 'pending' WHERE seq = ?", (seq,))
    con.close()


@pytest.mark.parametrize("settle", [True, False], ids=["settled", "just-written"])
def test_a_step_killed_in_another_process_is_undone_at_the_next_open_of_this_one(tmp_path: Path, settle: bool) -> None:
    """Every writable open asks the journal for unfinished steps. This process remembers the
    answer "none" for the file in the state the open saw, once its last write is older than a
    clock tick: opening the unchanged file again connects to nothing; any write since (another
    process's step killed half-way), even one that keeps the file's size, is asked about and undone."""
    import time

    from helpers.file_calls import connections_to, file_system_calls
    from mnemoscope.storage import Curator
    from mnemoscope.storage.native.db.sqlite_source import SETTLED_NS

    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    memory_id = source.add_memory("the deploy key rotates monthly")
    source.close()
    with open_store(tmp_path) as store:
        seq = Curator(store).delete(memory_id).seq
    if settle:
        time.sleep(SETTLED_NS / 1e9)
    open_store(tmp_path).close()
    with file_system_calls() as calls:
        open_store(tmp_path).close()
    assert connections_to(calls, db) == (0 if settle else 1)
    _killed_mid_step(db, seq)
    if settle:
        time.sleep(SETTLED_NS / 1e9)
    with open_store(tmp_path) as store:
        assert store.recovered == [f"Step #{seq} (delete) was interrupted; what it had written was undone."]
        assert store.get(memory_id).status is Status.ACTIVE


def test_a_store_at_rest_beside_an_agents_open_connection_is_opened_again_without_connecting(tmp_path: Path) -> None:
    """An agent that keeps its connection open keeps an empty -wal beside memory.db (SQLite, run
    as root, hands it to the file's owner at every connection, moving its ctime): the store is
    at rest all the same, and opening it again neither reads the journal nor holds off a
    checkpoint it cannot cause."""
    import time

    from helpers.file_calls import connections_to, file_system_calls
    from mnemoscope.storage.native.db.sqlite_source import SETTLED_NS

    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    source.add_memory("the deploy key rotates monthly")
    source.close()
    agent = sqlite3.connect(db)
    try:
        assert agent.execute("SELECT count(*) FROM memories").fetchone() == (1,)
        assert (tmp_path / "memory.db-wal").stat().st_size == 0
        time.sleep(SETTLED_NS / 1e9)
        open_store(tmp_path).close()
        with file_system_calls() as calls:
            open_store(tmp_path).close()
        assert connections_to(calls, db) == 0
        assert (tmp_path / "memory.db-wal").exists()
    finally:
        agent.close()


def test_a_store_beside_an_agent_whose_wal_holds_frames_parses_its_schema_once_and_leaves_the_wal(
    tmp_path: Path,
) -> None:
    """An agent that writes and keeps its connection open (its -wal holds frames): a writable
    open after its write reads through one connection besides detection's (the schema, the
    journal and the first page, the schema parsed once, no table's columns asked again), and
    closing leaves the agent's -wal as it was. That connection never writes: `rm` and `undo`
    write through the engine's own."""
    from helpers.file_calls import connections_to, file_system_calls, sql_statements
    from mnemoscope.storage import Curator

    db = tmp_path / "memory.db"
    source = SqliteSource.open(db, create=True)
    memory_id = source.add_memory("the deploy key rotates monthly")
    source.close()
    agent = sqlite3.connect(db, isolation_level=None)
    try:
        agent.execute("UPDATE memories SET access_count = access_count + 1")
        open_store(tmp_path).close()
        agent.execute("UPDATE memories SET access_count = access_count + 1")
        wal = (tmp_path / "memory.db-wal").read_bytes()
        assert wal
        with sql_statements() as statements, file_system_calls() as calls, open_store(tmp_path) as store:
            assert [m.access_count for m in store.page(MemoryQuery(), limit=10)] == [2]
        assert connections_to(calls, db) == 2
        assert not [sql for _, sql in statements if "table_info" in sql or "sqlite_master" in sql]
        assert (tmp_path / "memory.db-wal").read_bytes() == wal
        agent.execute("UPDATE memories SET access_count = access_count + 1")
        with open_store(tmp_path) as store:
            Curator(store).delete(memory_id)
            assert store.get(memory_id).status is Status.DELETED
            Curator(store).undo()
            assert store.get(memory_id).status is Status.ACTIVE
        assert agent.execute("SELECT status, access_count FROM memories").fetchall() == [("active", 3)]
    finally:
        agent.close()


def test_a_file_system_keeping_whole_seconds_makes_a_store_settle_later() -> None:
    """A file whose times are whole seconds (ext3, HFS+, FAT) may be written again within that
    second without a change of its times: its state is trusted two seconds on, not fifty
    milliseconds."""
    import os
    import time

    from mnemoscope.storage.native.db.sqlite_source import _settled_state
    from mnemoscope.storage.sqlite_files import FileLook

    def look(age_s: float, whole_seconds: bool) -> FileLook:
        at = time.time_ns() - int(age_s * 1e9)
        at -= at % 1_000_000_000 if whole_seconds else 0
        st = os.stat_result((0o100644, 7, 1, 1, 0, 0, 4096, 0, 0, 0),
                            {"st_mtime_ns": at, "st_ctime_ns": at, "st_atime_ns": at})
        return FileLook("/nowhere/memory.db", st, None, True, (1, 7, at, 4096, 3))

    assert _settled_state(look(1, whole_seconds=False)) is not None
    assert _settled_state(look(1, whole_seconds=True)) is None
    assert _settled_state(look(3, whole_seconds=True)) is not None
    assert _settled_state(look(0.01, whole_seconds=False)) is None
