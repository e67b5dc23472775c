"""rows.py: a memories row as a Memory (values as Mnemoscope writes them, and what another program
may have put there), the rows relations and scratchpad values are written as, and one row read
and written back as it is stored, on a real memory.db."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
from mnemoscope.storage import Layer, NotFoundError, Status
from mnemoscope.storage.native.db.rows import (
    DB_NAME,
    SCRATCH_PREFIX,
    json_list,
    memory_dict_from_row,
    memory_from_row,
    new_id,
    number,
    row_revision,
    same_json,
    scratch_key,
    scratch_text,
)
from mnemoscope.storage.native.db.sqlite_source import SqliteSource
from mnemoscope.storage.native.db.tables import NativeDb

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def _row(**changed: object) -> dict[str, object]:
    return {**NativeDb.memory_row("Dana likes decaf", memory_id="m-1", created_at=NOW, tags=("coffee",)), **changed}


def test_a_row_as_mnemoscope_writes_it_is_the_memory_it_says() -> None:
    memory = memory_from_row(_row(md_file="MEMORY.md"), DB_NAME)
    assert (memory.id, memory.content, memory.layer, memory.status) == ("m-1", "Dana likes decaf", Layer.SEMANTIC, Status.ACTIVE)
    assert memory.created_at == memory.updated_at == memory.last_accessed == NOW
    assert memory.tags == ("coffee",)
    assert memory.source.location == "memory.db:memories/m-1" and memory.source.path == "memory.db"
    assert memory.metadata == {"md_file": "MEMORY.md", "vector_state": "none"}
    assert memory.revision == row_revision(_row(md_file="MEMORY.md"))


def test_what_another_program_put_in_a_number_column_reads_as_the_default_and_is_noted() -> None:
    memory = memory_from_row(_row(salience="high", access_count=b"\x01", confidence=float("nan")), "x.db")
    assert (memory.salience, memory.access_count, memory.confidence) == (0.5, 0, 1.0)
    assert set(memory.metadata["unreadable_values"]) == {"salience", "access_count", "confidence"}
    assert memory.source.path == "x.db"


def test_the_revision_tells_one_from_one_point_zero() -> None:
    assert row_revision(_row(salience=1)) != row_revision(_row(salience=1.0))
    assert row_revision(_row()) == row_revision(_row())


def test_number_and_json_columns_read_what_they_can() -> None:
    unreadable: dict[str, str] = {}
    assert number("2.5", float, 0.5, unreadable, "salience") == 2.5
    assert number(None, int, 3, unreadable, "access_count") == 3
    assert number("inf", float, 0.5, unreadable, "weight") == 0.5
    assert unreadable == {"weight": "'inf'"}
    assert json_list('["a", 1]') == ("a", "1") and json_list("[]") == () and json_list("not json") == ("not json",)


def test_scratch_values_and_record_ids() -> None:
    assert scratch_text("plain") == "plain" and scratch_text({"n": 1}) == '{"n": 1}'
    assert scratch_key(SCRATCH_PREFIX + '["s1", "retries"]') == ("s1", "retries")
    with pytest.raises(NotFoundError):
        scratch_key(SCRATCH_PREFIX + "nonsense")
    assert same_json('{"b": 2, "a": 1}', {"a": 1, "b": 2})
    assert not same_json('"x"', "x") and not same_json("{", {})


def test_new_ids_are_prefixed_and_distinct() -> None:
    ids = {new_id() for _ in range(100)}
    assert len(ids) == 100 and all(i.startswith("m-") for i in ids) and new_id("r").startswith("r-")


def test_a_row_as_a_dict_is_its_memory_to_dict_whatever_it_holds(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    source = SqliteSource.open(db, create=True)
    source.add_memory("plain", tags=("a", "b"))
    source.add_memory("with provenance", derived_from=("m-1",), promoted_from="m-2", imported_from="x:y#1",
                      md_file="notes/today.md", metadata={"k": "v"})
    for name in ("week", "zeros", "space"):
        source.add_memory(name)
    source.close()
    con = sqlite3.connect(db)
    odd = [
        "UPDATE memories SET salience = 'high', created_at = '2025-01-02 03:04:05' WHERE content = 'plain'",
        "UPDATE memories SET access_count = 2.5, layer = 'dream', tags = 'not json' WHERE content = 'with provenance'",
        "UPDATE memories SET updated_at = '2025-W01-1T00:00:00+00:00' WHERE content = 'week'",
        "UPDATE memories SET last_accessed = '2025-01-02T03:04:05.000000+00:00' WHERE content = 'zeros'",
        "UPDATE memories SET created_at = '2025-01-02 03:04:05+00:00' WHERE content = 'space'",
    ]
    rows_before = con.execute("SELECT * FROM memories").fetchall()
    for statement in odd:
        con.execute(statement)
    con.commit()
    cursor = con.execute("SELECT * FROM memories")
    names = [d[0] for d in cursor.description]
    rows = [*rows_before, *cursor.fetchall()]
    con.close()
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for values in rows:
        expected = memory_from_row(dict(zip(names, values, strict=True)), DB_NAME, now).to_dict()
        assert memory_dict_from_row(values, names, DB_NAME, now) == expected
        assert list(memory_dict_from_row(values, names, DB_NAME, now)) == list(expected)
