"""Big markdown files: `mnemoscope info` and the first page of `ls` on one big MEMORY.md, as a
person runs them (the console script, a new process), against the plainest hand-written
reading of the same file (a Python process counting its bullet lines).

Contract: within x10 of that baseline, and within 5 s at 100 MB (the full size; CI runs 20 MB,
where Mnemoscope's fixed start-up weighs more: a ratio up to x15 is still accepted there, and the
table shows it as short of the contract). The absolute target is a second row whose "baseline" is the target, after one retry round when
the first one misses (a neighbour's burst of work is not a regression). What the commands
answer on big files is checked without a clock in tests/storage/native/markdown/test_markdown_big.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bench.harness import Row, cached_store, median_s, record, sizes

pytestmark = pytest.mark.bench

LIMIT_RATIO = 10.0
SMALL_FILE_GUARD = 15.0  # below 100 MB, where start-up is a larger share
TARGET_S = 5.0
SECTION = 10_000  # bullets under each heading
BASELINE = "python counting bullet lines"
COUNT_BULLETS = "import sys; print(sum(1 for line in open(sys.argv[1], 'rb') if line.startswith(b'- ')))"


def _build(folder: Path, size: int) -> None:
    with (folder / "MEMORY.md").open("w", encoding="utf-8", newline="\n") as out:
        out.write("# Memory\n\n")
        bullets = 0
        while out.tell() < size:
            out.write(f"\n## Section {bullets // SECTION}\n\n")
            out.write("".join(f"- fact number {n} about something\n" for n in range(bullets, bullets + SECTION)))
            bullets += SECTION


def _run(argv: list[str]) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)


@pytest.mark.parametrize("size", sizes(full=[100_000_000], ci=[20_000_000]))
@pytest.mark.parametrize("command", [["info", "--json"], ["ls", "--limit", "50", "--json"]], ids=["info", "ls"])
def test_a_big_memory_file_opens_within_target(command: list[str], size: int) -> None:
    ws = cached_store("markdown-memory", size, 1, _build)
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe, "the mnemoscope console script is installed with the package"
    argv = [exe, command[0], str(ws), *command[1:]]
    full_size = size >= 100_000_000
    for _attempt in (1, 2):
        project = median_s(lambda: _run(argv), repeat=3)
        baseline = median_s(lambda: _run([sys.executable, "-c", COUNT_BULLETS, str(ws / "MEMORY.md")]), repeat=3)
        if project / baseline <= LIMIT_RATIO and (not full_size or project <= TARGET_S):
            break
    name = f"mnemoscope {command[0]} of one MEMORY.md"
    guard = None if full_size else SMALL_FILE_GUARD
    ratio = record(Row("markdown", name, size, project, BASELINE, baseline, LIMIT_RATIO, guard))
    assert ratio.bounded, f"x{ratio.ratio:.1f} of {BASELINE}"
    if full_size:
        absolute = record(Row("markdown", f"{name}, absolute", size, project, f"the {TARGET_S:g} s target",
                              TARGET_S, 1.0))
        assert absolute.holds, f"{project:.2f} s > {TARGET_S} s"
