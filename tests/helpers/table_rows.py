"""Reading a windowed table model whole in a test (a view reads only the rows it shows)."""

from __future__ import annotations

from typing import Any


def read_every_row(qtbot: Any, model: Any, timeout: int = 10_000) -> list[Any]:
    """Ask for every row until all are loaded, and return the memories in row order. The rows
    grow when the count arrives (after the first rows): those are asked for as they appear."""

    def loaded() -> bool:
        missing = [row for row in range(model.rowCount()) if model.memory_at(row) is None]
        for row in missing:
            model.data(model.index(row, 0))
        return model.total is not None and not missing

    qtbot.waitUntil(loaded, timeout=timeout)
    return [model.memory_at(r) for r in range(model.rowCount())]
