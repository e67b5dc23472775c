"""One reading connection per thread, kept checked out of an engine's pool.

A page of a hundred rows takes SQLite about 0.3 ms; a checkout from SQLAlchemy's pool and the
reset on its return add a fifth of that again. The read paths of memory.db take this thread's
connection instead, kept open until the source closes. Each use checks that the file is still
the one the connection opened (its device and inode): a connection to a replaced file is
dropped, as the pool drops it on checkout.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from ..sqlite_db import file_identity


class HeldReaders:
    def __init__(self, engine: Any, path: Path) -> None:
        self._engine = engine
        self._path = path
        self._local = threading.local()
        self._held: list[Any] = []
        self._lock = threading.Lock()

    def get(self) -> Any:
        """This thread's connection (a pool checkout, not returned until close or drop)."""
        held = getattr(self._local, "held", None)
        identity = file_identity(self._path)
        if held is not None:
            if held[1] == identity:
                return held[0]
            self.drop(held[0])
        dbapi = self._engine.raw_connection()
        with self._lock:
            self._held.append(dbapi)
        self._local.held = (dbapi, identity)
        return dbapi

    def drop(self, dbapi: Any) -> None:
        """Close a connection that failed or reads a replaced file; the next get opens another."""
        with self._lock:
            if dbapi in self._held:
                self._held.remove(dbapi)
        if getattr(self._local, "held", (None,))[0] is dbapi:
            self._local.held = None
        dbapi.invalidate()

    def close(self) -> None:
        """Return every thread's connection to the pool (which the engine then disposes of)."""
        with self._lock:
            held, self._held = self._held, []
            self._local = threading.local()
        for dbapi in held:
            dbapi.close()
