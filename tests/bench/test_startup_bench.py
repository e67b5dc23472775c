"""Start-up benchmarks: the command line as a person runs it, a new process each time.

Contract (issue 10): ``mnemoscope --help`` (and ``--version``) within 0.3 s. Each is timed as a
subprocess against the same interpreter doing nothing (``python -c pass``), medians of 5 runs in turns
after a warm-up. The table shows the ratio (the machine is shared: read it first); the test
asserts the contract itself, 0.3 s, as a second row whose "baseline" is the target, after one
retry round when the first one misses (a neighbour's burst of work is not a regression).
Which modules start-up loads is checked without a clock in tests/app/test_cli_startup.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from bench.harness import Row, paired_medians_s, record

pytestmark = pytest.mark.bench

TARGET_S = 0.3  # the contract, in seconds
# The same target as a ratio: 0.3 s over this machine's ~20 ms `python -c pass` (unloaded).
TARGET_RATIO = 15.0
BASELINE = "python -c pass"


@pytest.fixture(scope="module", autouse=True)
def _compiled_package() -> None:
    """Time the program as pip installs it, its bytecode compiled (pip compiles at install).
    An editable checkout run under PYTHONDONTWRITEBYTECODE=1, as this machine's CI is, never
    writes any, and each run would time the compiler on every module of ours instead."""
    import compileall
    import importlib.util

    for package in ("mnemoscope.app", "mnemoscope.storage"):
        spec = importlib.util.find_spec(package)
        assert spec is not None and spec.submodule_search_locations is not None
        for folder in spec.submodule_search_locations:
            assert compileall.compile_dir(folder, quiet=1)


def _exe() -> str:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    assert exe, "the mnemoscope console script is installed with the package"
    return exe


def _run(argv: Sequence[str]) -> None:
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)


def _timed(argv: Sequence[str]) -> tuple[float, float]:
    """Median seconds of argv and of the bare interpreter, interleaved in one round."""
    return paired_medians_s(lambda: _run(argv), lambda: _run([sys.executable, "-c", "pass"]), repeat=5, warmup=1)


def _startup_rows(name: str, argv: Sequence[str], size: int = 1) -> tuple[Row, Row]:
    for _attempt in (1, 2):  # one retry round on a noisy machine
        project, baseline = _timed(argv)
        if project <= TARGET_S and project / baseline <= TARGET_RATIO:
            break
    ratio = record(Row("cli", name, size, project, BASELINE, baseline, TARGET_RATIO))
    absolute = record(Row("cli", f"{name}, absolute", size, project, f"the {TARGET_S:g} s target", TARGET_S, 1.0))
    return ratio, absolute


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_start_within_target(flag: str) -> None:
    ratio, absolute = _startup_rows(f"mnemoscope {flag}", [_exe(), flag])
    assert absolute.holds, f"{absolute.project_s:.3f} s > {TARGET_S} s"
    assert ratio.holds, f"x{ratio.ratio:.1f} of {BASELINE}"


def test_ls_of_a_one_line_markdown_workspace(tmp_path: Path) -> None:
    """Not in the contract: recorded so the table shows what a tiny read costs (0.27 s on
    2026-11-25, 0.47 s before SQLAlchemy stopped loading for it). Listing a markdown-only folder
    still loads numpy (storage/native/markdown/ keys its blocks with it) and markdown-it; xfail
    when it misses the --help target on a loaded machine."""
    (tmp_path / "MEMORY.md").write_text("- the user prefers tea\n", encoding="utf-8")
    ratio, absolute = _startup_rows("mnemoscope ls (1-line markdown workspace)", [_exe(), "ls", str(tmp_path), "--json"])
    if not absolute.holds:
        pytest.xfail(f"{absolute.project_s:.3f} s > {TARGET_S} s: markdown-only ls still imports numpy and markdown-it")


INFO_COUNTS = ("SELECT status, count(*) FROM memories GROUP BY status; "
               "SELECT channel, layer, count(*) FROM memories GROUP BY channel, layer;")


def test_info_on_a_100k_store_against_the_sqlite3_cli() -> None:
    """`mnemoscope info` on a SQLite-only store of 100k memories within 3x the sqlite3 command
    line printing the same counts (per status, per channel and layer), each a new process, in
    turns. The counts take the CLI's time; the rest is start-up: SQLAlchemy (memory.db's module)
    and every format's module, imported to ask whether the folder is its store (x4.1 on a loaded
    machine on 2026-11-27), held to a guard of x6."""
    from bench import native_store
    from bench.harness import cached_store

    path = cached_store("native", 100_000, native_store.VERSION, native_store.build)
    cli = shutil.which("sqlite3")
    baseline_argv = ([cli, "-readonly", str(path / "memory.db"), INFO_COUNTS] if cli else
                     [sys.executable, "-c", f"import sqlite3; c = sqlite3.connect({str(path / 'memory.db')!r}); "
                      f"[print(r) for s in {INFO_COUNTS!r}.split(';') if s.strip() for r in c.execute(s)]"])
    for _attempt in (1, 2):  # one retry round on a noisy machine
        project, baseline = paired_medians_s(lambda: _run([_exe(), "info", str(path), "--json"]),
                                             lambda: _run(baseline_argv), repeat=7, warmup=1)
        if project <= 3 * baseline:
            break
    row = record(Row("cli", "mnemoscope info --json, 100k memories", 100_000, project,
                     "sqlite3 CLI, the same counts" if cli else "python sqlite3, the same counts", baseline, 3.0,
                     guard=6.0))
    assert row.bounded


def test_rm_and_undo_as_commands_against_the_target(tmp_path: Path) -> None:
    """Issue 27's `rm ID` and `undo` at 1M (100k in CI) under 0.3 s wall each, as a person runs
    them: a new process each, on a copy of the cached store, in turns (rm, undo, rm, ...). The
    step itself takes milliseconds (tests/bench/test_curation_bench.py times it in one process);
    the rest is start-up, which imports no SQLAlchemy (memory.db's writes and journal go through
    sqlite3: storage/sqlite_engine.py) but still every format's module, asked whether the folder
    is its store. Guarded at x2 (0.6 s) for a loaded machine."""
    import sqlite3

    from bench import native_store
    from bench.harness import FULL, cached_store

    size = 1_000_000 if FULL else 100_000
    store = tmp_path / "store"
    shutil.copytree(cached_store("native", size, native_store.VERSION, native_store.build), store)
    con = sqlite3.connect(store / "memory.db")
    (memory_id,) = con.execute("SELECT id FROM memories WHERE status = 'active' LIMIT 1").fetchone()
    con.close()
    rm, undo = [_exe(), "rm", str(store), memory_id], [_exe(), "undo", str(store)]
    _run(rm)  # the first write of the copy (its verdicts remembered), then back
    _run(undo)
    rm_s, undo_s = paired_medians_s(lambda: _run(rm), lambda: _run(undo), repeat=5, warmup=1)
    rows = [record(Row("cli", f"mnemoscope {name} (a new process)", size, seconds, f"the {TARGET_S:g} s target",
                       TARGET_S, 1.0, guard=2.0))
            for name, seconds in (("rm ID", rm_s), ("undo", undo_s))]
    con = sqlite3.connect(store / "memory.db")
    assert con.execute("SELECT status FROM memories WHERE id = ?", (memory_id,)).fetchone() == ("active",)
    con.close()
    assert all(row.bounded for row in rows), rows
