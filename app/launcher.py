"""``mnemoscope [PATH]``: open a store in the desktop app (the demo store by default)."""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mnemoscope.storage.data_folder import data_folder

from . import output
from .arguments import store_argument

if TYPE_CHECKING:
    from mnemoscope.storage.credentials import Credentials

# The window's views, by the names --view takes (kept here so parsing needs no Qt).
VIEWS = ("memories", "timeline", "scratchpad", "salience", "graph", "transcript", "map", "findings", "retention")
THEMES = ("system", "light", "dark")

# The system libraries Qt's X11 platform plugin needs and the PySide6 wheel does not carry (from
# ldd of PySide6's plugins/platforms/libqxcb.so and lib/libQt6XcbQpa.so.6), with the Debian/Ubuntu
# package of each. Without one, Qt aborts with a message that may name the wrong library.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libGL.so.1": "libgl1",
    "libEGL.so.1": "libegl1",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libglib-2.0.so.0": "libglib2.0-0",
    "libgthread-2.0.so.0": "libglib2.0-0",
    "libdbus-1.so.3": "libdbus-1-3",
}


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
    # One store comes back as a str, several as a list (QSettings' ini format), none as None.
    entries = [recent] if isinstance(recent, str) else list(recent) if isinstance(recent, Iterable) else []
    for entry in entries:
        if Path(entry).exists():
            return Path(entry)
    return None


def build_launcher_parser() -> argparse.ArgumentParser:
    """The app's own flags; `mnemoscope --help` shows them too (kept light: no storage import)."""
    parser = argparse.ArgumentParser(prog="mnemoscope", description="Open a memory store in the desktop app.")
    parser.add_argument("path", nargs="?", type=store_argument,
                        help="store to open: a file or folder, or a server's URL (default: the demo store)")
    parser.add_argument("--vectors", metavar="URL", help="a Chroma server holding a PostgreSQL store's vectors")
    parser.add_argument("--password-stdin", action="store_true", help="read a server's password from stdin")
    parser.add_argument("--demo", action="store_true", help="open the demo store")
    parser.add_argument("--screenshot", type=Path, metavar="FILE.png", help="render the window offscreen to FILE and exit")
    parser.add_argument("--view", default="memories", choices=VIEWS, help="the view to show")
    parser.add_argument("--theme", choices=THEMES, help="light or dark (default: the one chosen in Preferences)")
    parser.add_argument("--read-only", action="store_true", help="write nothing to the store; refuse every change")
    return parser


def launch(argv: Sequence[str]) -> int:
    # Loaded here, not at import: `mnemoscope --help` reads this module's parser and must stay fast.
    from mnemoscope.storage import open_store

    from .terminal_credentials import terminal_credentials

    args = build_launcher_parser().parse_args(list(argv))
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
        from mnemoscope.ui.app import run_app
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
    if _uses_xcb(os.environ, sys.platform):
        problem = missing_xcb_libraries_message(XCB_LIBRARIES)
        if problem:
            print(problem, file=sys.stderr)
            return 1
    settings = data_folder() / "settings.ini"
    settings.parent.mkdir(parents=True, exist_ok=True)
    return run_app(path, settings_file=settings, screenshot=args.screenshot, view=args.view, read_only=args.read_only,
                   vectors=args.vectors, credentials=credentials, theme=args.theme)


def _info(path: Path | str, vectors: str | None, credentials: Credentials) -> dict:
    """The store's summary, printed when no window can be opened."""
    from mnemoscope.storage import open_store

    with open_store(path, read_only=True, vectors=vectors, credentials=credentials) as store:
        return store.info()


def _has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM") or sys.platform in ("win32", "darwin"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _uses_xcb(environ: Mapping[str, str], platform: str) -> bool:
    """Whether Qt will open the window through its X11 (xcb) plugin."""
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(";")[0].split(":")[0] == "xcb"
    if environ.get("XDG_SESSION_TYPE") == "wayland" and environ.get("WAYLAND_DISPLAY"):
        return False  # Qt picks its Wayland plugin
    return bool(environ.get("DISPLAY"))


def missing_xcb_libraries_message(
    libraries: Mapping[str, str], load: Callable[[str], object] | None = None
) -> str | None:
    """None when every library (name -> package) loads; else what to install, for the user."""
    load = load or _load_library
    missing = []
    for name in libraries:
        try:
            load(name)
        except OSError:
            missing.append(name)
    if not missing:
        return None
    packages = " ".join(dict.fromkeys(libraries[name] for name in missing))
    return (
        f"mnemoscope: the window cannot open: Qt's X11 platform plugin needs {', '.join(missing)}, "
        f"which this system lacks.\n"
        f"  On Debian or Ubuntu: sudo apt install {packages}\n"
        f"  Without a window: mnemoscope info PATH, or mnemoscope PATH --screenshot FILE.png"
    )


def _load_library(name: str) -> object:
    """Load a shared library as Qt would: the bundle's own copy first (PyInstaller), else the system's."""
    if getattr(sys, "frozen", False) and (Path(sys._MEIPASS) / name).exists():  # type: ignore[attr-defined]
        return ctypes.CDLL(str(Path(sys._MEIPASS) / name))  # type: ignore[attr-defined]
    return ctypes.CDLL(name)
