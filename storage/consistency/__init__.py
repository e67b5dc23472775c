"""A store-wide consistency check (check) and its report (Report); repairs are curation
steps (Curator.repair).

The names load on first use (PEP 562), as the storage package's do: a format that only
registers its own finding kinds (``from ..consistency.report import ...``) must not load the
checks, which read memory.db through SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .checks import ConsistencyChecks, check
    from .report import KINDS, Finding, FindingKind, Report, register_kind

_EXPORTS = {
    **dict.fromkeys(("ConsistencyChecks", "check"), "checks"),
    **dict.fromkeys(("KINDS", "Finding", "FindingKind", "Report", "register_kind"), "report"),
}
__all__ = ["KINDS", "ConsistencyChecks", "Finding", "FindingKind", "Report", "check", "register_kind"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(f".{module}", __name__)
    value = getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
