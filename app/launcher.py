"""``mnemoscope [PATH]``: open a store in the desktop app (the demo store by default)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from platformdirs import user_data_dir

from storage import open_store

from . import output


def data_dir() -> Path:
    """Where Mnemoscope keeps its own files; MNEMOSCOPE_HOME relocates it (tests, portable use)."""
    override = os.environ.get("MNEMOSCOPE_HOME")
    return Path(override) if override else Path(user_data_dir("mnemoscope", "Mnemoscope"))


def demo_path() -> Path:
    """The demo workspace, written on first use."""
    path = data_dir() / "demo-workspace"
    if not (path / "memory.db").exists():
        from storage.demo import write_demo

        print(f"mnemoscope: writing the demo workspace to {path}", file=sys.stderr)
        write_demo(path).close()
    return path


def launch(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="mnemoscope", description="Open a memory store in the desktop app.")
    parser.add_argument("path", nargs="?", type=Path, help="store to open (default: the demo store)")
    parser.add_argument("--demo", action="store_true", help="open the demo store")
    args = parser.parse_args(list(argv))
    path = demo_path() if args.demo or args.path is None else args.path
    with open_store(path) as store:
        info = store.info()
    try:
        from ui.main_window import run_app  # the desktop app (issue 3)
    except ImportError:
        print(output.info(info))
        print(
            "mnemoscope: the desktop window is not built yet; this is the store it would open. "
            "Try 'mnemoscope ls PATH' or 'mnemoscope --help'.",
            file=sys.stderr,
        )
        return 0
    return run_app(path)
