"""A store-wide consistency check (check) and its report (Report); repairs are curation
steps (Curator.repair).

The report's vocabulary (Finding, FindingKind, KINDS, register_kind, Report) lives low, in
storage/consistency_report.py, where the formats that register their own kinds import it;
it is re-exported here. The names load on first use (PEP 562), as the storage package's do.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..consistency_report import KINDS, Finding, FindingKind, Report, register_kind
    from .checks import ConsistencyChecks, check

_EXPORTS = {
    **dict.fromkeys(("ConsistencyChecks", "check"), ".checks"),
    **dict.fromkeys(("KINDS", "Finding", "FindingKind", "Report", "register_kind"), "..consistency_report"),
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
