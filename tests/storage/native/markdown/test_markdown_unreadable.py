"""A workspace file that cannot be read (UTF-16, Latin-1) costs that file, not the store: every
other memory reads, `info` and `check` name it, a step that would write it is refused with nothing
written, and once it is saved as UTF-8 its entries are listed again."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest
from helpers.bad_inputs import snapshot
from helpers.cli_runs import run
from helpers.store_state import sql_rows, state_of
from mnemoscope.storage.curation import Curator
from mnemoscope.storage.errors import StoreError
from mnemoscope.storage.opening import open_store

ENCODINGS = {"utf-16": "utf-16", "latin-1": "latin-1"}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_one_unreadable_daily_log_costs_that_file_alone(demo_path: Path, encoding: str, capsys) -> None:
    memory_id, md_file = sql_rows(demo_path, "SELECT id, md_file FROM memories WHERE md_file LIKE 'memory/%' "
                                             "ORDER BY id LIMIT 1")[0]
    daily = demo_path / md_file
    text = daily.read_text(encoding="utf-8") + "- Café opens at 08:00, über early\n"
    daily.write_bytes(text.encode(ENCODINGS[encoding], "replace"))
    with open_store(demo_path, read_only=True) as store:
        before = store.count()
        assert not any(m.source.location.startswith(md_file) for m in store.page(limit=1000))
        assert store.get(memory_id).content  # the memory.db row of a bullet in that file still reads
        [problem] = [p for p in store.problems() if md_file in p]
        assert "is not UTF-8 text" in problem and "a step that would write it is refused" in problem
    files = state_of(demo_path)
    for argv in (["ls", demo_path, "--limit", "5"], ["info", demo_path], ["show", demo_path, memory_id],
                 ["search", demo_path, "webshop", "--mode", "keyword"]):
        assert run(capsys, *argv)[0] == 0, argv
    code, out, _err = run(capsys, "check", demo_path)
    assert code == 1 and f"md:{md_file}" in out and "Workspace file that cannot be read" in out
    assert "missing-bullet" not in out  # its rows' bullets cannot be compared: not said missing
    with sqlite3.connect(demo_path / "memory.db") as con:  # an md_file another program wrote as ./memory/...
        con.execute("UPDATE memories SET md_file = ? WHERE id = ?", (f"./{md_file}", memory_id))
    con.close()
    code, out, _err = run(capsys, "show", demo_path, memory_id)
    assert code == 0 and "unreadable" in out
    with sqlite3.connect(demo_path / "memory.db") as con:
        con.execute("UPDATE memories SET md_file = ? WHERE id = ?", (md_file, memory_id))
    con.close()

    with open_store(demo_path) as store, pytest.raises(StoreError, match="not UTF-8"):
        Curator(store).edit(memory_id, content="an edit its markdown copy cannot take")
    assert state_of(demo_path) == files  # the refused step wrote nothing, its journal intent included

    daily.write_text(text, encoding="utf-8")
    with open_store(demo_path, read_only=True) as store:
        assert store.count() > before
        assert any("Café opens at 08:00" in m.content for m in store.page(limit=1000))
        assert not [p for p in store.problems() if md_file in p]


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="as root a read-only folder is written")
def test_a_step_that_would_write_a_file_in_a_read_only_folder_is_refused_first(demo_path: Path, capsys) -> None:
    """The atomic write makes a file beside the one it replaces: in a folder this user cannot write
    it failed after memory.db and the vectors were written (and put back: their bytes changed)."""
    memory_id, md_file = sql_rows(demo_path, "SELECT id, md_file FROM memories WHERE md_file LIKE 'memory/%' "
                                             "ORDER BY id LIMIT 1")[0]
    os.chmod(demo_path / "memory", 0o555)
    before = snapshot(demo_path)
    try:
        code, _out, err = run(capsys, "rm", demo_path, memory_id)
        assert code == 2 and "memory is read-only here; nothing was written" in err and err.count("\n") == 1, err
        assert snapshot(demo_path) == before
    finally:
        os.chmod(demo_path / "memory", 0o755)


def test_a_memory_whose_file_lies_under_a_file_where_a_folder_was_still_reads(demo_path: Path, capsys) -> None:
    memory_id, md_file = sql_rows(demo_path, "SELECT id, md_file FROM memories WHERE md_file LIKE 'memory/%' "
                                             "ORDER BY id LIMIT 1")[0]
    shutil.rmtree(demo_path / "memory")
    (demo_path / "memory").write_text("- not a folder\n")
    for argv in (["show", demo_path, memory_id], ["search", demo_path, "webshop release"]):
        assert run(capsys, *argv)[0] == 0, argv
