"""The benchmark suite's harness: the product's speed contract.

Every benchmark times one operation as a user of Mnemoscope runs it and the best hand-written
baseline a person would write for the same answer on the same data, in the same run, and
records the ratio of their medians (this machine is shared and noisy: read ratios, not seconds).

Sizes: ``MNEMOSCOPE_BENCH_SCALE=full`` runs the contract's sizes (1M native memories, ...);
the default ("ci") runs smaller ones so that `.ci/run` still runs every benchmark.
Stores are built once and cached in ``MNEMOSCOPE_BENCH_CACHE`` (default: the user cache
directory), keyed by name, size and the builder's version. At the end of the session the table
of every row is printed and written to ``MNEMOSCOPE_BENCH_REPORT`` (default bench-report.md).
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_cache_dir

FULL = os.environ.get("MNEMOSCOPE_BENCH_SCALE", "ci") == "full"
CACHE = Path(os.environ.get("MNEMOSCOPE_BENCH_CACHE") or user_cache_dir("mnemoscope-bench"))
REPORT = Path(os.environ.get("MNEMOSCOPE_BENCH_REPORT") or "bench-report.md")


def sizes(full: Sequence[int], ci: Sequence[int]) -> list[int]:
    """The store sizes to run: the contract's (full) or CI's smaller ones."""
    return list(full if FULL else ci)


def label(size: int) -> str:
    return f"{size // 1_000_000}M" if size % 1_000_000 == 0 else f"{size // 1000}k" if size % 1000 == 0 else str(size)


def cached_store(name: str, size: int, version: int, build: Callable[[Path, int], None]) -> Path:
    """A directory holding the store build(path, size) writes, built once per (name, size,
    version) and reused by later runs. Change version when the builder changes."""
    path = CACHE / f"{name}-{label(size)}-v{version}"
    if (path / ".complete").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    partial = path.with_name(path.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    build(partial, size)
    (partial / ".complete").touch()
    partial.rename(path)
    return path


def median_s(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> float:
    """The median wall-clock seconds of fn over repeat runs, after warmup runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired_medians_s(project: Callable[[], object], baseline: Callable[[], object], repeat: int = 31,
                     warmup: int = 3) -> tuple[float, float]:
    """The median seconds of project and of baseline, run in turns (project, baseline, project,
    ...) so that a change in the machine's load meets both alike: for operations of a
    millisecond or two, where five runs each would read the load more than the code."""
    for _ in range(warmup):
        project()
        baseline()
    times = paired_times_s(project, baseline, repeat)
    return statistics.median(times[0]), statistics.median(times[1])


def paired_times_s(project: Callable[[], object], baseline: Callable[[], object],
                   repeat: int) -> tuple[list[float], list[float]]:
    """The seconds of each run of project and of baseline, run in turns (project, baseline, ...)."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for fn, taken in zip((project, baseline), times, strict=True):
            start = time.perf_counter()
            fn()
            taken.append(time.perf_counter() - start)
    return times


@dataclass(frozen=True)
class Row:
    suite: str  # "native", "chroma", "openai-agents", "cli", "gui", ...
    operation: str
    size: int
    project_s: float
    baseline: str  # what the baseline is, in a few words
    baseline_s: float
    limit: float  # the largest ratio the contract allows
    # While the contract does not hold yet, the ratio a test still asserts (a regression guard,
    # set near today's figure); None: the contract's limit is asserted.
    guard: float | None = None

    @property
    def ratio(self) -> float:
        return self.project_s / self.baseline_s if self.baseline_s > 0 else float("inf")

    @property
    def holds(self) -> bool:
        return self.ratio <= self.limit

    @property
    def bounded(self) -> bool:
        """What a test asserts: the contract, or the guard while the contract is not met."""
        return self.holds or (self.guard is not None and self.ratio <= self.guard)


ROWS: list[Row] = []


def record(row: Row) -> Row:
    """Keep row for the session's table and return it (the test asserts row.bounded)."""
    ROWS.append(row)
    print(f"\n{row.suite} {label(row.size)} {row.operation}: {_ms(row.project_s)} vs {row.baseline} "
          f"{_ms(row.baseline_s)} = x{row.ratio:.2f} (limit x{row.limit:g})")
    return row


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _verdict(row: Row) -> str:
    if row.holds:
        return "yes"
    return f"**no** (guard x{row.guard:g})" if row.guard is not None else "**no**"


def table(rows: Sequence[Row]) -> str:
    """The rows as a markdown table, in suite and size order."""
    lines = [
        "| suite | size | operation | Mnemoscope | baseline | baseline time | ratio | limit | holds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r.suite, r.size)):
        lines.append(
            f"| {r.suite} | {label(r.size)} | {r.operation} | {_ms(r.project_s)} | {r.baseline} | "
            f"{_ms(r.baseline_s)} | x{r.ratio:.2f} | x{r.limit:g} | {_verdict(r)} |"
        )
    return "\n".join(lines) + "\n"
