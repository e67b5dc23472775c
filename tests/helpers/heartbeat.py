"""A heartbeat on the UI thread: how long the thread was away between two ticks of a timer.

measure(action) runs a 10 ms timer on the UI thread during a block and keeps, per action, the
largest gap between ticks three ways: the wall clock; "held up", the wall gap less the time
the kernel kept the thread waiting for a core (from /proc's schedstat: on a shared 2-core
machine another process can take both cores, and no application's UI thread ticks then); and
the UI thread's own CPU time. With hook=True it also records every call into storage code that
touches a file or a database (STORAGE_IO: SQLAlchemy, sqlite3, Chroma, the journal, memory.db's
engine and sources, the markdown and Chroma sources' modules) made on the UI thread: there must be none. Every
call counts, capabilities and owns too: a source's answer may read (a copy's id is looked up),
and the table's first rows too: they come from a worker like every other page.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from PySide6.QtCore import Qt, QTimer

TICK_MS = 10
# The modules whose calls read or write a file, a database or a server: memory.db's sources and
# their per-thread connections, the workspace (its routing looks copies up), Chroma's whole
# package, the markdown source, the journal, SQLite and atomic files, the embedders, opening and
# detecting stores. (Modules that mix such calls with pure ones, as the findings scanner, the
# row decoders and the views' maths, are left out: the window calls their pure parts.)
STORAGE_IO = ("/sqlalchemy/", "/chromadb/", "/sqlite3/", "/psycopg/", "storage/journal/", "storage/sqlite_files.py",
              "storage/sqlite_engine.py",
              "storage/atomic_file.py", "storage/native/workspace.py", "storage/native/db/sqlite_source.py",
              "storage/native/db/postgres_source.py", "storage/native/db/readers.py", "storage/native/chroma/",
              "storage/native/markdown/", "storage/embedders/local.py", "storage/embedders/openai_compatible.py",
              "storage/opening.py")


class Heartbeat:
    """Ticks on the UI thread; measure() gives the largest gap between ticks during a block."""

    def __init__(self, hook: bool) -> None:
        self.hook = hook
        self.storage_calls: dict[str, int] = {}
        self.timer = QTimer()
        self.timer.setInterval(TICK_MS)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.schedstat = Path(f"/proc/self/task/{threading.get_native_id()}/schedstat")
        self.last, self.cpu, self.waited = self._clocks()
        self.largest = self.busiest = self.held = 0.0
        self.gaps: dict[str, float] = {}
        self.busy: dict[str, float] = {}
        self.held_up: dict[str, float] = {}

    def _clocks(self) -> tuple[float, float, float]:
        """Wall clock, the UI thread's CPU time, and how long the kernel has kept it waiting
        for a core (seconds; 0 where the kernel does not say)."""
        try:
            waited = int(self.schedstat.read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            waited = 0.0
        return time.perf_counter(), time.thread_time(), waited

    def _on_timer_timeout(self) -> None:
        now, cpu, waited = self._clocks()
        gap = (now - self.last) * 1000
        self.largest = max(self.largest, gap)
        self.busiest = max(self.busiest, (cpu - self.cpu) * 1000)
        self.held = max(self.held, gap - (waited - self.waited) * 1000)
        self.last, self.cpu, self.waited = now, cpu, waited

    def _on_call(self, frame, event: str, arg) -> None:  # noqa: ANN001  (a sys.setprofile hook)
        if event != "call":  # Python frames: sqlite3 is only reached through them here
            return
        where = frame.f_code.co_filename
        if any(part in where for part in STORAGE_IO):
            name = f"{where}:{frame.f_code.co_name}"
            self.storage_calls[name] = self.storage_calls.get(name, 0) + 1

    @contextmanager
    def measure(self, action: str) -> Iterator[None]:
        self.timer.start()
        self.last, self.cpu, self.waited = self._clocks()
        self.largest = self.busiest = self.held = 0.0
        if self.hook:
            sys.setprofile(self._on_call)  # this thread only
        try:
            yield
        finally:
            sys.setprofile(None)
        self._on_timer_timeout()  # the stretch from the last tick to the end counts too
        self.gaps[action] = round(self.largest, 1)
        self.busy[action] = round(self.busiest, 1)
        self.held_up[action] = round(self.held, 1)
        self.timer.stop()
