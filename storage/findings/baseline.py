"""A store's per-store findings settings (the hosts links may point to), kept with its journal
like its baseline of accepted findings (storage/journal/baseline.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..journal.baseline import RECORD_PREFIX, BaselineRecords, record_id

if TYPE_CHECKING:
    from ..store import MemoryStore

__all__ = ["RECORD_PREFIX", "SETTINGS_KEY", "BaselineRecords", "allowed_hosts", "record_id", "save_allowed_hosts"]

SETTINGS_KEY = "findings"


def allowed_hosts(store: MemoryStore) -> tuple[str, ...]:
    """The hosts links may point to without a finding (none by default: every link is flagged low)."""
    return tuple((store.read_setting(SETTINGS_KEY) or {}).get("allowed_hosts", ()))


def save_allowed_hosts(store: MemoryStore, hosts: tuple[str, ...]) -> None:
    settings = dict(store.read_setting(SETTINGS_KEY) or {})
    settings["allowed_hosts"] = sorted({h.strip().lower() for h in hosts if h.strip()})
    store.write_setting(SETTINGS_KEY, settings)
