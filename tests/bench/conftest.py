"""Prints and writes the benchmark table (tests/bench/harness.py) when the session ends."""

from __future__ import annotations

from typing import Any

from bench.harness import FULL, REPORT, ROWS, table


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not ROWS:
        return
    text = table(ROWS)
    scale = "full" if FULL else "ci"
    terminalreporter.write_sep("=", f"benchmarks ({scale} sizes): Mnemoscope against the best baseline, medians")
    terminalreporter.write(text)
    REPORT.write_text(f"# Benchmarks ({scale} sizes)\n\n{text}", encoding="utf-8")
    terminalreporter.write_line(f"written to {REPORT}")
