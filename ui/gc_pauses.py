"""Garbage-collector pauses on the UI thread.

CPython's full collection walks every object it tracks while holding the GIL, on whichever
thread happens to allocate: with Qt, SQLAlchemy and a store open that is hundreds of thousands
of objects, and the window stops for 100-400 ms. The objects alive when the window is built
(modules, classes, Qt's wrappers, the widgets) live as long as the process, so they are frozen:
full collections skip them and walk only what was made since.
"""

from __future__ import annotations

import gc


def freeze_long_lived_objects() -> None:
    gc.freeze()
