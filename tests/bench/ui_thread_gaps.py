"""The UI thread's gaps, less what the machine took: helpers/heartbeat.py's heartbeat with a third
measure of each gap, for the window tests that must hold on a machine other work keeps busy.

The heartbeat's "held up" is the wall-clock gap between two ticks less the time the kernel kept
the UI thread waiting for a core. The UI thread also waits for the GIL, and a worker that holds
it while the kernel keeps it waiting for a core holds the UI thread up just as long: with four
CPU-bound processes beside it on two cores, that is most of every long gap, and no program's
UI thread would tick then. "Ours" is the held-up gap less the longest such wait of any other
thread of this process during it (never less than the UI thread's own CPU time in it): what is
left is the window's own work and its waits for its own running workers.

Each other thread's schedstat (/proc/self/task/<tid>/schedstat: its run-queue wait so far) is
kept open and read again at each tick; new threads are looked for every tenth tick.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from helpers.heartbeat import Heartbeat

BOUND_MS = 50.0


class MachineAwareHeartbeat(Heartbeat):
    """Heartbeat that also keeps, per action, the largest gap "ours" (ours[action]), and every gap
    over BOUND_MS with the step it fell in (over: (step, wall, held up, ours, CPU) in ms)."""

    def __init__(self, hook: bool = False) -> None:
        super().__init__(hook)
        self.step = ""
        self.over: list[tuple[str, float, float, float, float]] = []
        self.ours: dict[str, float] = {}
        self.ticks = 0
        self._ours = 0.0
        self._ui_tid = str(threading.get_native_id())
        self._files: dict[str, int] = {}
        self._others = self._other_waits()

    def _other_waits(self) -> dict[str, float]:
        """Each other thread's run-queue wait so far (seconds)."""
        if self.ticks % 10 == 0:  # threads come and go (a pool's idle threads expire)
            with contextlib.suppress(OSError):
                for tid in os.listdir("/proc/self/task"):
                    if tid != self._ui_tid and tid not in self._files:
                        with contextlib.suppress(OSError):
                            self._files[tid] = os.open(f"/proc/self/task/{tid}/schedstat", os.O_RDONLY)
        waits: dict[str, float] = {}
        for tid, fd in list(self._files.items()):
            try:
                waits[tid] = int(os.pread(fd, 128, 0).split()[1]) / 1e9
            except (OSError, IndexError, ValueError):  # the thread ended
                os.close(self._files.pop(tid))
        return waits

    def _on_timer_timeout(self) -> None:
        now, cpu, waited = self._clocks()
        others = self._other_waits()
        gap, busy = (now - self.last) * 1000, (cpu - self.cpu) * 1000
        held = gap - (waited - self.waited) * 1000
        stalled = max((w - self._others.get(tid, w) for tid, w in others.items()), default=0.0) * 1000
        ours = max(busy, held - stalled)
        self._ours = max(self._ours, ours)
        if gap > BOUND_MS or held > BOUND_MS:
            self.over.append((self.step, round(gap, 1), round(held, 1), round(ours, 1), round(busy, 1)))
        self.ticks += 1
        self._others = others
        super()._on_timer_timeout()

    @contextmanager
    def measure(self, action: str) -> Iterator[None]:
        self._others = self._other_waits()
        self._ours = 0.0
        self.step = action
        with super().measure(action):
            yield
        self.ours[action] = round(self._ours, 1)

    def close(self) -> None:
        for fd in self._files.values():
            os.close(fd)
        self._files.clear()

