"""Big markdown files: a 20 MB MEMORY.md lists every bullet with its id and line, an edit of a
5 MB one changes its one line, and a file past the scan budget says what it left unread.

Each command runs as the user runs it (the console script, a new process). How fast they are
is a benchmark (tests/bench/test_markdown_bench.py, 100 MB at full size), not a clock here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from mnemoscope.storage.native.markdown.blocks import record_id_for

SECTION = 10_000  # bullets under each heading


def _write_memory_file(path: Path, size: int) -> int:
    """MEMORY.md of about size bytes: bullets, with a heading before every SECTION of them.
    Returns the number of bullets."""
    bullets = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        out.write("# Memory\n\n")
        written = 10
        while written < size:
            chunk = [f"\n## Section {bullets // SECTION}\n\n"]
            chunk += [f"- fact number {n} about something\n" for n in range(bullets, bullets + SECTION)]
            text = "".join(chunk)
            out.write(text)
            written += len(text)
            bullets += SECTION
    return bullets


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe is not None
    done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_a_20_mb_memory_file_lists_every_bullet_with_its_id_and_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "MEMORY.md"
    try:
        bullets = _write_memory_file(path, 20_000_000)
        assert path.stat().st_size >= 20_000_000

        info = _run("info", str(ws), "--json")
        assert json.loads(info.stdout)["counts"]["kinds"] == {"markdown": bullets}

        ls = _run("ls", str(ws), "--limit", "50", "--json")
        page = json.loads(ls.stdout)
        assert page["total"] == bullets
        ids = [m["id"] for m in page["memories"]]
        assert len(ids) == 50 and ids == sorted(ids, reverse=True)
        for memory in page["memories"][:5]:
            n = int(memory["content"].split()[2])
            assert memory["id"] == record_id_for("MEMORY.md", f"fact number {n} about something")
            assert memory["source"]["lines"] == [n + 3 * (n // SECTION) + 6] * 2
    finally:
        path.unlink(missing_ok=True)


def test_an_edit_of_a_5_mb_memory_file_changes_its_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "MEMORY.md"
    _write_memory_file(path, 5_000_000)
    before = path.read_bytes().splitlines(keepends=True)
    target = before.index(b"- fact number 123456 about something\n")

    _run("edit", str(ws), record_id_for("MEMORY.md", "fact number 123456 about something"),
                     "--content", "an edited fact")
    after = path.read_bytes().splitlines(keepends=True)
    assert after[target] == b"- an edited fact\n"
    assert after[:target] == before[:target] and after[target + 1 :] == before[target + 1 :]

    _run("undo", str(ws))
    assert path.read_bytes().splitlines(keepends=True) == before


def test_a_file_of_paragraphs_past_the_scan_budget_says_what_it_left_unread(tmp_path: Path) -> None:
    """Paragraphs are blocks of their own (not one-line bullets): past a budget a file is read
    up to where it ran out, info says so, and a block that was read still edits in place."""
    ws = tmp_path / "ws"
    ws.mkdir()
    path = ws / "MEMORY.md"
    try:
        with path.open("w", encoding="utf-8", newline="\n") as out:
            out.write("# Memory\n\n")
            n = 0
            while out.tell() < 10_000_000:
                out.write("".join(f"Paragraph {i} about the project.\nIts second line.\n\n" for i in range(n, n + 10_000)))
                n += 10_000
        info = _run("info", str(ws))
        assert "problem: MEMORY.md is too big to read whole" in info.stdout
        ls = _run("ls", str(ws), "--limit", "50", "--json")
        listed = json.loads(ls.stdout)["total"]
        assert 10_000 < listed < n

        size = path.stat().st_size
        _run("edit", str(ws), record_id_for("MEMORY.md", "Paragraph 7 about the project.\nIts second line."),
             "--content", "Paragraph seven, edited.")
        with path.open("rb") as edited:
            head = edited.read(400).decode()
        assert "Paragraph 6 about the project.\nIts second line.\n\nParagraph seven, edited.\n\nParagraph 8" in head
        assert path.stat().st_size == size - len("Paragraph 7 about the project.\nIts second line.\n") + len(
            "Paragraph seven, edited.\n")
    finally:
        path.unlink(missing_ok=True)
