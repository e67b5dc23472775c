"""Argument types the command line and the launcher share (no storage import: --help stays fast)."""

from __future__ import annotations

import argparse
from pathlib import Path

STORE_HELP = "a store's file or folder, or a server's URL (postgresql+psycopg://USER@HOST/DB, http(s)://HOST:PORT)"
# Longer than any id a store gives (the longest are built from a file's path, which the OS bounds
# at 4,096 bytes): a longer one is a paste gone wrong, refused before any store is opened.
MAX_ID = 4200
ID_ARGUMENTS = ("id", "like", "explain", "session", "center")  # dests that name a memory, session or entity
SHOWN_OF_LONG_ID = 40


def store_argument(text: str) -> str | Path:
    """A store argument: a server's URL is kept as written (a Path would fold its "//")."""
    return text if "://" in text else Path(text)


def over_long_id(args: argparse.Namespace) -> str | None:
    """Why args holds an id no store can hold (None when it holds none): the message shows the
    id's start and its length, never the id whole."""
    for name in ID_ARGUMENTS:
        value = getattr(args, name, None)
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and len(text) > MAX_ID:
                return (f"an id of {len(text):,} characters is longer than any id a store holds (at most "
                        f"{MAX_ID:,}): {text[:SHOWN_OF_LONG_ID]!r}… was not looked up.")
    return None
