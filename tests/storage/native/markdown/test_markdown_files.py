"""Which workspace files are markdown memory files: their layers and dates, UTF-8 only, and
paths that stay inside the workspace (real folders and links in a temp dir)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mnemoscope.storage import Layer, UnreadableStoreError
from mnemoscope.storage.native.markdown.files import (
    BOM,
    BOM_BYTES,
    MEMORY_FILE,
    ROOT_FILES,
    daily_date,
    inside,
    layer_for,
    require_utf8,
)


@pytest.mark.parametrize(
    ("rel", "layer"),
    [
        ("SOUL.md", Layer.CORE),
        ("IDENTITY.md", Layer.CORE),
        ("AGENTS.md", Layer.CORE),
        ("USER.md", Layer.SOCIAL),
        (MEMORY_FILE, Layer.SEMANTIC),
        ("HEARTBEAT.md", Layer.PROCEDURAL),
        ("learnings/errors.md", Layer.PROCEDURAL),
        ("memory/2026-03-14.md", Layer.EPISODIC),
        ("memory/2026/2026-03-14.md", Layer.EPISODIC),
        ("memory/projects.md", Layer.SEMANTIC),
        ("2026-03-14.md", Layer.SEMANTIC),
        ("NOTES.md", Layer.SEMANTIC),
    ],
)
def test_each_file_gives_its_blocks_a_layer(rel: str, layer: Layer) -> None:
    assert layer_for(rel) is layer


def test_every_root_file_has_its_layer() -> None:
    assert all(layer_for(rel) is layer for rel, layer in ROOT_FILES.items())


def test_a_daily_log_is_dated_by_its_name() -> None:
    assert daily_date("memory/2026-03-14.md") == datetime(2026, 3, 14, tzinfo=timezone.utc)
    assert daily_date("memory/2026/2026-03-14.md") == datetime(2026, 3, 14, tzinfo=timezone.utc)
    for rel in ("memory/2026-02-30.md", "2026-03-14.md", "memory/2026-03-14.txt", "memory/notes.md", MEMORY_FILE):
        assert daily_date(rel) is None, rel


def test_markdown_must_be_utf8(tmp_path: Path) -> None:
    path = tmp_path / "USER.md"
    for good in (b"- plain\n", "- caf\u00e9 \u2615\n".encode(), BOM_BYTES + b"- after a BOM\n", b""):
        path.write_bytes(good)
        require_utf8(path.read_bytes(), "USER.md")
    path.write_bytes(b"- ok\n- caf\xe9 in latin-1\n")
    with pytest.raises(UnreadableStoreError, match=r"USER.md is not UTF-8 text \(byte 0xe9 at offset 10\)"):
        require_utf8(path.read_bytes(), "USER.md")
    assert BOM_BYTES == BOM.encode("utf-8") == b"\xef\xbb\xbf"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and, beside it, a folder outside it with a secret file."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "memory").mkdir(parents=True)
    outside.mkdir()
    (root / MEMORY_FILE).write_text("- inside\n")
    (root / "memory" / "2026-03-14.md").write_text("- logged\n")
    (outside / "secret.md").write_text("- secret\n")
    return root, outside


def test_a_path_inside_the_workspace_is_its_real_path(world: tuple[Path, Path]) -> None:
    root, _ = world
    assert inside(root, MEMORY_FILE) == (root / MEMORY_FILE).resolve()
    assert inside(root, "memory/2026-03-14.md") == (root / "memory" / "2026-03-14.md").resolve()
    assert inside(root, "memory/not-yet.md") == (root / "memory" / "not-yet.md").resolve()  # need not exist


@pytest.mark.parametrize(
    "rel", ["", ".", "..", "../outside/secret.md", "memory/../../outside/secret.md", "memory/../MEMORY.md",
            "/etc/passwd", "\\etc\\passwd", "memory\\..\\..\\x.md", "nul\0.md"],
)
def test_a_path_that_leaves_the_workspace_is_refused(world: tuple[Path, Path], rel: str) -> None:
    root, _ = world
    assert inside(root, rel) is None


def test_links_are_followed_only_while_they_stay_inside(world: tuple[Path, Path]) -> None:
    root, outside = world
    os.symlink(outside / "secret.md", root / "USER.md")
    os.symlink(outside, root / "learnings")
    os.symlink(root / "memory" / "2026-03-14.md", root / "SOUL.md")
    os.symlink(root / "loop.md", root / "loop.md")
    assert inside(root, "USER.md") is None
    assert inside(root, "learnings/secret.md") is None
    assert inside(root, "SOUL.md") == (root / "memory" / "2026-03-14.md").resolve()
    assert inside(root, "loop.md") is None
