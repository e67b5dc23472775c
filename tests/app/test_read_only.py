"""Reading never writes: every file of a store is byte-identical after every reading command,
and a store opened read-only refuses every write before touching anything."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from helpers.cli_runs import run
from helpers.markdown_ids import md_id

from mnemoscope.storage import MemoryQuery, ReadOnlyError, open_store


def file_hashes(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(skip)
    }


def _ids(capsys, store: Path) -> list[str]:
    code, out, err = run(capsys, "ls", store, "--json", "--limit", "300")
    assert code == 0, err
    return [m["id"] for m in json.loads(out)["memories"]]


def _reading_commands(capsys, store: Path, out_dir: Path) -> list[list[object]]:
    ids = _ids(capsys, store)
    row = next(i for i in ids if i.startswith("m-"))
    markdown = md_id(store, "USER.md", 3)
    vector = next(i for i in ids if i.startswith("vec:")) if any(i.startswith("vec:") for i in ids) else row
    return [
        ["info", store], ["ls", store], ["ls", store, "--channel", "webshop"],
        ["show", store, row], ["show", store, markdown], ["show", store, vector],
        ["search", store, "redis cache"], ["search", store, "redis", "--mode", "vector"],
        ["search", store, "redis", "--mode", "hybrid"], ["search", store, "--like", row],
        ["timeline", store], ["graph", store], ["scratchpad", store], ["sessions", store],
        ["salience", store], ["salience", store, row], ["history", store],
        ["export", store, out_dir / "all.jsonl", "--format", "jsonl"],
        ["export", store, out_dir / "active.md", "--format", "markdown"],
    ]


def test_reading_commands_change_no_byte_of_the_store(capsys, demo_path: Path, tmp_path: Path) -> None:
    before = file_hashes(demo_path)
    for argv in _reading_commands(capsys, demo_path, tmp_path):
        code, _out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
        assert file_hashes(demo_path) == before, argv  # no file changed, none added or removed


def test_reading_beside_a_live_agent_neither_checkpoints_nor_rolls_back(capsys, demo_path: Path, tmp_path: Path) -> None:
    """An agent's uncheckpointed writes stay in its WAL: reading must not move them into
    memory.db (only SQLite's shared-memory index, -shm, is the readers' to touch)."""
    agent = sqlite3.connect(demo_path / "memory.db")
    agent.execute("PRAGMA wal_autocheckpoint = 0")
    agent.execute("UPDATE memories SET access_count = access_count + 1 WHERE id IN (SELECT id FROM memories LIMIT 5)")
    agent.commit()
    assert (demo_path / "memory.db-wal").stat().st_size > 0
    before = file_hashes(demo_path, skip=("-shm",))
    for argv in _reading_commands(capsys, demo_path, tmp_path):
        code, _out, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    assert file_hashes(demo_path, skip=("-shm",)) == before
    agent.close()


@pytest.mark.parametrize("argv", [
    ["rm", "{row}"], ["rm", "--match-channel", "webshop"], ["edit", "{row}", "--content", "changed"],
    ["promote", "{row}"], ["reinforce", "{row}"], ["restore", "{row}"], ["undo"], ["redo"], ["reembed"],
])
def test_read_only_refuses_every_write_up_front(capsys, demo_path: Path, argv: list[str]) -> None:
    code, _out, err = run(capsys, "rm", demo_path, _ids(capsys, demo_path)[1])
    assert code == 0, err  # something to undo, so undo is refused for being read-only, not empty
    row = next(i for i in _ids(capsys, demo_path) if i.startswith("m-"))
    before = file_hashes(demo_path)
    command, *rest = argv
    code, _out, err = run(capsys, command, demo_path, *[a.format(row=row) for a in rest], "--read-only")
    assert code == 1
    assert err.strip() == f"mnemoscope: {demo_path} was opened read-only; nothing was written."
    assert file_hashes(demo_path) == before


def test_a_store_opened_read_only_says_so_and_refuses_agent_writes(demo_path: Path) -> None:
    before = file_hashes(demo_path)
    with open_store(demo_path, read_only=True) as store:
        memory = store.page(MemoryQuery(), 1)[0]
        caps = store.capabilities(memory.id)
        assert caps.read_only and caps.read_only_reason == "opened read-only" and not caps.editable_fields
        with pytest.raises(ReadOnlyError):
            store.add_memory("a new fact")
        with pytest.raises(ReadOnlyError):
            store.touch(memory.id)
    assert file_hashes(demo_path) == before
