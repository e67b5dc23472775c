"""No id and no database value makes Mnemoscope read or write a file outside the store's root.

A memory.db row's md_file is data: `../x.md`, an absolute path, `sub/../../x.md` or a link that
leads out of the workspace never takes a read or a write there; the copy is reported as outside.
A markdown file or memory folder that links outside the workspace is left out (a problem line),
neither read nor written; links whose target stays inside are followed.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.storage import (
    Curator,
    Kind,
    MemoryQuery,
    NotFoundError,
    StoreError,
    UnsupportedError,
    create_workspace,
    open_store,
)
from mnemoscope.storage.native.markdown.blocks import content_key, record_id_for

SECRET = "secret fact"
OUTSIDE_DAILY = "outside daily fact"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _outside_state(outside: Path) -> dict[str, str]:
    files = {str(p): _sha256(p) for p in sorted(outside.rglob("*")) if p.is_file()}
    passwd = Path("/etc/passwd")
    if passwd.is_file():
        files[str(passwd)] = _sha256(passwd)
    return files


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """An outside folder an attacker would like written, and a workspace next to it."""
    outside = tmp_path / "outside"
    (outside / "days").mkdir(parents=True)
    (outside / "victim.md").write_text(f"# Victim\n\n- {SECRET}\n- another fact\n")
    (outside / "daily.md").write_text(f"- {OUTSIDE_DAILY}\n")
    (outside / "days" / "2026-01-05.md").write_text(f"- {OUTSIDE_DAILY} in a linked folder\n")
    ws = tmp_path / "ws"
    create_workspace(ws).close()
    (ws / "MEMORY.md").write_text("# Memory\n\n- an inside fact\n")
    (ws / "memory").mkdir()
    (ws / "memory" / "2026-01-02.md").write_text(f"- {SECRET}\n- a daily fact\n")
    (ws / "link.md").symlink_to(outside / "victim.md")
    (ws / "memory" / "2026-01-03.md").symlink_to(outside / "daily.md")
    (ws / "sub").mkdir()
    return ws, outside


HOSTILE = [
    "../outside/victim.md",
    "sub/../../outside/victim.md",
    "link.md",
    "memory/2026-01-03.md",
    "/etc/passwd",
    "ABSOLUTE",
    "..",
    "memory/../../outside/victim.md",
]


def _hostile_row(ws: Path, outside: Path, md_file: str) -> str:
    md_file = str(outside / "victim.md") if md_file == "ABSOLUTE" else md_file
    content = OUTSIDE_DAILY if "2026-01-03" in md_file else SECRET
    with open_store(ws) as store:
        return store.add_memory(content, channel="webshop", md_file=md_file)


@pytest.mark.parametrize("md_file", HOSTILE)
def test_a_hostile_md_file_is_never_read_or_written(world: tuple[Path, Path], md_file: str) -> None:
    ws, outside = world
    memory_id = _hostile_row(ws, outside, md_file)
    before = _outside_state(outside)
    with open_store(ws) as store:
        copies = [c for c in store.copies(memory_id) if c["kind"] == "markdown"]
        assert [c["state"] for c in copies] == ["outside"]
        curator = Curator(store)
        curator.edit(memory_id, content="an edited fact")
        curator.undo()
        curator.redo()
        curator.delete(memory_id)
        curator.undo()
        promoted = curator.promote(memory_id, force=True).details
        assert promoted
        curator.undo()
        curator.delete(memory_id, purge=True)
        with pytest.raises(UnsupportedError, match="cannot be undone"):
            curator.undo()
    assert _outside_state(outside) == before


@pytest.mark.parametrize("md_file", HOSTILE)
def test_the_cli_leaves_the_outside_alone(world: tuple[Path, Path], md_file: str, capsys) -> None:
    ws, outside = world
    memory_id = _hostile_row(ws, outside, md_file)
    before = _outside_state(outside)
    assert main(["show", str(ws), memory_id, "--json"]) == 0
    assert '"state": "outside"' in capsys.readouterr().out
    assert main(["edit", str(ws), memory_id, "--content", "PWNED"]) == 0
    assert main(["promote", str(ws), memory_id, "--force"]) == 0
    assert main(["undo", str(ws)]) == 0
    assert main(["rm", str(ws), memory_id]) == 0
    assert main(["rm", str(ws), memory_id, "--purge"]) == 0
    assert main(["undo", str(ws)]) != 0  # a purge cannot be undone
    assert _outside_state(outside) == before


def test_database_values_that_are_no_path_at_all(world: tuple[Path, Path]) -> None:
    ws, outside = world
    ids = [_hostile_row(ws, outside, "x") for _ in range(3)]
    with sqlite3.connect(ws / "memory.db") as db:
        for memory_id, value in zip(ids, ["a\0b.md", 42, "\\..\\outside\\victim.md"], strict=True):
            db.execute("UPDATE memories SET md_file = ? WHERE id = ?", (value, memory_id))
    db.close()
    before = _outside_state(outside)
    with open_store(ws) as store:
        for memory_id in ids:
            states = [c["state"] for c in store.copies(memory_id) if c["kind"] == "markdown"]
            assert states in (["outside"], ["missing"])
            Curator(store).delete(memory_id)
    assert _outside_state(outside) == before


@pytest.mark.parametrize(
    "rel", ["../outside/victim.md", "ABSOLUTE", "link.md", "memory/2026-01-03.md", "sub/../../outside/victim.md"]
)
def test_markdown_ids_naming_outside_files_are_refused(world: tuple[Path, Path], rel: str, capsys) -> None:
    ws, outside = world
    rel = str(outside / "victim.md") if rel == "ABSOLUTE" else rel
    content = OUTSIDE_DAILY if "2026-01-03" in rel else SECRET
    record_id = record_id_for(rel, content)
    before = _outside_state(outside)
    assert main(["edit", str(ws), record_id, "--content", "PWNED"]) == 1
    assert "No memory" in capsys.readouterr().err
    assert main(["rm", str(ws), record_id]) == 1
    assert main(["show", str(ws), record_id]) == 1
    with open_store(ws) as store, pytest.raises(NotFoundError):
        Curator(store).edit(record_id, content="PWNED")
    assert _outside_state(outside) == before


def test_markdown_linked_from_outside_is_left_out_and_reported(world: tuple[Path, Path], capsys) -> None:
    ws, outside = world
    before = _outside_state(outside)
    with open_store(ws) as store:
        assert store._workspace is not None
        problems = store._workspace.problems()
        assert any("memory/2026-01-03.md" in p and "outside" in p for p in problems)
        shown = store.page(MemoryQuery(kinds=(Kind.MARKDOWN,)), limit=100)
        assert OUTSIDE_DAILY not in {m.content for m in shown}
        assert all(m.source.path != "memory/2026-01-03.md" for m in shown)
    for command in (["info", str(ws)], ["ls", str(ws)], ["search", str(ws), "fact", "--mode", "keyword"]):
        assert main(command) == 0
    assert OUTSIDE_DAILY not in capsys.readouterr().out
    assert _outside_state(outside) == before


def test_a_memory_file_and_folder_linked_outside_are_not_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "days").mkdir(parents=True)
    (outside / "MEMORY.md").write_text("# Outside memory\n\n- kept as it is\n")
    (outside / "days" / "2026-01-05.md").write_text("- a daily fact out there\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "MEMORY.md").symlink_to(outside / "MEMORY.md")
    (ws / "memory").symlink_to(outside / "days", target_is_directory=True)
    (ws / "USER.md").write_text("# User\n\n## project: webshop\n\n- likes small diffs\n")
    before = _outside_state(outside)
    user_before = _sha256(ws / "USER.md")
    with open_store(ws) as store:
        problems = store._workspace.problems()
        assert any(p.startswith("MEMORY.md links to a file outside") for p in problems)
        assert any(p.startswith("memory/ links to a folder outside") for p in problems)
        memories = store.page(MemoryQuery(), limit=100)
        assert [m.content for m in memories] == ["likes small diffs"]
        with pytest.raises(StoreError, match="not a file inside"):
            Curator(store).promote(memories[0].id, force=True)
        for rel, text in (("MEMORY.md", "kept as it is"), ("memory/2026-01-05.md", "a daily fact out there")):
            with pytest.raises(NotFoundError):
                Curator(store).delete(record_id_for(rel, text))
    assert _sha256(ws / "USER.md") == user_before
    assert _outside_state(outside) == before


def test_links_that_stay_inside_are_followed(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "notes").mkdir(parents=True)
    (ws / "notes" / "real.md").write_text("- a linked fact\n")
    (ws / "memory").mkdir()
    (ws / "memory" / "2026-02-01.md").symlink_to(Path("..") / "notes" / "real.md")
    with open_store(ws) as store:
        assert store._workspace.problems() == []
        memory_id = record_id_for("memory/2026-02-01.md", "a linked fact")
        assert store.get(memory_id).content == "a linked fact"
        Curator(store).edit(memory_id, content="an edited linked fact")
    assert (ws / "notes" / "real.md").read_text() == "- an edited linked fact\n"
    assert os.readlink(ws / "memory" / "2026-02-01.md") == str(Path("..") / "notes" / "real.md")


def test_content_keys_of_ids_above_are_what_a_block_would_carry() -> None:
    assert record_id_for("../outside/victim.md", SECRET) == f"md:../outside/victim.md:{content_key(SECRET)}"


def test_a_file_name_that_is_not_utf8_is_left_out_and_reported(tmp_path: Path, capsys) -> None:
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-01-02.md").write_text("- a fact\n")
    odd = tmp_path / "memory" / os.fsdecode(b"2026-01-0\xff.md")
    odd.write_text("- a fact in a file with an odd name\n")
    with open_store(tmp_path) as store:
        assert any("is not a UTF-8 file name" in p for p in store._workspace.problems())
        assert [m.content for m in store.page(MemoryQuery(), limit=10)] == ["a fact"]
    assert main(["ls", str(tmp_path), "--json"]) == 0
    assert "odd name" not in capsys.readouterr().out
