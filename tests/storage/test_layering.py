"""storage stays headless: it imports and works with PySide6 made unimportable."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import mnemoscope.storage as storage

BLOCK_QT = """
import sys
class BlockQt:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('PySide6', 'shiboken6') or name.startswith(('mnemoscope.ui', 'mnemoscope.app')):
            raise ImportError('blocked for the headless check: ' + name)
sys.meta_path.insert(0, BlockQt())
"""


def test_every_storage_module_imports_without_qt_ui_or_app(tmp_path: Path) -> None:
    modules = [m.name for m in pkgutil.walk_packages(storage.__path__, "mnemoscope.storage.")]
    code = BLOCK_QT + f"""
import importlib
for name in {modules!r}:
    importlib.import_module(name)
from mnemoscope.storage.demo import write_demo
store = write_demo({str(tmp_path / 'demo')!r})
assert store.count() > 0
loaded = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6') or m.startswith(('mnemoscope.ui', 'mnemoscope.app'))]
assert not loaded, loaded
print('ok', len({modules!r}))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok")
