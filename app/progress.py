"""Progress on stderr that respects where it goes: a redrawn line on a terminal; when stderr is
redirected (a log file, CI), a plain line at most every LOG_INTERVAL_S seconds and the final
summary (no carriage returns in a log file)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

BAR_WIDTH = 30
LOG_INTERVAL_S = 10.0


class Progress:
    """A ``progress(done, total)`` callback, as storage's long operations take."""

    def __init__(self, label: str, *, bar: bool = False, stream: TextIO | None = None,
                 interval_s: float = LOG_INTERVAL_S) -> None:
        self.label = label
        self.bar = bar
        self.stream = stream or sys.stderr
        self.interactive = _is_terminal(self.stream)
        self.finished = False
        self.interval_s = interval_s
        self._logged_at = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        if self.finished:
            return
        last = done >= total
        if self.interactive:
            print(f"\r{self._line(done, total)}", end="\n" if last else "", file=self.stream, flush=True)
        elif last or time.monotonic() - self._logged_at >= self.interval_s:
            print(self._line(done, total), file=self.stream, flush=True)
            self._logged_at = time.monotonic()
        self.finished = last

    def _line(self, done: int, total: int) -> str:
        if not self.bar:
            return f"{self.label} {done}/{total}"
        filled = int(BAR_WIDTH * done / total) if total else BAR_WIDTH
        return f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total}"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream
        return False
