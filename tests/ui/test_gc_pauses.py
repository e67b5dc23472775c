"""ui/gc_pauses.py: what is alive when the window is built is frozen, so a full garbage collection
on the UI thread walks only what was made since (not Qt's, SQLAlchemy's and the widgets' hundreds
of thousands of objects) and the window does not stop for it."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from mnemoscope.ui.gc_pauses import freeze_long_lived_objects
from mnemoscope.ui.main_window import MainWindow
from PySide6.QtCore import QSettings


class Node:
    """An object in a reference cycle: only the collector frees it."""

    def __init__(self) -> None:
        self.me = self


def _walked(obj: object) -> bool:
    """Whether a full collection walks obj (the collector's generations hold it)."""
    return any(tracked is obj for tracked in gc.get_objects())


def test_building_the_window_freezes_what_is_alive_then(qtbot, tmp_path: Path) -> None:
    long_lived = Node()
    assert _walked(long_lived)
    frozen_before = gc.get_freeze_count()
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    assert not _walked(long_lived)
    assert gc.get_freeze_count() > frozen_before
    made_since = Node()
    assert _walked(made_since)


def test_a_full_collection_then_walks_only_what_was_made_since(qtbot) -> None:
    freeze_long_lived_objects()
    # Importing Qt, the storage library and the window's modules made far more than is left to walk.
    assert gc.get_freeze_count() > 100_000
    assert len(gc.get_objects()) < gc.get_freeze_count() // 20


def test_a_frozen_object_is_skipped_by_collections_and_a_new_one_is_not() -> None:
    old = Node()
    old_ref = weakref.ref(old)
    freeze_long_lived_objects()
    new = Node()
    new_ref = weakref.ref(new)
    del old, new
    gc.collect()
    assert new_ref() is None  # made since: walked, found unreachable, freed
    assert old_ref() is not None  # frozen: the collection never looked at it (a few bytes, kept for good)
