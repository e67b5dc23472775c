"""Qt runs offscreen; a test that leaves a worker running fails; qtbot's waits end on what they
wait for, their timeout only a hang guard (helpers/windows.py's PatientQtBot)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from helpers.windows import HANG_MS, PatientQtBot, open_window  # noqa: E402
from mnemoscope.ui.workers import background_pool, running_workers, shown_pool  # noqa: E402
from PySide6.QtCore import QThreadPool  # noqa: E402


@pytest.fixture
def qtbot(qapp, request: pytest.FixtureRequest) -> PatientQtBot:  # noqa: ANN001
    """pytest-qt's qtbot, patient: see helpers/windows.py."""
    return PatientQtBot(request)


@pytest.fixture(autouse=True)
def _own_data_folder(monkeypatch, tmp_path: Path) -> None:
    """Mnemoscope's data folder (the findings scans it keeps, ...) in the test's own folder."""
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "mnemoscope-home"))


@pytest.fixture(autouse=True)
def _no_dangling_workers(qtbot):
    yield
    QThreadPool.globalInstance().waitForDone(10_000)
    background_pool().waitForDone(10_000)
    shown_pool().waitForDone(10_000)
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=HANG_MS)


@pytest.fixture
def demo_window(qtbot, demo_path: Path, tmp_path: Path):  # noqa: ANN001
    """The main window on the demo store, its table counted."""
    win = open_window(qtbot, demo_path, tmp_path)
    qtbot.waitUntil(lambda: win.model is not None and win.model.total is not None)
    yield win
    win.close_store()
