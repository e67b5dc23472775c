"""A store-wide consistency check (check) and its report (Report); repairs are curation
steps (Curator.repair).

The report's vocabulary (Finding, FindingKind, KINDS, register_kind, Report, ConsistencyChecks)
lives low, in storage/consistency_report.py, where the workspace and the formats that report
findings import it; it is re-exported here. The names load on first use (PEP 562), as the storage package's do.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..consistency_report import KINDS, ConsistencyChecks, Finding, FindingKind, Report, register_kind
    from .checks import check

_EXPORTS = {
    "check": ".checks",
    **dict.fromkeys(
        ("KINDS", "ConsistencyChecks", "Finding", "FindingKind", "Report", "register_kind"), "..consistency_report"
    ),
}
__all__ = ["KINDS", "ConsistencyChecks", "Finding", "FindingKind", "Report", "check", "register_kind"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(module, __name__)  # relative to this package
    value = getattr(loaded, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
