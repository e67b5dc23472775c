"""Findings: secrets, prompt injection and poisoning, hidden text and PII in a store's memories.

Rules are data (rules.json, versioned, shipped in the package), with small context checks
(checks.py: a script's own invisible characters, the owner tool's annotation syntax) and decoders
(decoding.py: base64, escapes, invisible characters re-scanned for instructions). A store's accepted findings
(its baseline) and its link allow-list live with its other Mnemoscope state; accepting,
like redacting (Curator.redact), is an audited, undoable curation step (Curator.accept_findings).

Names load on first use (PEP 562): a command that only reads the allowed hosts loads no scanner.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .baseline import RECORD_PREFIX, BaselineRecords, allowed_hosts, save_allowed_hosts
    from .rules import SEVERITIES, Rule, RuleSet, default_rules, rules_from_json, severity_rank
    from .scan_cache import ScanBatch, scan_stream
    from .scanner import Finding, fingerprint, mask, scan_text
    from .store_scan import ScanReport, accepted_fingerprints, find_findings, memory_findings, scan_store

REDACTED = "[REDACTED]"

_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("RECORD_PREFIX", "BaselineRecords", "allowed_hosts", "save_allowed_hosts"), "baseline"),
    **dict.fromkeys(("SEVERITIES", "Rule", "RuleSet", "default_rules", "rules_from_json", "severity_rank"), "rules"),
    **dict.fromkeys(("Finding", "fingerprint", "mask", "scan_text"), "scanner"),
    **dict.fromkeys(("ScanBatch", "scan_stream"), "scan_cache"),
    **dict.fromkeys(
        ("ScanReport", "accepted_fingerprints", "find_findings", "memory_findings", "scan_store"), "store_scan"
    ),
}

__all__ = [
    "REDACTED", "RECORD_PREFIX", "SEVERITIES", "BaselineRecords", "Finding", "Rule", "RuleSet", "ScanBatch", "ScanReport",
    "accepted_fingerprints", "allowed_hosts", "default_rules", "find_findings", "fingerprint", "mask",
    "memory_findings", "rules_from_json", "save_allowed_hosts", "scan_store", "scan_stream", "scan_text", "severity_rank",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
