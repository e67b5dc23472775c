"""Claude memory tool directories: plain files the model wrote under /memories.

No library writes these (the tool is a protocol the application implements), so
the store is the files themselves, laid out as the tool's commands leave them."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnemoscope.storage.curation import Curator
from mnemoscope.storage.opening import open_store
from mnemoscope.storage.transfer import import_store


def build_claude_memories(tmp_path: Path) -> Path:
    root = tmp_path / "app" / "memories"
    (root / "projects").mkdir(parents=True)
    (root / "user_preferences.md").write_text("# Preferences\n- Dana prefers tea\n- Metric units\n")
    (root / "projects" / "billing.xml").write_text("<notes><n>invoice bug is in rounding</n></notes>\n")
    (root / "progress.txt").write_bytes(b"step 3 of 5 done")
    (root / ".hidden").write_text("editor state")
    (root / "blob.bin").write_bytes(b"\x00\x01")
    return root


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    return build_claude_memories(tmp_path)


def test_opens_the_directory_or_its_parent(memories: Path):
    for path in (memories, memories.parent):
        with open_store(path) as store:
            assert store.info()["formats"][0]["format"] == "claude-memory"
            assert store.count() == 3
            assert store.counts()["channels"] == {"_global": 2, "projects": 1}
            billing = store.get("claude:projects/billing.xml")
            assert "rounding" in billing.content


def test_edit_rewrites_only_that_file_and_undo_restores_bytes(memories: Path):
    before = (memories / "progress.txt").read_bytes()
    with open_store(memories) as store:
        Curator(store).edit("claude:user_preferences.md", content="# Preferences\n- Dana prefers green tea")
        assert (memories / "user_preferences.md").read_text() == "# Preferences\n- Dana prefers green tea\n"
        assert (memories / "progress.txt").read_bytes() == before
        Curator(store).undo()
    assert (memories / "user_preferences.md").read_text() == "# Preferences\n- Dana prefers tea\n- Metric units\n"


def test_delete_removes_the_file_and_restore_brings_it_back(memories: Path):
    with open_store(memories) as store:
        Curator(store).delete("claude:projects/billing.xml")
        assert not (memories / "projects" / "billing.xml").exists()
        assert store.count() == 2
        Curator(store).restore("claude:projects/billing.xml")
    assert (memories / "projects" / "billing.xml").read_text() == "<notes><n>invoice bug is in rounding</n></notes>\n"
    # The journal lives beside the store, never inside the directory the model reads.
    assert not any(p.name.startswith("journal") for p in memories.rglob("*"))


def test_import_round_trip(memories: Path, tmp_path: Path):
    summary = import_store(memories, tmp_path / "ws")
    assert summary.imported == 3
    assert import_store(memories, tmp_path / "ws").already_present == 3
