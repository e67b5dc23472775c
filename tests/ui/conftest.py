"""Qt runs offscreen; a test that leaves a worker running fails."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QThreadPool  # noqa: E402

from mnemoscope.ui.workers import running_workers  # noqa: E402


@pytest.fixture(autouse=True)
def _no_dangling_workers(qtbot):
    yield
    QThreadPool.globalInstance().waitForDone(10_000)
    qtbot.waitUntil(lambda: running_workers() == 0, timeout=5_000)
