"""Mnemoscope's own data folder: settings, credential names, table mappings, what it keeps about
servers. MNEMOSCOPE_HOME relocates it (tests, portable use)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

# What platformdirs reads to place the folder (XDG on Linux, the profile on Windows, HOME on all).
_PLACED_BY = ("XDG_DATA_HOME", "HOME", "APPDATA", "LOCALAPPDATA", "USERPROFILE")


def data_folder() -> Path:
    override = os.environ.get("MNEMOSCOPE_HOME")
    if override:
        return Path(override)
    return _platform_folder(*(os.environ.get(name) for name in _PLACED_BY))


@functools.lru_cache(maxsize=4)
def _platform_folder(*_placed_by: str | None) -> Path:
    """The platform's data folder for the environment given (asked at every write to a store)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("mnemoscope", "Mnemoscope"))
