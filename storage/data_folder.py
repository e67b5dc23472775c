"""Mnemoscope's own data folder: settings, credential names, table mappings, what it keeps about
servers. MNEMOSCOPE_HOME relocates it (tests, portable use)."""

from __future__ import annotations

import os
from pathlib import Path


def data_folder() -> Path:
    override = os.environ.get("MNEMOSCOPE_HOME")
    if override:
        return Path(override)
    from platformdirs import user_data_dir

    return Path(user_data_dir("mnemoscope", "Mnemoscope"))
