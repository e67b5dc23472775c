"""A store session (ui/store_session.py) opened on a real store, as the views and the table
model read through it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mnemoscope.ui.store_session import StoreSession


@contextmanager
def open_session(qtbot, path: Path | str, **options: Any) -> Iterator[StoreSession]:  # noqa: ANN001
    """A session that has opened path (options: read_only, vectors, credentials); closed after."""
    session = StoreSession()
    with qtbot.waitSignal(session.opened, timeout=20_000):
        session.open(path, **options)
    try:
        yield session
    finally:
        session.close()
