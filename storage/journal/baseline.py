"""The baseline of a store's accepted findings (storage/findings), kept with its journal.

It lives with the store's other Mnemoscope state: the journal's settings table (memory.db's
``meta``, or the sidecar ``.mnemoscope/journal.db`` of a store Mnemoscope does not own), never in
another tool's files. Each accepted finding is one record of the curation write primitive
(``findings-baseline:<fingerprint>``), so accepting is a curation step like an edit: journaled
before and after, undone and redone by the same replay, put back by recovery after a crash.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConflictError
from .log import Journal

RECORD_PREFIX = "findings-baseline:"
BASELINE_KEY = "findings_baseline"


def record_id(fingerprint: str) -> str:
    return RECORD_PREFIX + fingerprint


class BaselineRecords:
    """The writer of baseline records; MemoryStore.source_for routes their ids here."""

    label = "findings baseline"

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def owns(self, record: str) -> bool:
        return record.startswith(RECORD_PREFIX)

    def accepted(self) -> dict[str, dict[str, Any]]:
        """Every accepted finding, by fingerprint."""
        return dict(self.journal.read_setting(BASELINE_KEY) or {})

    def read_record(self, record: str) -> dict[str, Any] | None:
        return self.accepted().get(record.removeprefix(RECORD_PREFIX))

    def write_record(
        self, record: str, expected: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        accepted = self.accepted()
        key = record.removeprefix(RECORD_PREFIX)
        if accepted.get(key) != expected:
            raise ConflictError(f"The baseline entry {key} changed since it was read; nothing was written.")
        if new is None:
            accepted.pop(key, None)
        else:
            accepted[key] = new
        self.journal.write_setting(BASELINE_KEY, accepted)
        return new

    def close(self) -> None:
        pass
