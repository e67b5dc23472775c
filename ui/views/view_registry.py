"""The list of views, made once: every module of this package that declares ``VIEW``.

Adding a view is adding a module here (``VIEW = MyView``, its class naming its ``name``,
``title`` and ``order``); the window's tabs and View menu are built from ``view_classes()``.
The modules are listed by pkgutil, which a PyInstaller bundle supports through its pkgutil
runtime hook (packaging/mnemoscope.spec collects every mnemoscope submodule).
"""

from __future__ import annotations

import importlib
import pkgutil

from .base_view import View


def view_classes() -> list[type[View]]:
    """The View subclasses declared by this package's modules, in their order (then by name)."""
    package = importlib.import_module(__package__ or "mnemoscope.ui.views")
    found: dict[str, type[View]] = {}
    for module_info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{module_info.name}")
        declared = getattr(module, "VIEW", None)
        if declared is None:
            continue
        if not (isinstance(declared, type) and issubclass(declared, View)) or not declared.name:
            raise TypeError(f"{module.__name__}.VIEW is not a named View subclass: {declared!r}")
        if declared.name in found:
            raise ValueError(f"two views are named {declared.name!r}: {found[declared.name].__module__} "
                             f"and {module.__name__}")
        found[declared.name] = declared
    if not found:  # a frozen bundle whose importer lists no modules: fail loudly, not an empty window
        raise RuntimeError(f"no view module found in {package.__name__} ({list(package.__path__)})")
    return sorted(found.values(), key=lambda view: (view.order, view.name))
