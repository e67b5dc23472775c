"""A store-wide consistency check (check) and its report (Report); repairs are curation
steps (Curator.repair)."""

from .check import ConsistencyChecks, check
from .report import KINDS, Finding, FindingKind, Report, register_kind

__all__ = ["KINDS", "ConsistencyChecks", "Finding", "FindingKind", "Report", "check", "register_kind"]
