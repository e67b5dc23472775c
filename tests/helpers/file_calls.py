"""The files a block of code opens, the folders it lists and the SQLite connections it makes,
seen through Python's audit hooks (sys.addaudithook: a hook stays for the process, so one is
added, the first time this module is imported, and records only inside file_system_calls)."""

from __future__ import annotations

import os
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager

_EVENTS: list[tuple[str, str]] | None = None
EVENTS = ("open", "os.scandir", "os.listdir", "sqlite3.connect")


def _audit(event: str, args: tuple) -> None:
    if _EVENTS is None or event not in EVENTS:
        return
    target = args[0] if args else None
    if isinstance(target, (str, bytes, os.PathLike)):
        _EVENTS.append((event, os.fsdecode(target)))


sys.addaudithook(_audit)


@contextmanager
def file_system_calls() -> Iterator[list[tuple[str, str]]]:
    """(event, target) of each file opened, folder listed and SQLite connection made in the block."""
    global _EVENTS
    _EVENTS = events = []
    try:
        yield events
    finally:
        _EVENTS = None


def file_named(target: str) -> str:
    """The real path an event's target names (a SQLite URI's file, too)."""
    if target.startswith("file:"):
        target = urllib.parse.unquote(urllib.parse.urlsplit(target).path)
    return os.path.realpath(target)


def connections_to(events: list[tuple[str, str]], path: os.PathLike[str] | str) -> int:
    """How many SQLite connections the events made to the file at path."""
    real = os.path.realpath(path)
    return sum(1 for event, target in events if event == "sqlite3.connect" and file_named(target) == real)
