"""Opening the same store again reuses its detection while the files it looked at are as they were
(storage/detect/looks.py, RememberedLooks): a file added beside the store, a table an agent adds in
the -wal, or a change made just before the look are all seen by the next open; rows written to a
SQLite file whose tables are all a detection read of it are not a change."""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path

import pytest
from detect.test_discover import home  # noqa: F401  (the fixture: a home folder with every tool's store)
from helpers.file_calls import file_named, file_system_calls, reads_rows, sql_statements
from mnemoscope.storage import Curator, MemoryQuery, open_store, opening
from mnemoscope.storage.demo import write_demo
from mnemoscope.storage.detect import looks
from mnemoscope.storage.detect.looks import consulted, one_look
from mnemoscope.storage.model import Kind
from mnemoscope.storage.opening import _detect_everything, detect_everything


def _settle() -> None:
    time.sleep(0.05)  # past the look's "racily clean" margin (looks._RACY_NS)


def _run(db: Path, statement: str) -> None:
    """statement, committed, in a new or existing SQLite file (another program's write)."""
    with closing(sqlite3.connect(db)) as con:
        con.execute(statement)
        con.commit()


def _add_langgraph_table(db: Path) -> None:
    """LangGraph's store table, in a new or existing SQLite file."""
    _run(db, "CREATE TABLE store (prefix TEXT, key TEXT, value TEXT, PRIMARY KEY (prefix, key))")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    write_demo(tmp_path / "ws", now=datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)).close()
    return tmp_path / "ws"


def test_every_file_a_detection_reads_is_one_it_consulted(home: dict[str, Path]) -> None:  # noqa: F811
    # What makes a remembered detection safe: its answer depends only on paths it keeps a stat of.
    unseen: list[str] = []
    for tool, path in home.items():
        with file_system_calls() as calls, one_look():
            _detect_everything(path)
            looked_at = {os.path.realpath(p) for p in consulted()}
        unseen += [f"{tool}: {event} {file_named(target)}" for event, target in calls
                   if file_named(target) not in looked_at]
    assert unseen == [], "\n".join(unseen)


def test_a_file_a_detection_reads_rows_of_is_not_kept_by_its_schema(home: dict[str, Path]) -> None:  # noqa: F811
    # A detection is kept across writes of rows to a SQLite file only when it read nothing of
    # the file but its schema (looks._Kept); a detector that reads rows must consult the file
    # with a probe of its own, so that the file's stat keeps the detection as before.
    kept_though_rows_read: list[str] = []
    for tool, path in home.items():
        with sql_statements() as statements, one_look():
            started = time.time_ns()
            _detect_everything(path)
            seen = dict(looks._LOOK.get() or {})
        states = looks._states(seen, started) or {}
        read = {file for file, sql in statements if reads_rows(sql)}
        kept_though_rows_read += [f"{tool}: {file}" for file in read if isinstance(states.get(file), looks._Kept)]
    assert kept_though_rows_read == []


def test_opening_a_store_again_detects_nothing_again(workspace: Path) -> None:
    _settle()
    detect_everything(workspace)
    with file_system_calls() as calls:
        with open_store(workspace, read_only=True) as store:
            assert store.count() > 0
    listed = {os.path.realpath(target) for event, target in calls if event in ("os.scandir", "os.listdir")}
    assert str(workspace.resolve()) not in listed  # (the markdown source still lists memory/ to read it)


def test_a_store_read_and_closed_is_not_detected_again(workspace: Path) -> None:
    """Reading memory.db makes a -wal and a -shm beside it and closing removes them: the folder's
    mtime moves, its names do not."""
    for side in ("memory.db-wal", "memory.db-shm"):
        (workspace / side).unlink(missing_ok=True)
    _settle()
    detect_everything(workspace)
    with open_store(workspace, read_only=True) as store:
        assert store.count() > 0
        assert (workspace / "memory.db-wal").exists()  # (else this test shows nothing)
    assert not (workspace / "memory.db-wal").exists()
    with file_system_calls() as calls:
        detect_everything(workspace)
    assert [target for event, target in calls if event in ("open", "sqlite3.connect")] == []


