"""The main window as the UI tests open it, and the qtbot they drive it with.

A window test waits for what it asked for: the signal that says the work is done (the store
opened, the step curated, the view loaded) or the state it expects, never a fixed time. The
timeout of such a wait is only a guard against a hang (HANG_MS): on a machine whose cores
other work keeps busy a step that takes a second alone can take twenty, and it is no less done.
PatientQtBot makes that the default of every qtbot wait (pytest-qt's is 5 s); tests/ui's
conftest hands it out as `qtbot`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

HANG_MS = 120_000  # a wait that has not ended by then is a hang, not a slow machine


class PatientQtBot(QtBot):
    """qtbot whose waits end on their signal or condition; the timeout (HANG_MS unless a test
    names one) only guards against a hang."""

    def waitUntil(self, callback: Callable[[], bool | None], *, timeout: int = HANG_MS) -> None:  # noqa: N802
        super().waitUntil(callback, timeout=timeout)

    def waitSignal(self, signal: Any, *, timeout: int = HANG_MS, **kwargs: Any) -> Any:  # noqa: N802
        return super().waitSignal(signal, timeout=timeout, **kwargs)

    def waitSignals(self, signals: Any, *, timeout: int = HANG_MS, **kwargs: Any) -> Any:  # noqa: N802
        return super().waitSignals(signals, timeout=timeout, **kwargs)

    def waitExposed(self, widget: Any, *, timeout: int = HANG_MS) -> Any:  # noqa: N802
        return super().waitExposed(widget, timeout=timeout)

    def waitActive(self, widget: Any, *, timeout: int = HANG_MS) -> Any:  # noqa: N802
        return super().waitActive(widget, timeout=timeout)

    def waitCallback(self, *, timeout: int = HANG_MS, **kwargs: Any) -> Any:  # noqa: N802
        return super().waitCallback(timeout=timeout, **kwargs)


def open_window(qtbot, path: Path, tmp_path: Path, signals: tuple = ()) -> MainWindow:  # noqa: ANN001
    """A shown main window, settings in tmp_path, that has opened path (and emitted signals)."""
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignals([win.store_opened, *(signal(win) for signal in signals)], timeout=HANG_MS):
        win.open_path(path)
    return win


def sidebar_counts(win: MainWindow, group: str) -> dict[str, int]:
    """Entry -> count of one sidebar group ("Channels", "Sub-agents", ...), as the sidebar shows them."""
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == group:
            return {top.child(j).text(0): int(top.child(j).text(1)) for j in range(top.childCount())}
    return {}


@contextmanager
def step_curated(qtbot, win: MainWindow) -> Iterator[list[Any]]:  # noqa: ANN001
    """Wait for the curation step the block starts: the window's curated signal (its Outcome is
    put in the list yielded). An error the window shows instead fails the test at once with its
    message, not a wait until the hang guard."""
    done: list[Any] = []
    failed: list[str] = []

    def curated(outcome: Any) -> None:
        done.append(outcome)

    def error_shown(message: str) -> None:
        failed.append(message)

    win.curated.connect(curated)
    win.error_shown.connect(error_shown)
    try:
        yield done
        qtbot.waitUntil(lambda: bool(done or failed))
    finally:
        win.curated.disconnect(curated)
        win.error_shown.disconnect(error_shown)
    assert not failed, f"the step failed: {failed[0]}"
