"""Progress on stderr that respects where it goes: a redrawn line on a terminal, and only the
final one-line summary when stderr is redirected (no carriage returns in a log file)."""

from __future__ import annotations

import sys
from typing import TextIO

BAR_WIDTH = 30


class Progress:
    """A ``progress(done, total)`` callback, as storage's long operations take."""

    def __init__(self, label: str, *, bar: bool = False, stream: TextIO | None = None) -> None:
        self.label = label
        self.bar = bar
        self.stream = stream or sys.stderr
        self.interactive = _is_terminal(self.stream)
        self.finished = False

    def __call__(self, done: int, total: int) -> None:
        if self.finished:
            return
        last = done >= total
        if self.interactive:
            print(f"\r{self._line(done, total)}", end="\n" if last else "", file=self.stream, flush=True)
        elif last:
            print(self._line(done, total), file=self.stream)
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
