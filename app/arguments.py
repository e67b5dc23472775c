"""Argument types the command line and the launcher share (no storage import: --help stays fast)."""

from __future__ import annotations

from pathlib import Path

STORE_HELP = "a store's file or folder, or a server's URL (postgresql+psycopg://USER@HOST/DB, http(s)://HOST:PORT)"


def store_argument(text: str) -> str | Path:
    """A store argument: a server's URL is kept as written (a Path would fold its "//")."""
    return text if "://" in text else Path(text)
