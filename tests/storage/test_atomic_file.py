"""Atomic file replacement: a write leaves the whole new file or the old one, keeps the file's
mode, and rewrite() keeps what another writer appended meanwhile or refuses, keeping theirs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from mnemoscope.storage.atomic_file import atomic_text_writer, atomic_write_bytes, folder_lock, rewrite
from mnemoscope.storage.errors import ConflictError


def test_a_write_replaces_the_file_whole_keeps_its_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "notes" / "MEMORY.md"
    atomic_write_bytes(target, b"- first\n")  # the folder is made
    assert target.read_bytes() == b"- first\n"
    os.chmod(target, 0o600)
    atomic_write_bytes(target, b"- second\n")
    assert target.read_bytes() == b"- second\n"
    assert target.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["MEMORY.md"]


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"- kept\n")
    with pytest.raises(TypeError):
        atomic_write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"- kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_a_streamed_write_appears_whole_only_when_it_ends(tmp_path: Path) -> None:
    target = tmp_path / "export.jsonl"
    target.write_text("old\n")
    with atomic_text_writer(target) as out:
        out.write("première ligne\n")
        out.flush()
        assert target.read_text() == "old\n"  # the new text is beside it until the end
    assert target.read_text(encoding="utf-8") == "première ligne\n"
    with pytest.raises(RuntimeError), atomic_text_writer(target) as out:
        out.write("half\n")
        raise RuntimeError("stopped midway")
    assert target.read_text(encoding="utf-8") == "première ligne\n"
    assert [p.name for p in tmp_path.iterdir()] == ["export.jsonl"]


def test_rewrite_applies_the_transform_and_creates_a_missing_file(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    assert rewrite(target, lambda data: data + b"- new bullet\n") == b"- new bullet\n"
    assert rewrite(target, lambda data: data.replace(b"new", b"edited")) == b"- edited bullet\n"
    assert target.read_bytes() == b"- edited bullet\n"


def test_lines_another_writer_appends_during_a_rewrite_are_kept(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"- one\n- two\n")
    calls = []

    def transform(data: bytes) -> bytes:
        if not calls:  # an agent appends while Mnemoscope works on the file
            with open(target, "ab") as agent:
                agent.write(b"- appended by the agent\n")
        calls.append(data)
        return data.replace(b"- one", b"- ONE")

    written = rewrite(target, transform)
    assert written == target.read_bytes() == b"- ONE\n- two\n- appended by the agent\n"


def test_a_file_changed_other_than_by_appending_is_a_conflict_and_keeps_their_bytes(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    target.write_bytes(b"- one\n")

    def transform(data: bytes) -> bytes:
        target.write_bytes(b"- rewritten by another tool\n")
        return data + b"- mine\n"

    with pytest.raises(ConflictError, match="changed by another program"):
        rewrite(target, transform, patience=0.5)
    assert target.read_bytes() == b"- rewritten by another tool\n"


def test_the_folder_lock_lets_one_writer_in_at_a_time(tmp_path: Path) -> None:
    order: list[str] = []

    def other() -> None:
        with folder_lock(tmp_path):
            order.append("other")

    with folder_lock(tmp_path):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.3)
        assert thread.is_alive()  # the other writer waits on the lock
        order.append("first")
    thread.join(5)
    assert order == ["first", "other"]
    with folder_lock(tmp_path / "missing"):  # a folder that is not there: nothing to lock
        pass