def test_a_name_added_after_the_folder_was_read_is_seen(workspace: Path) -> None:
    """The folder's mtime moved (so it is listed again) and a name came with it."""
    (workspace / "memory.db-wal").unlink(missing_ok=True)
    _settle()
    assert detect_everything(workspace)[1] == []
    with closing(sqlite3.connect(workspace / "memory.db")):
        pass
    _add_langgraph_table(workspace / "checkpoints.sqlite")
    assert [m.format for m in detect_everything(workspace)[1]] == ["langgraph"]


def test_a_store_written_beside_a_remembered_one_is_seen(workspace: Path) -> None:
    _settle()
    before = detect_everything(workspace)[1]
    assert detect_everything(workspace)[1] == before  # remembered
    _add_langgraph_table(workspace / "checkpoints.sqlite")
    assert [m.format for m in detect_everything(workspace)[1]] == ["langgraph"]


def test_a_table_an_agent_adds_in_the_wal_is_seen(workspace: Path) -> None:
    db = workspace / "agent.db"
    with closing(sqlite3.connect(db)) as agent:
        agent.execute("PRAGMA journal_mode = WAL")
        agent.execute("CREATE TABLE notes (body TEXT)")
        agent.commit()
        agent.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _settle()
        assert detect_everything(workspace)[1] == []
        assert detect_everything(workspace)[1] == []  # remembered
        agent.execute("CREATE TABLE store (prefix TEXT, key TEXT, value TEXT, PRIMARY KEY (prefix, key))")
        agent.commit()  # in agent.db-wal; agent.db itself is unchanged
        assert os.path.getsize(str(db) + "-wal") > 0
        assert [m.format for m in detect_everything(workspace)[1]] == ["langgraph"]


def test_a_look_at_a_folder_changed_a_moment_ago_sees_the_next_change(workspace: Path) -> None:
    # A change within the file clock's tick after the look could keep the mtime it saw: the
    # folder is listed again and its names compared.
    (workspace / "USER.md").write_text("- Dana prefers tea\n")
    assert detect_everything(workspace)[1] == []
    _add_langgraph_table(workspace / "checkpoints.sqlite")
    assert [m.format for m in detect_everything(workspace)[1]] == ["langgraph"]


def test_a_sqlite_file_opened_by_its_own_path_is_read_again_when_it_changes(tmp_path: Path) -> None:
    db = tmp_path / "checkpoints.sqlite"
    _run(db, "CREATE TABLE other (x)")
    _settle()
    assert detect_everything(db)[1] == []
    assert detect_everything(db)[1] == []  # remembered
    _add_langgraph_table(db)
    _settle()
    assert [m.format for m in detect_everything(db)[1]] == ["langgraph"]


def test_a_file_that_became_a_broken_link_is_no_longer_a_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "MEMORY.md").write_text("- Dana prefers tea\n")
    _settle()
    assert Kind.MARKDOWN in detect_everything(notes)[0]
    (notes / "MEMORY.md").unlink()
    (notes / "MEMORY.md").symlink_to(tmp_path / "gone.md")  # the same names in the folder
    assert Kind.MARKDOWN not in detect_everything(notes)[0]


def test_another_home_folder_is_another_detection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An Agentix project's user-scope sub-agents live under the home folder: a detection made
    # under one home says nothing about another.
    project = tmp_path / "project"
    (project / ".agentix").mkdir(parents=True)
    first, second = tmp_path / "home-a", tmp_path / "home-b"
    (second / ".agentix" / "agent-memory" / "writer").mkdir(parents=True)
    (second / ".agentix" / "agent-memory" / "writer" / "style.md").write_text("Short sentences.\n")
    first.mkdir()
    _settle()
    monkeypatch.setenv("HOME", str(first))
    assert detect_everything(project)[1] == []
    monkeypatch.setenv("HOME", str(second))
    assert [m.format for m in detect_everything(project)[1]] == ["agentix"]


