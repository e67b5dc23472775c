"""app/launcher.py: the app's flags, the store it opens by default (the last one, else the demo),
and the packages it names when Qt's X11 plugin lacks a system library, instead of letting Qt abort."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mnemoscope.app.launcher import (
    XCB_LIBRARIES,
    _uses_xcb,
    build_launcher_parser,
    last_store,
    missing_xcb_libraries_message,
)


def test_a_missing_library_is_named_with_its_package() -> None:
    libraries = {"libxcb.so.1": "libxcb1", "libmnemoscope-absent-for-test.so.9": "libmnemoscope-absent9"}
    loaded: list[str] = []

    def load(name: str) -> object:
        loaded.append(name)
        return ctypes.CDLL(name)  # the real loader: the made-up name really is absent

    message = missing_xcb_libraries_message(libraries, load)
    assert message is not None
    assert "sudo apt install libmnemoscope-absent9" in message
    assert "libmnemoscope-absent-for-test.so.9" in message
    assert "libxcb1" not in message  # present here: not asked for
    assert loaded == list(libraries)


def test_nothing_to_say_when_every_library_loads() -> None:
    assert missing_xcb_libraries_message({"libc.so.6": "libc6"}) is None


def test_one_package_is_named_once_for_two_of_its_libraries() -> None:
    def load(name: str) -> object:
        raise OSError(f"{name}: cannot open shared object file")

    message = missing_xcb_libraries_message({"libglib-2.0.so.0": "libglib2.0-0", "libgthread-2.0.so.0": "libglib2.0-0"},
                                            load)
    assert message is not None and "sudo apt install libglib2.0-0\n" in message


@pytest.mark.parametrize(
    ("environ", "uses_xcb"),
    [
        ({"DISPLAY": ":0"}, True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, True),
        ({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, False),
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}, False),
        ({}, False),
    ],
)
def test_the_check_runs_only_where_qt_would_use_xcb(environ: dict[str, str], uses_xcb: bool) -> None:
    assert _uses_xcb(environ, "linux") is uses_xcb
    assert _uses_xcb(environ, "darwin") is False


def _xcb_plugin_files() -> list[Path]:
    qt = pytest.importorskip("PySide6")
    root = Path(qt.__file__).parent / "Qt"
    return [root / "plugins" / "platforms" / "libqxcb.so", root / "lib" / "libQt6XcbQpa.so.6"]


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("ldd") is None, reason="needs Linux and ldd")
def test_the_answer_agrees_with_ldd_on_this_machine() -> None:
    not_found: set[str] = set()
    for plugin in _xcb_plugin_files():
        listing = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True, check=True).stdout
        not_found |= {line.split()[0] for line in listing.splitlines() if "not found" in line}
    assert not_found <= set(XCB_LIBRARIES), f"ldd needs libraries the launcher does not check: {not_found}"

    message = missing_xcb_libraries_message(XCB_LIBRARIES)  # the real loader

    if not not_found:
        assert message is None
    else:
        assert message is not None
        named = message.split(" needs ")[1].split(", which")[0].split(", ")
        assert set(named) == not_found
        assert {XCB_LIBRARIES[name] for name in not_found} <= set(message.split("apt install ")[1].split("\n")[0].split())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the xcb plugin is Linux's")
def test_the_launcher_prints_the_packages_and_exits_1_instead_of_aborting(tmp_path: Path) -> None:
    """With a DISPLAY and a library missing, `mnemoscope PATH` exits 1 with the apt line and opens
    no window; when nothing is missing there is nothing to check (an X server would be needed)."""
    pytest.importorskip("PySide6")
    if missing_xcb_libraries_message(XCB_LIBRARIES) is None:
        pytest.skip("every xcb library is installed here: the launcher would open a real window")
    from mnemoscope.storage.demo import write_demo

    write_demo(tmp_path / "demo").close()
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE")}
    env.update(DISPLAY=":99", MNEMOSCOPE_HOME=str(tmp_path / "home"))
    done = subprocess.run([sys.executable, "-m", "mnemoscope.app", str(tmp_path / "demo")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "sudo apt install " in done.stderr and "Qt's X11 platform plugin needs" in done.stderr
    assert "Aborted" not in done.stderr and "core dumped" not in done.stderr


def test_the_last_store_is_the_first_recent_one_that_still_exists(tmp_path: Path, monkeypatch) -> None:
    """QSettings' ini format gives one recent store back as a str, several as a list, none as nothing."""
    QtCore = pytest.importorskip("PySide6.QtCore")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    kept = tmp_path / "kept"
    kept.mkdir()

    def recent(value: object) -> None:
        settings = QtCore.QSettings(str(tmp_path / "home" / "settings.ini"), QtCore.QSettings.Format.IniFormat)
        settings.setValue("recent_stores", value)
        settings.sync()

    assert last_store() is None
    recent([str(tmp_path / "gone"), str(kept)])
    assert last_store() == kept
    recent(str(kept))
    assert last_store() == kept
    recent(str(tmp_path / "gone"))
    assert last_store() is None


def test_the_launchers_flags_keep_a_servers_url_as_written() -> None:
    args = build_launcher_parser().parse_args(["postgresql+psycopg://bob@db/agents", "--view", "graph", "--read-only"])
    assert args.path == "postgresql+psycopg://bob@db/agents" and args.view == "graph" and args.read_only
    assert build_launcher_parser().parse_args(["some/folder"]).path == Path("some/folder")
