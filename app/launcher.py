"""``mnemoscope [PATH]``: open a store in the desktop app (the demo store by default)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from mnemoscope.storage import open_store
from mnemoscope.storage.credentials import Credentials
from mnemoscope.storage.data_folder import data_folder

from . import output
from .arguments import store_argument
from .credentials import terminal_credentials

# The window's views, by the names --view takes (kept here so parsing needs no Qt).
VIEWS = ("memories", "timeline", "scratchpad", "salience", "graph")


def demo_path() -> Path:
    """The demo workspace, written on first use."""
    path = data_folder() / "demo-workspace"
    if not (path / "memory.db").exists():
        from mnemoscope.storage.demo import write_demo

        print(f"mnemoscope: writing the demo workspace to {path}", file=sys.stderr)
        write_demo(path).close()
    return path


def last_store() -> Path | None:
    """The store the app had open last (its recent list), if it still exists."""
    try:
        from PySide6.QtCore import QSettings
    except ImportError:
        return None
    settings = QSettings(str(data_folder() / "settings.ini"), QSettings.Format.IniFormat)
    recent = settings.value("recent_stores", [])
    for entry in [recent] if isinstance(recent, str) else list(recent or []):
        if Path(entry).exists():
            return Path(entry)
    return None


def launch(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="mnemoscope", description="Open a memory store in the desktop app.")
    parser.add_argument("path", nargs="?", type=store_argument,
                        help="store to open: a file or folder, or a server's URL (default: the demo store)")
    parser.add_argument("--vectors", metavar="URL", help="a Chroma server holding a PostgreSQL store's vectors")
    parser.add_argument("--password-stdin", action="store_true", help="read a server's password from stdin")
    parser.add_argument("--demo", action="store_true", help="open the demo store")
    parser.add_argument("--screenshot", type=Path, metavar="FILE.png", help="render the window offscreen to FILE and exit")
    parser.add_argument("--view", default="memories", choices=VIEWS, help="the view to show")
    parser.add_argument("--read-only", action="store_true", help="write nothing to the store; refuse every change")
    args = parser.parse_args(list(argv))
    if args.path is not None:
        path = args.path
    else:
        path = demo_path() if args.demo else (last_store() or demo_path())
    # A bad store gets its one-line message before any window; a server's password is asked here.
    credentials = terminal_credentials(args.password_stdin)
    open_store(path, read_only=True, vectors=args.vectors, credentials=credentials).close()
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    try:
        from mnemoscope.ui.main_window import run_app
    except ImportError as exc:
        print(output.info(_info(path, args.vectors, credentials)))
        print(f"mnemoscope: the desktop app needs PySide6 ({exc}); showing the store instead.", file=sys.stderr)
        return 0
    if not _has_display():
        print(output.info(_info(path, args.vectors, credentials)))
        print(
            "mnemoscope: no display to open a window on; this is the store it would show. "
            "Use --screenshot FILE.png to render it offscreen.",
            file=sys.stderr,
        )
        return 0
    settings = data_folder() / "settings.ini"
    settings.parent.mkdir(parents=True, exist_ok=True)
    return run_app(path, settings_file=settings, screenshot=args.screenshot, view=args.view, read_only=args.read_only,
                   vectors=args.vectors, credentials=credentials)


def _info(path: Path | str, vectors: str | None, credentials: Credentials) -> dict:
    """The store's summary, printed when no window can be opened."""
    with open_store(path, read_only=True, vectors=vectors, credentials=credentials) as store:
        return store.info()


def _has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM") or sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
