"""sqlite-vec (storage/formats/vec0.py): the DB-API module whose connections load it, its reader
that writes no byte, and why it is not read where it cannot load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.owners import require

require("pysqlite3")
require("sqlite_vec")

from formats.test_facts_db import build_facts_workspace  # noqa: E402
from mnemoscope.storage.formats.vec0 import VEC_SWITCH, dbapi_errors, vec_dbapi, vec_reader  # noqa: E402


def test_a_connection_that_loads_sqlite_vec_reads_vectors_and_writes_no_byte(tmp_path: Path) -> None:
    root = build_facts_workspace(tmp_path / "ws")
    db = root / "facts.db"
    before = sorted(os.listdir(root)), db.read_bytes()
    module, why = vec_dbapi()
    assert module is not None and why == ""
    con = vec_reader(db)
    try:
        assert con.execute("SELECT vec_to_json(embedding) FROM facts_vec WHERE id = 'fact_cat'").fetchone()[0] == (
            "[1.000000,0.000000,0.000000,0.000000]")
        with pytest.raises(dbapi_errors()):
            con.execute("DELETE FROM facts_vec")  # read-only
    finally:
        con.close()
    assert (sorted(os.listdir(root)), db.read_bytes()) == before


def test_turned_off_it_says_why_and_reads_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(VEC_SWITCH, "off")
    assert vec_dbapi() == (None, f"sqlite-vec is turned off ({VEC_SWITCH})")
    assert vec_reader(build_facts_workspace(tmp_path / "ws") / "facts.db") is None
