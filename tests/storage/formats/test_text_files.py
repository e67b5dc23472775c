"""Memories kept one per text file (storage/formats/text_files.py), as Claude's memory tool and
Agentix's Memories tool keep them: real files in a temporary folder, read, edited, written and
removed as those tools do, and a change token that moves on any change to them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mnemoscope.storage.formats.text_files import edited_text, files_token, text_snapshot, write_text_file


def test_a_file_is_its_path_and_text_and_anything_else_is_no_snapshot(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "coffee.md").write_text("Dana drinks her coffee black.\n", encoding="utf-8")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0 not text")
    (tmp_path / "accents.md").write_text("café, Nürnberg\n", encoding="utf-8")
    assert text_snapshot(tmp_path, "notes/coffee.md") == {"path": "notes/coffee.md",
                                                         "text": "Dana drinks her coffee black.\n"}
    assert text_snapshot(tmp_path, "accents.md") == {"path": "accents.md", "text": "café, Nürnberg\n"}
    assert text_snapshot(tmp_path, "photo.jpg") is None  # not UTF-8
    assert text_snapshot(tmp_path, "gone.md") is None
    assert text_snapshot(tmp_path, "notes") is None  # a folder
    assert text_snapshot(tmp_path, "notes/coffee.md/inside") is None


@pytest.mark.parametrize(("old", "requested", "new"), [
    ("black coffee\n", "oat milk", "oat milk\n"),  # the file's final line break is kept
    ("black coffee\n", "oat milk\n", "oat milk\n"),
    ("black coffee", "oat milk", "oat milk"),  # none added where there was none
    ("black coffee", "oat milk\n", "oat milk\n"),
])
def test_an_edit_replaces_the_text_and_keeps_a_final_line_break(old: str, requested: str, new: str) -> None:
    snap = {"path": "coffee.md", "text": old}
    assert edited_text(snap, {"content": requested}) == {"path": "coffee.md", "text": new}
    assert snap["text"] == old  # the snapshot read stays as it was, for undo


def test_writing_creates_or_replaces_the_file_and_none_removes_it(tmp_path: Path) -> None:
    path = tmp_path / "memories" / "projects" / "webshop.md"
    write_text_file(path, {"path": "projects/webshop.md", "text": "Litestar + SvelteKit\n"})
    assert path.read_bytes() == b"Litestar + SvelteKit\n"  # its folders made as the tool makes them
    write_text_file(path, {"path": "projects/webshop.md", "text": "Litestar, SvelteKit, Stripe ✓\n"})
    assert path.read_text(encoding="utf-8") == "Litestar, SvelteKit, Stripe ✓\n"
    assert [p.name for p in path.parent.iterdir()] == ["webshop.md"]  # no temporary file left behind
    write_text_file(path, None)
    assert not path.exists() and path.parent.is_dir()
    with pytest.raises(FileNotFoundError):
        write_text_file(path, None)


def test_the_change_token_moves_on_any_change_to_the_files(tmp_path: Path) -> None:
    a, b = tmp_path / "a.md", tmp_path / "b.md"
    a.write_text("one\n")
    b.write_text("two\n")

    def token() -> str:
        return files_token("claude:", [(p.name, p) for p in sorted(tmp_path.glob("*.md"))])

    first = token()
    assert first.startswith("claude:") and first == token()  # reading changes nothing
    tokens = [first]
    a.write_text("one, longer\n")  # rewritten
    tokens.append(token())
    stat = os.stat(b)
    os.utime(b, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # touched, same size
    tokens.append(token())
    b.rename(tmp_path / "c.md")  # renamed
    tokens.append(token())
    (tmp_path / "c.md").unlink()  # removed
    tokens.append(token())
    (tmp_path / "d.md").write_text("new\n")  # added
    tokens.append(token())
    assert len(set(tokens)) == len(tokens)
    assert files_token("x:", [("gone.md", tmp_path / "gone.md")]) == "x:"  # a listed file that is gone counts as absent
