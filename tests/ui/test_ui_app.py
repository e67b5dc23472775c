"""ui/app.py: the bootstrap. run_app builds (or reuses) the QApplication, names the app to the
desktop, applies the theme asked for (else the saved one), opens the window on a store, and in
screenshot mode renders it offscreen to a real PNG and exits: 0 once written, 2 when the store
could not be opened."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
from mnemoscope.ui.app import run_app
from mnemoscope.ui.dialogs.preferences_dialog import THEME_KEY
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.theme import apply_theme
from PySide6.QtCore import QCoreApplication, QEvent, QSettings, QSize
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[2]
APP_ID = "io.github.mnemoscope.Mnemoscope"
HICOLOR = ROOT / "resources" / "icons" / "hicolor"


@pytest.fixture
def launched(qtbot):
    """run_app(...) -> (exit code, the window it built); the window is deleted and the theme put
    back to the system's after the test."""
    app = QApplication.instance()

    def launch(*args, **kwargs) -> tuple[int, MainWindow]:  # noqa: ANN002, ANN003
        before = app.topLevelWidgets()  # held, so each keeps its wrapper and is told apart by identity
        code = run_app(*args, **kwargs)
        # Closing its last window posted a Quit that app.quit() left unhandled: in a process that goes
        # on (this one), the next processEvents() would exit every event loop the later tests start.
        QCoreApplication.removePostedEvents(app, QEvent.Type.Quit)
        [window] = [w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and not any(w is b for b in before)]
        qtbot.addWidget(window)
        return code, window

    try:
        yield launch
    finally:
        apply_theme(app, "system")


def _pixels(path: Path) -> np.ndarray:
    """The PNG's pixels as rows of RGB."""
    image = QImage(str(path))
    assert not image.isNull(), f"{path} is no image Qt can read"
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    raw = np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine() // 4, 4)
    return raw[:, : image.width(), 2::-1].astype(int)


def _lightness(pixels: np.ndarray) -> float:
    return float(pixels.mean() / 255)


def test_the_screenshot_is_a_png_of_the_whole_window_on_the_store(launched, demo_path: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    code, window = launched(demo_path, settings_file=tmp_path / "settings.ini", screenshot=shot)
    assert code == 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = _pixels(shot)
    assert pixels.shape[:2] == (800, 1280)  # the size the screenshot mode gives the window
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 50  # a drawn window, not a blank rectangle
    assert not window.isVisible()  # closed once the picture was taken
    assert window.windowTitle() == f"Mnemoscope — {demo_path}"
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    assert str(demo_path) in str(settings.value("recent_stores"))  # remembered in the settings given


def test_the_screenshot_shows_the_view_asked_for(launched, demo_path: Path, tmp_path: Path) -> None:
    shots = {view: tmp_path / f"{view}.png" for view in ("memories", "timeline")}
    windows = {}
    for view, shot in shots.items():
        code, windows[view] = launched(demo_path, settings_file=tmp_path / "settings.ini", screenshot=shot, view=view)
        assert code == 0
    assert windows["timeline"].views.currentWidget() is windows["timeline"].view("timeline")
    assert windows["memories"].views.currentWidget() is windows["memories"].memories
    assert (_pixels(shots["memories"]) != _pixels(shots["timeline"])).any(axis=2).mean() > 0.1  # another picture


def test_the_theme_asked_for_is_the_one_shown(launched, demo_path: Path, tmp_path: Path) -> None:
    shade = {}
    for theme in ("dark", "light"):
        shot = tmp_path / f"{theme}.png"
        code, _window = launched(demo_path, settings_file=tmp_path / "settings.ini", screenshot=shot, theme=theme)
        assert code == 0
        shade[theme] = _lightness(_pixels(shot))
    assert shade["dark"] < 0.4 < 0.6 < shade["light"]


def test_without_a_theme_the_one_saved_in_preferences_is_shown(launched, demo_path: Path, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue(THEME_KEY, "dark")
    settings.sync()
    shot = tmp_path / "saved.png"
    code, window = launched(demo_path, settings_file=tmp_path / "settings.ini", screenshot=shot)
    assert code == 0
    assert _lightness(_pixels(shot)) < 0.4


def test_a_read_only_window_says_so_in_its_title(launched, demo_path: Path, tmp_path: Path) -> None:
    code, window = launched(demo_path, settings_file=tmp_path / "settings.ini", screenshot=tmp_path / "ro.png",
                            read_only=True)
    assert code == 0
    assert window.windowTitle() == f"Mnemoscope — {demo_path} (read-only)"


@pytest.mark.parametrize("what", ["garbage", "missing"])
def test_a_store_that_cannot_be_opened_exits_2_without_a_picture(launched, tmp_path: Path, what: str) -> None:
    target = tmp_path / "memory.db"
    if what == "garbage":
        target.write_bytes(bytes(range(256)) * 16)  # no SQLite header, no format's
    shot = tmp_path / "shot.png"
    code, window = launched(target, settings_file=tmp_path / "settings.ini", screenshot=shot)
    assert code == 2
    assert not shot.exists()
    assert window.errors.last_error  # what the person would have read in the message box
    assert not window.isVisible()


def test_screenshot_end_to_end(demo_path: Path, tmp_path: Path) -> None:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    out = tmp_path / "memories.png"
    env = {**os.environ, "MNEMOSCOPE_HOME": str(tmp_path / "home"), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([exe, str(demo_path), "--screenshot", str(out)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 800)


def test_the_window_names_its_desktop_file_version_and_icon(launched, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """As from the bundle: the icon packaging/build-bundle installs next to the executable."""
    from mnemoscope.storage.demo import write_demo

    bundle = tmp_path / "bundle"
    shutil.copytree(HICOLOR, bundle / "share" / "icons" / "hicolor")
    monkeypatch.setattr(sys, "executable", str(bundle / "mnemoscope"))
    write_demo(tmp_path / "demo").close()
    shot = tmp_path / "shot.png"
    assert launched(tmp_path / "demo", settings_file=tmp_path / "settings.ini", screenshot=shot)[0] == 0
    app = QApplication.instance()
    assert app.desktopFileName() == APP_ID
    assert app.applicationVersion() == version("mnemoscope")
    assert QSize(256, 256) in app.windowIcon().availableSizes()
    assert shot.exists()