@pytest.fixture
def detections(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths detected afresh (not answered from a remembered look) from here on."""
    fresh: list[Path] = []
    detect = opening._detect_everything

    def counted(path: Path) -> object:
        fresh.append(path)
        return detect(path)

    monkeypatch.setattr(opening, "_detect_everything", counted)
    return fresh


def test_a_store_whose_rows_were_just_written_is_not_detected_again(workspace: Path, detections: list[Path]) -> None:
    _settle()
    detect_everything(workspace)
    detections.clear()
    with open_store(workspace) as store:  # remembered: memory.db as the look saw it
        Curator(store).delete(store.page(MemoryQuery(), 1)[0].id)
    with open_store(workspace) as store:  # memory.db's rows changed a moment ago, not its tables
        Curator(store).undo()
    with file_system_calls() as calls:
        detect_everything(workspace)
    assert detections == []
    assert [target for event, target in calls if event == "sqlite3.connect"] == []


def test_a_table_added_to_a_file_without_a_wal_is_seen_at_once(tmp_path: Path, detections: list[Path]) -> None:
    """A change to a file's tables moves its schema cookie: seen even within the file clock's tick."""
    db = tmp_path / "agent.db"
    _run(db, "CREATE TABLE notes (body TEXT)")
    _settle()
    assert detect_everything(tmp_path)[1] == []
    _run(db, "INSERT INTO notes VALUES ('one')")  # rows: the detection holds
    assert detect_everything(tmp_path)[1] == [] and len(detections) == 1
    _add_langgraph_table(db)  # no -wal: the file itself holds the new table
    assert not (tmp_path / "agent.db-wal").exists()
    assert [m.format for m in detect_everything(tmp_path)[1]] == ["langgraph"]
    assert len(detections) == 2


def test_rows_an_agent_writes_while_its_wal_holds_frames_are_not_a_change(tmp_path: Path, detections: list[Path]) -> None:
    """An agent that keeps its connection open leaves its commits in the -wal: the file is kept by
    the schema cookie SQLite reads through the WAL, so a row it writes is not detected again and
    a table it adds is."""
    db = tmp_path / "agent.db"
    with closing(sqlite3.connect(db, isolation_level=None)) as agent:
        agent.execute("PRAGMA journal_mode = WAL")
        agent.execute("CREATE TABLE notes (body TEXT)")
        assert detect_everything(tmp_path)[1] == []
        for n in range(3):
            agent.execute("INSERT INTO notes VALUES (?)", (f"note {n}",))
            assert detect_everything(tmp_path)[1] == []
        assert len(detections) == 1 and os.path.getsize(f"{db}-wal") > 0
        _add_langgraph_table(db)
        assert [m.format for m in detect_everything(tmp_path)[1]] == ["langgraph"]


def test_a_table_added_in_a_reused_wal_within_the_clock_tick_is_seen(tmp_path: Path) -> None:
    """A -wal that starts over after a checkpoint keeps its size; its mtime may not move within the
    file clock's tick: a file whose -wal holds frames is kept by its stat under the racy rule, and
    its schema is read again."""
    db = tmp_path / "agent.db"
    wal = Path(f"{db}-wal")
    with closing(sqlite3.connect(db, isolation_level=None)) as agent:
        agent.execute("PRAGMA journal_mode = WAL")
        agent.execute("PRAGMA wal_autocheckpoint = 0")
        agent.execute("CREATE TABLE notes (body TEXT)")
        for _ in range(50):
            agent.execute("INSERT INTO notes VALUES (?)", ("x" * 3000,))
        agent.execute("PRAGMA wal_checkpoint(PASSIVE)")  # every frame copied back: the next write starts the -wal over
        _settle()
        agent.execute("INSERT INTO notes VALUES ('again')")
        seen = os.stat(wal)
        assert detect_everything(tmp_path)[1] == []
        agent.execute("CREATE TABLE store (prefix TEXT, key TEXT, value TEXT, PRIMARY KEY (prefix, key))")
        os.utime(wal, ns=(seen.st_atime_ns, seen.st_mtime_ns))  # within the tick the look saw
        assert wal.stat().st_size == seen.st_size  # (else this test shows nothing)
        _settle()
        assert [m.format for m in detect_everything(tmp_path)[1]] == ["langgraph"]
