"""One reading connection per thread, opened without SQLAlchemy and kept.

A page of a hundred rows takes SQLite about 0.3 ms; a checkout from SQLAlchemy's pool and the
reset on its return add a fifth of that again, making an engine costs more than the page, and a
new connection parses the schema and starts with a cold cache. The read paths of memory.db use
the connection their thread used last time instead, kept open until the source closes.

Connections are kept by the thread's id, not in a threading.local: a Qt pool thread runs each
task in a new Python thread state, so its thread-local values vanish between tasks. At most
MAX_HELD are kept; a thread needing one beyond that closes the least recently used one no
read is using. Each use checks that the file is still the one the connection opened (device
and inode): a connection to a replaced file is dropped, as the pool drops it on checkout.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...sqlite_files import file_identity

MAX_HELD = 8


@dataclass
class _Held:
    dbapi: Any
    identity: object
    used: float = 0.0
    busy: int = 0  # reads using it now (a read may run another inside it)


class HeldReaders:
    def __init__(self, connect: Callable[[], Any], path: Path) -> None:
        self._connect = connect
        self._path = path
        self._held: dict[int, _Held] = {}
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        """This thread's connection for the block; a failed read drops it (the next opens another)."""
        held = self._take()
        try:
            yield held.dbapi
        except BaseException:
            self._drop(held)
            raise
        finally:
            with self._lock:
                held.busy -= 1

    def adopt(self, dbapi: Any, identity: object) -> None:
        """Hold dbapi, a connection to the file made elsewhere, as this thread's (which holds none
        yet); identity: the file's (device, inode) taken before dbapi connected (see _take)."""
        held = _Held(dbapi, identity, time.monotonic(), 0)
        with self._lock:
            self._held[threading.get_ident()] = held

    def hand_over(self, identity: object, usable: Callable[[Any], bool] = lambda dbapi: True) -> Any | None:
        """This thread's connection, no longer held, for another use (the write engine's) when no
        read is using it, it reads the file of identity (device, inode) and usable(it); else None."""
        thread = threading.get_ident()
        with self._lock:
            held = self._held.get(thread)
            if held is None or held.busy or held.identity != identity or not usable(held.dbapi):
                return None
            del self._held[thread]
        return held.dbapi

    def _take(self) -> _Held:
        thread = threading.get_ident()
        identity = file_identity(self._path)
        with self._lock:
            held = self._held.get(thread)
            if held is not None and held.identity == identity:
                held.busy += 1
                held.used = time.monotonic()
                return held
        if held is not None:
            self._drop(held)
        held = _Held(self._connect(), identity, time.monotonic(), 1)
        with self._lock:
            self._held[thread] = held
            idle = sorted((h.used, t) for t, h in self._held.items() if h.busy == 0)
            evicted = [self._held.pop(t) for _used, t in idle[: max(len(self._held) - MAX_HELD, 0)]]
        for old in evicted:
            old.dbapi.close()
        return held

    def _drop(self, held: _Held) -> None:
        with self._lock:
            kept = [thread for thread, found in self._held.items() if found is held]
            for thread in kept:
                del self._held[thread]
        if kept:
            held.dbapi.close()

    def close(self) -> None:
        """Close every connection."""
        with self._lock:
            held, self._held = list(self._held.values()), {}
        for h in held:
            h.dbapi.close()

    def connections(self) -> list[Any]:
        """The connections held now."""
        with self._lock:
            return [h.dbapi for h in self._held.values()]

    def __len__(self) -> int:
        return len(self._held)
