"""Reading a windowed table model whole in a test (a view reads only the rows it shows)."""

from __future__ import annotations

from typing import Any


def read_every_row(qtbot: Any, model: Any, timeout: int = 10_000) -> list[Any]:
    """Ask for every row, wait until all are loaded, and return the memories in row order."""
    for row in range(model.rowCount()):
        model.data(model.index(row, 0))
    qtbot.waitUntil(lambda: all(model.memory_at(r) is not None for r in range(model.rowCount())), timeout=timeout)
    return [model.memory_at(r) for r in range(model.rowCount())]
