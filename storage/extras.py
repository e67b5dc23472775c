"""Parts of a store read through a package too heavy for the default install (an extra).

Without the package such a part is not counted as empty: it is *unread*, and every surface says
so in one wording, ``unread: install mnemoscope[EXTRA]`` (``info``, ``discover``, each command's
stderr, the window's sidebar and status bar). A store of which nothing else could be read does
not open at all (``MissingExtraError``: exit 2, one line), so no command shows it as 0 memories.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from .errors import UnreadableStoreError


@dataclass(frozen=True)
class UnreadPart:
    label: str  # what the part is, as info names it ("CrewAI unified memory (LanceDB)")
    path: str
    package: str  # the import name that reads it ("lancedb")
    extra: str  # the mnemoscope extra that installs the package ("crewai")

    @property
    def line(self) -> str:
        return (f"unread: install mnemoscope[{self.extra}] ({self.label} at {self.path} needs the {self.package} "
                f"package: pip install 'mnemoscope[{self.extra}]')")

    def to_dict(self) -> dict[str, str]:
        return {"label": self.label, "path": self.path, "package": self.package, "extra": self.extra,
                "line": self.line}


class MissingExtraError(UnreadableStoreError):
    """Every part of the store needs a package this install lacks: unread names them."""

    def __init__(self, unread: list[UnreadPart]) -> None:
        super().__init__("; ".join(part.line for part in unread))
        self.unread = unread


def installed(package: str) -> bool:
    """Whether package can be imported here, found without importing it (lancedb takes seconds)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):  # a parent that is no package; a module whose __spec__ is None
        return False
