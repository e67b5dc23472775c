"""A format's answer to "does this path hold your store?"."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..model import Kind


@dataclass(frozen=True)
class FormatMatch:
    format: str
    label: str
    location: Path
    open: Callable[[], Any] = field(compare=False)
    # Native kinds at these paths are read by this format instead.
    claims: tuple[tuple[Kind, Path], ...] = ()
    # Where the undo journal goes when nothing native holds one; None: the opened folder.
    journal_dir: Path | None = None
