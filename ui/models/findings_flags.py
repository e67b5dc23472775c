"""The memories table's Findings column, scanned off the UI thread.

Scanning one memory's content with the findings rules takes about half a millisecond; a table
that formats its visible rows again after each write of an agent (every two seconds while one
writes) would spend 20 ms of the UI thread on it each time. So a row's flag is scanned on a worker,
the rows asked for during one paint in one batch, and kept by memory id and revision under the
store's findings state (its accepted fingerprints and allowed hosts): a row read again unchanged
is not scanned again. Until its scan is in, a row's flag is unknown and shows empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from mnemoscope.storage import Memory, MemoryStore, Status
from mnemoscope.storage.findings import Finding, accepted_fingerprints, allowed_hosts, memory_findings
from PySide6.QtCore import QObject, QTimer, Signal

from ..store_session import StoreSession
from ..workers import AT_ONCE

State = tuple[frozenset[str], tuple[str, ...]]  # the store's accepted fingerprints and allowed hosts
MAX_KEPT = 20_000  # flags kept (by memory id); past it the oldest half go, and are scanned again if shown


def read_state(store: MemoryStore) -> State:
    return accepted_fingerprints(store), allowed_hosts(store)


def scan_flags(_store: MemoryStore, memories: Sequence[Memory], state: State) -> dict[str, tuple[str, tuple[Finding, ...]]]:
    """On a worker: each memory's open findings (those not accepted), by id, with its revision."""
    accepted, hosts = state
    return {m.id: (m.revision, tuple(f for f in memory_findings(m, accepted, hosts) if not f.accepted))
            for m in memories}


class FindingsFlags(QObject):
    """Signals: state_changed() once the store's findings state is read and differs from the one
    before (every flag is unknown again); scanned(object set of memory ids) once their flags are in."""

    state_changed = Signal()
    scanned = Signal(object)
    failed = Signal(object)

    def __init__(self, session: StoreSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._session = session
        self._state: State | None = None
        self._known: dict[str, tuple[str, tuple[Finding, ...]]] = {}  # id -> (revision, open findings)
        self._asked: dict[str, Memory] = {}  # shown, flag unknown, not yet on a worker
        self._batch_due = False

    def load_state(self) -> None:
        """Read the store's findings state again (on a worker): a change makes every flag unknown."""
        self._session.read(read_state, on_result=self._on_state_read, on_error=self.failed.emit)

    def _on_state_read(self, state: State) -> None:
        if state == self._state:
            return
        self._state = state
        self._known.clear()
        self._asked.clear()
        self.state_changed.emit()

    def known(self, memory: Memory) -> tuple[Finding, ...] | None:
        """The memory's open findings if scanned at its revision (None: not yet, and its scan is
        asked for); none for a deleted memory."""
        if memory.status is Status.DELETED:
            return ()
        kept = self._known.get(memory.id)
        if kept is not None and kept[0] == memory.revision:
            return kept[1]
        self._asked[memory.id] = memory
        if not self._batch_due:
            self._batch_due = True
            QTimer.singleShot(0, self, self._scan_asked)  # after the paint that asked: one batch
        return None

    def _scan_asked(self) -> None:
        self._batch_due = False
        state = self._state
        if state is None or not self._asked:  # the state's read is on its way: state_changed asks again
            return
        batch, self._asked = list(self._asked.values()), {}
        self._session.read(scan_flags, batch, state, on_result=lambda found: self._on_scanned(state, found),
                           on_error=self.failed.emit, priority=AT_ONCE)

    def _on_scanned(self, state: State, found: dict[str, tuple[str, tuple[Finding, ...]]]) -> None:
        if state != self._state:  # scanned under a baseline since replaced: asked again
            return
        if len(self._known) + len(found) > MAX_KEPT:
            for memory_id in list(islice(self._known, len(self._known) // 2)):
                del self._known[memory_id]
        self._known.update(found)
        self.scanned.emit(set(found))
