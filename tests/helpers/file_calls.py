"""The files a block of code opens, the folders it lists and the SQLite connections it makes,
seen through Python's audit hooks (sys.addaudithook: a hook stays for the process, so one is
added, the first time this module is imported, and records only inside file_system_calls); and
the SQL statements its sqlite3 connections run (sql_statements)."""

from __future__ import annotations

import os
import sqlite3
import sys
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

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


@contextmanager
def sql_statements() -> Iterator[list[tuple[str, str]]]:
    """(real path of the database, statement) of each SQL statement run on a sqlite3 connection
    made in the block (sqlite3.connect wrapped while it lasts)."""
    statements: list[tuple[str, str]] = []
    connect = sqlite3.connect

    def traced(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        con = connect(database, *args, **kwargs)
        path = file_named(os.fsdecode(database))
        con.set_trace_callback(lambda sql: statements.append((path, sql)))
        return con

    sqlite3.connect = traced  # type: ignore[assignment]
    try:
        yield statements
    finally:
        sqlite3.connect = connect


def reads_rows(sql: str) -> bool:
    """Whether a statement reads more of a database than its schema: sqlite_master, PRAGMAs, and
    the config row an FTS5 table reads of itself when its columns are asked for are schema."""
    text = sql.strip().upper()
    return not (text.startswith(("PRAGMA", "SELECT LN(", "SELECT K, V FROM 'MAIN'.")) or "SQLITE_MASTER" in text)
