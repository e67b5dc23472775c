"""The views are listed once, by the modules of ui/views: each module declaring VIEW is a tab and a
View menu entry, so a new view is one new module. Proven on a copy of the package: a throwaway
view module added to the copy's ui/views shows in a window started from the copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import mnemoscope.app
import mnemoscope.storage
import mnemoscope.ui
import pytest
from mnemoscope.ui.views.base_view import View
from mnemoscope.ui.views.view_registry import view_classes

THROWAWAY_VIEW = '''"""A view that exists only in a test's copy of the package."""

from mnemoscope.storage import MemoryQuery, MemoryStore
from PySide6.QtWidgets import QLabel, QVBoxLayout

from .base_view import View


class ThrowawayView(View):
    name, title, order = "throwaway", "Throwaway", 65

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.label = QLabel("")
        QVBoxLayout(self).addWidget(self.label)

    def read_store(self):
        self.read(MemoryStore.count, MemoryQuery(), on_result=self._on_counted)

    def _on_counted(self, total):
        self.label.setText(f"{total} memories")
        self.loaded.emit(total)

    def forget(self):
        self.label.setText("")


VIEW = ThrowawayView
'''

# Run with -I (no PYTHONPATH, no script folder, no user site) and the copy first on sys.path.
WINDOW_SCRIPT = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import mnemoscope.app, mnemoscope.storage, mnemoscope.ui
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import finish_all

app = QApplication([])
window = MainWindow(QSettings(sys.argv[3], QSettings.Format.IniFormat))
found = {"files": [mnemoscope.ui.__file__, mnemoscope.storage.__file__, mnemoscope.app.__file__,
                   sys.modules["mnemoscope.ui.views.view_registry"].__file__]}

def done(**more):
    found.update(more)
    print(json.dumps(found))
    window.close()
    app.quit()

def opened(_store):
    view = window.view("throwaway")
    view.loaded.connect(lambda total: done(
        tabs=[window.views.tabText(i) for i in range(window.views.count())],
        menu=[a.text() for a in window.view_menu.actions() if a.text()],
        shown=window.views.currentWidget() is view, label=view.label.text(), total=total))
    window.view_menu.actions()[window.view_names.index("throwaway")].trigger()

window.store_opened.connect(opened)
window.error_shown.connect(lambda text: done(error=text))
QTimer.singleShot(60_000, lambda: done(error="timed out"))
window.show()
window.open_path(sys.argv[2])
app.exec()
window.session.wait_done()  # as ui/app.py ends: no store half closed, no worker left running
finish_all()
'''


def test_every_view_module_is_listed_once_in_its_order() -> None:
    classes = view_classes()
    assert [c.name for c in classes] == ["timeline", "scratchpad", "salience", "graph", "transcript", "map",
                                         "findings", "retention", "recall"]
    assert all(issubclass(c, View) and c.title for c in classes)
    assert [c.order for c in classes] == sorted(c.order for c in classes)


def _copy_package(root: Path) -> Path:
    """storage/, ui/ and app/ as they are installed here, copied to root/mnemoscope/."""
    package = root / "mnemoscope"
    for module in (mnemoscope.storage, mnemoscope.ui, mnemoscope.app):
        source = Path(module.__file__).resolve().parent
        shutil.copytree(source, package / module.__name__.rsplit(".", 1)[1],
                        ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_a_view_module_added_to_a_copy_is_a_tab_and_a_view_menu_entry(demo_path: Path, tmp_path: Path) -> None:
    pytest.importorskip("PySide6")
    package = _copy_package(tmp_path / "copy")
    (package / "ui" / "views" / "throwaway_view.py").write_text(THROWAWAY_VIEW, encoding="utf-8")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-I", "-c", WINDOW_SCRIPT, str(tmp_path / "copy"), str(demo_path),
         str(tmp_path / "settings.ini")],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert "error" not in found, found
    assert all(Path(f).resolve().is_relative_to(package.resolve()) for f in found["files"]), found["files"]
    assert found["tabs"] == ["Memories", "Timeline", "Scratchpad", "Salience", "Graph", "Transcript", "Map",
                             "Throwaway", "Findings", "Retention", "Recall"]
    assert "&Throwaway" in found["menu"] and found["menu"].index("&Throwaway") == found["menu"].index("&Map") + 1
    assert found["shown"] and found["label"] == f"{found['total']} memories" and found["total"] > 0
    # The package this test runs from is untouched: its registry lists no throwaway view.
    assert "throwaway" not in [c.name for c in view_classes()]
