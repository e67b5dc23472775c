"""One look at the file system: inside one_look() a folder is listed once and every answer is
the one pathlib would give; outside it nothing is kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mnemoscope.storage.detect import looks
from mnemoscope.storage.detect.looks import children, is_dir, is_file, one_look


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "memory.db").write_bytes(b"SQLite format 3\x00")
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "2026-09-25.md").write_text("- a fact\n")
    (tmp_path / "link-to-file").symlink_to(tmp_path / "memory.db")
    (tmp_path / "link-to-dir").symlink_to(tmp_path / "memory")
    (tmp_path / "broken-link").symlink_to(tmp_path / "gone")
    return tmp_path


NAMES = ("memory.db", "memory", "memory/2026-09-25.md", "link-to-file", "link-to-dir", "broken-link", "absent",
         "memory/absent", "absent/deeper", ".", "memory/..")


def test_answers_as_pathlib_does_inside_and_outside_a_look(tree: Path) -> None:
    expected = {name: ((tree / name).is_file(), (tree / name).is_dir()) for name in NAMES}
    assert {name: (is_file(tree / name), is_dir(tree / name)) for name in NAMES} == expected
    with one_look():
        assert {name: (is_file(tree / name), is_dir(tree / name)) for name in NAMES} == expected
    assert children(tree) == sorted(tree.iterdir())
    assert children(tree / "memory.db") == children(tree / "absent") == []


def test_a_look_lists_each_folder_once_and_forgets_it_after(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    real_scandir = os.scandir

    def counting_scandir(folder: str):  # noqa: ANN202
        listed.append(folder)
        return real_scandir(folder)

    monkeypatch.setattr(looks.os, "scandir", counting_scandir)
    with one_look():
        for _ in range(3):
            assert is_file(tree / "memory.db") and is_dir(tree / "memory") and not is_file(tree / "MEMORY.md")
            assert children(tree / "memory") == [tree / "memory" / "2026-09-25.md"]
        (tree / "MEMORY.md").write_text("# new\n")
        assert not is_file(tree / "MEMORY.md")  # the look is one moment's picture
    assert sorted(listed) == sorted([str(tree), str(tree / "memory")])
    assert is_file(tree / "MEMORY.md")  # after the look, the file system is asked again


def test_entries_are_the_looks_one_listing_and_subfolders_follow_links(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listed: list[str] = []
    real_scandir = os.scandir

    def counting_scandir(folder: str):  # noqa: ANN202
        listed.append(folder)
        return real_scandir(folder)

    monkeypatch.setattr(looks.os, "scandir", counting_scandir)
    with one_look():
        assert sorted(looks.entries(tree)) == sorted(p.name for p in tree.iterdir())
        assert looks.subfolders(tree) == [tree / "link-to-dir", tree / "memory"]
        assert is_file(tree / "memory.db") and looks.entries(tree / "absent") == {}
    assert listed == [str(tree), str(tree / "absent")]
    assert sorted(looks.entries(tree / "memory")) == ["2026-09-25.md"]  # outside a look: listed again, kept nowhere
