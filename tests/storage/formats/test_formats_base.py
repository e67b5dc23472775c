"""What every foreign format shares (storage/formats/base.py), through a small format written
here the way formats are written: a bot's ``notes`` table in a real SQLite file, loaded into a
snapshot per change token, filtered there, and curated through the write primitive (write_row),
which refuses what another writer changed; and the SQLite helpers formats detect with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from formats.test_sqlite_table import per_user_db, rows_of
from mnemoscope.storage import MemoryQuery
from mnemoscope.storage.errors import (
    ConflictError,
    NotFoundError,
    ReadOnlyError,
    UnreadableStoreError,
    UnsupportedError,
)
from mnemoscope.storage.formats.base import (
    Contents,
    FormatSource,
    blob_text,
    json_object,
    make_memory,
    plain_row,
    reading,
    require_tables,
    row_values,
    sqlite_files,
    sqlite_tables,
)
from mnemoscope.storage.model import Kind, Status
from mnemoscope.storage.source import DELETE, EDIT, PROMOTE, PlanContext, Snapshot

CONTEXT = PlanContext(now="2026-11-01T12:00:00+00:00", embed=lambda text: None)


class NotesSource(FormatSource):
    """A bot's notes: one row each (id, body, channel, archived, created_at, extra JSON)."""

    format = "notes"
    label = "bot notes"
    id_prefix = "note:"
    editable_fields = ("content",)

    def __init__(self, db: Path) -> None:
        super().__init__(db.parent, [db])
        self.db = db
        self.loads = 0

    def load(self) -> Contents:
        self.loads += 1
        with reading(self.db) as con:
            rows = con.execute("SELECT * FROM notes ORDER BY id").fetchall()
        return Contents(memories=[
            make_memory(self, str(r["id"]), r["body"], location=str(self.db), created=r["created_at"],
                        channel=r["channel"], metadata=json_object(r["extra"]), snapshot=plain_row(r),
                        status=Status.ARCHIVED if r["archived"] else Status.ACTIVE)
            for r in rows
        ])

    def read_record(self, record_id: str) -> Snapshot | None:
        with reading(self.db) as con:
            row = con.execute("SELECT * FROM notes WHERE id = ?", [self.key(record_id)]).fetchone()
        return plain_row(row) if row is not None else None

    def edit_snapshot(self, snap: Snapshot, requested: dict, now: str) -> Snapshot:
        return {**snap, "body": requested["content"]}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        return self.write_row(self.db, "notes", {"id": self.key(record_id)}, record_id, expected, new,
                              updates=("body",))

    def key(self, record_id: str) -> int:
        return int(record_id.removeprefix(self.id_prefix))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "bot.db"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, channel TEXT, archived INTEGER, "
                "created_at TEXT, extra TEXT, avatar BLOB)")
    con.executemany("INSERT INTO notes (body, channel, archived, created_at, extra, avatar) VALUES (?, ?, ?, ?, ?, ?)", [
        ("Dana prefers green tea", "kitchen", 0, "2026-10-01 09:00:00", '{"by": "bot"}', b"\x00\xff"),
        ("The kettle is broken", "kitchen", 1, "2026-10-02 09:00:00", "not json", None),
        ("Stand-up moved to 10:00", "office", 0, "2026-10-03 09:00:00", None, None),
    ])
    con.commit()
    con.close()
    return path


def agent_writes(db: Path, sql: str, *params: object) -> None:
    con = sqlite3.connect(db)
    con.execute(sql, params)
    con.commit()
    con.close()


def test_a_format_reads_its_snapshot_once_per_change_and_filters_it(db: Path) -> None:
    notes = NotesSource(db)
    every = MemoryQuery(statuses=())
    assert notes.count(every) == 3 and notes.count(MemoryQuery()) == 2  # the archived note is not active
    assert notes.count(MemoryQuery(channels=("office",))) == 1
    assert notes.counts_by("channel") == {"kitchen": 2, "office": 1}
    assert [m.id for m in notes.keyword_search("green tea", every, 5)] == ["note:1"]
    tea = notes.get("note:1")
    assert tea is not None and (tea.source.kind, tea.source.format, tea.metadata) == (Kind.SQLITE, "notes", {"by": "bot"})
    assert notes.get("note:2").metadata == {} and notes.get("note:9") is None  # bad JSON reads as nothing
    assert notes.count(MemoryQuery(kinds=(Kind.CHROMA,))) == 0
    assert notes.loads == 1  # every read above from one snapshot
    agent_writes(db, "INSERT INTO notes (body, channel, archived, created_at) VALUES ('Buy oat milk', 'kitchen', 0, "
                     "'2026-10-04 09:00:00')")
    assert notes.count(every) == 4 and notes.loads == 2  # the bot wrote: read again, once
    assert notes.page(every, 2, 1) == notes.page(every, 4)[1:3]


def test_a_format_says_what_can_be_written_and_why_not(db: Path) -> None:
    notes = NotesSource(db)
    assert not notes.capabilities().read_only and notes.describe()["editable_fields"] == ["content"]
    frozen = NotesSource(db)
    frozen.editable_fields = ()
    frozen.read_only_reason = "the bot rewrites its notes at startup"
    assert frozen.capabilities().read_only_reason == "the bot rewrites its notes at startup"
    info = frozen.describe()
    assert (info["format"], info["read_only"], info["files"]) == ("notes", True, [str(db)])
    assert notes.owns("note:1") and not notes.owns("m-1")


def test_a_plan_edits_or_removes_the_row_and_refuses_anything_else(db: Path) -> None:
    notes = NotesSource(db)
    tea = notes.get("note:1")
    edit = notes.plan(EDIT, tea, {"content": "Dana prefers mint tea"}, CONTEXT)
    [change] = edit.changes
    assert change.before["body"] == "Dana prefers green tea" and change.after["body"] == "Dana prefers mint tea"
    assert notes.plan(EDIT, tea, {"content": "Dana prefers green tea"}, CONTEXT).changes == []  # nothing to do
    delete = notes.plan(DELETE, tea, {}, CONTEXT)
    assert delete.changes[0].after is None and "no soft delete" in delete.notes[0]
    with pytest.raises(UnsupportedError, match="bot notes cannot promote"):
        notes.plan(PROMOTE, tea, {}, CONTEXT)
    agent_writes(db, "DELETE FROM notes WHERE id = 1")
    with pytest.raises(NotFoundError, match="No memory note:1 in bot notes"):
        notes.plan(EDIT, tea, {"content": "x"}, CONTEXT)


def test_the_write_primitive_updates_deletes_and_puts_back_byte_for_byte(db: Path) -> None:
    notes = NotesSource(db)
    before = notes.read_record("note:1")
    assert before["avatar"] == {"$blob": "00ff"}
    after = notes.write_record("note:1", before, {**before, "body": "Dana prefers mint tea"})
    assert after == {**before, "body": "Dana prefers mint tea"} and notes.get("note:1").content == "Dana prefers mint tea"
    assert notes.write_record("note:1", after, None) is None
    assert notes.get("note:1") is None
    assert notes.write_record("note:1", None, after) == after  # undo of the delete: the same key and values
    assert rows_of(db, "SELECT avatar FROM notes WHERE id = 1") == [(b"\x00\xff",)]  # a BLOB again, not its repr


def test_a_row_another_writer_changed_is_refused_and_nothing_is_written(db: Path) -> None:
    notes = NotesSource(db)
    read = notes.read_record("note:3")
    agent_writes(db, "UPDATE notes SET body = 'Stand-up moved to 10:30' WHERE id = 3")
    with pytest.raises(ConflictError, match="note:3 changed since it was read .bot notes wrote to it.; nothing was written"):
        notes.write_record("note:3", read, {**read, "body": "Stand-up cancelled"})
    assert rows_of(db, "SELECT body FROM notes WHERE id = 3") == [("Stand-up moved to 10:30",)]
    with pytest.raises(ReadOnlyError, match="bot notes at .* is read-only: the bot owns it"):
        frozen = FormatSource(db.parent, [db])
        frozen.label, frozen.read_only_reason = "bot notes", "the bot owns it"
        frozen.write_record("note:3", read, None)


def test_write_row_refuses_a_key_that_names_several_rows_and_writes_nothing(tmp_path: Path) -> None:
    from mnemoscope.storage.formats.base import FormatSource, plain_row

    db = per_user_db(tmp_path / "notes.db")
    source = FormatSource(tmp_path, [db])
    source.label = "notes table"
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    first = plain_row(con.execute("SELECT * FROM notes WHERE user_id = 'u1' ORDER BY rowid").fetchone())
    con.close()
    before = rows_of(db, "SELECT rowid, * FROM notes ORDER BY rowid")
    with pytest.raises(ReadOnlyError, match="2 rows of notes have user_id = 'u1'.*nothing was written"):
        source.write_row(db, "notes", {"user_id": "u1"}, "n:u1", first, None)
    with pytest.raises(ReadOnlyError, match="2 rows of notes"):
        source.write_row(db, "notes", {"user_id": "u1"}, "n:u1", first, {**first, "body": "overwritten"},
                         updates=("body",))
    assert rows_of(db, "SELECT rowid, * FROM notes ORDER BY rowid") == before
    # One row named: written as before.
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    cat = plain_row(con.execute("SELECT * FROM notes WHERE user_id = 'u2'").fetchone())
    con.close()
    after = source.write_row(db, "notes", {"user_id": "u2"}, "n:u2", cat, {**cat, "body": "Has two cats"},
                             updates=("body",))
    assert after is not None and after["body"] == "Has two cats"


def test_the_sqlite_helpers_formats_detect_with(db: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a database\n")
    (tmp_path / "fake.db").write_text("not SQLite either\n")
    (tmp_path / ".db").write_bytes(db.read_bytes())  # a bare suffix is no store's name
    other = tmp_path / "cache.sqlite3"
    sqlite3.connect(other).close()  # an empty file: no SQLite header yet
    assert sqlite_files(tmp_path) == [db]
    assert sqlite_files(db) == [db] and sqlite_files(tmp_path / "notes.txt") == []
    assert sqlite_tables(db) == {"notes": {"id", "body", "channel", "archived", "created_at", "extra", "avatar"}}
    assert sqlite_tables(tmp_path / "fake.db") == {}
    require_tables(db, sqlite_tables(db), {"notes": {"id", "body"}}, "bot notes")
    with pytest.raises(UnreadableStoreError, match=r"bot.db looks like bot notes but lacks notes\(owner, pinned\)"):
        require_tables(db, sqlite_tables(db), {"notes": {"id", "owner", "pinned"}}, "bot notes")
    with pytest.raises(UnreadableStoreError, match=r"lacks reminders\(due\)"):
        require_tables(db, sqlite_tables(db), {"reminders": {"due"}}, "bot notes")


def test_snapshot_values_json_and_blobs() -> None:
    snap = {"id": 1, "avatar": {"$blob": "00ff"}, "body": "x"}
    assert row_values(snap) == {"id": 1, "avatar": b"\x00\xff", "body": "x"}
    assert blob_text({"$blob": "68c3a9"}) == "hé" and blob_text("plain") == "plain"
    assert json_object('{"a": 1}') == {"a": 1}
    assert json_object("[1, 2]") == {} and json_object("{bad") == {} and json_object(None) == {}
