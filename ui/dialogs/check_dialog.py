"""Tools > Check store…: every copy of every memory compared (storage.consistency.check) on a
worker, the findings grouped by kind with counts, and a Repair button for each kind with a safe
repair. A repair is a curation step of the session, so Edit > Undo reverts it; after every step
(a repair, an undo, a redo) the store is checked again."""

from __future__ import annotations

from typing import Any

from mnemoscope.storage import MemoryStore
from mnemoscope.storage.consistency import KINDS, Report, check
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from ..workers import Worker

COLUMNS = ("Kind", "Count", "Severity", "Repair")
SHOWN_PER_KIND = 200  # items listed under a kind; the count says how many there are


class _Cancelled(Exception):
    pass


class CheckDialog(QDialog):
    """Signals: checked(object Report) after each check; failed(object exception);
    repair_requested(str kind) when a Repair button is pressed."""

    checked = Signal(object)
    failed = Signal(object)
    repair_requested = Signal(str)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("check_dialog")
        self.setWindowTitle("Check store")
        self.setAccessibleName("Check store")
        self.resize(900, 480)
        self.session = session
        self.report: Report | None = None
        self.repair_buttons: dict[str, QPushButton] = {}
        self._worker: Worker | None = None
        self._again = False

        self.status = QLabel("Checking…")
        self.status.setObjectName("check_status")
        self.status.setAccessibleName("Check status")
        self.status.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setObjectName("check_progress")
        self.progress.setAccessibleName("Check progress")
        self.tree = QTreeWidget()
        self.tree.setObjectName("check_findings")
        self.tree.setAccessibleName("Inconsistencies by kind")
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setColumnWidth(0, 420)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.setObjectName("check_buttons")
        self.again_button = buttons.addButton("Check again", QDialogButtonBox.ButtonRole.ActionRole)
        self.again_button.setObjectName("check_again")
        self.again_button.setAccessibleName("Check again")
        self.again_button.clicked.connect(self.run_check)
        self.cancel_button = buttons.addButton("Stop", QDialogButtonBox.ButtonRole.ActionRole)
        self.cancel_button.setObjectName("check_cancel")
        self.cancel_button.setAccessibleName("Stop checking")
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        buttons.rejected.connect(self.reject)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.progress)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.tree, 1)
        layout.addWidget(buttons)

        session.curated.connect(self._on_session_curated)
        session.closed.connect(self.reject)
        self.finished.connect(self._on_finished)
        self.run_check()

    # -- checking -------------------------------------------------------------------------

    def run_check(self) -> None:
        """Check the session's store on a worker (once the one running, if any, is done)."""
        store = self.session.store
        if store is None:
            return
        if self._worker is not None:
            self._again = True
            return

        def work(worker: Worker, store: MemoryStore) -> Report:
            def progress(done: int, total: int) -> None:
                if worker.cancelled:
                    raise _Cancelled
                worker.signals.yielded.emit((done, total))

            return check(store, progress=progress)

        self.status.setText(f"Checking {store.location}…")
        self.progress.setRange(0, 0)
        self.again_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        for button in self.repair_buttons.values():
            button.setEnabled(False)
        self._worker = self.session.read(work, with_worker=True, on_result=self._on_check_returned,
                                         on_error=self._on_check_errored, on_progress=self._on_check_progress,
                                         on_finished=self._on_check_finished)

    def _on_check_progress(self, tick: tuple[int, int]) -> None:
        done, total = tick
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(min(done, max(total, 1)))

    def _on_check_returned(self, report: Report) -> None:
        self.report = report
        self._show(report)
        self.checked.emit(report)

    def _on_check_errored(self, exc: BaseException) -> None:
        if isinstance(exc, _Cancelled):
            self.status.setText("Check stopped.")
            return
        self.status.setText(f"The check failed: {exc}")
        self.failed.emit(exc)

    def _on_check_finished(self) -> None:
        self._worker = None
        self.progress.setRange(0, 1)
        self.progress.setValue(1)
        self.again_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if self._again:
            self._again = False
            self.run_check()

    def _on_cancel_clicked(self) -> None:
        if self._worker is not None:
            self._worker.cancel()

    def _on_finished(self, _result: int) -> None:
        self._on_cancel_clicked()
        self.session.curated.disconnect(self._on_session_curated)
        self.session.closed.disconnect(self.reject)

    # -- showing --------------------------------------------------------------------------

    def _show(self, report: Report) -> None:
        self.tree.clear()
        self.repair_buttons.clear()
        read_only = self.session.store is None or self.session.store.read_only
        for kind in report.kinds():
            items = report.items(kind.id)
            top = QTreeWidgetItem([kind.title, f"{len(items):,}", kind.severity, ""])
            top.setToolTip(0, kind.repair or kind.advice)
            top.setData(0, 256, kind.id)  # Qt.UserRole: the kind's stable id
            self.tree.addTopLevelItem(top)
            for finding in items[:SHOWN_PER_KIND]:
                QTreeWidgetItem(top, [f"{finding.record}: {finding.detail}", "", "", ""])
            if len(items) > SHOWN_PER_KIND:
                QTreeWidgetItem(top, [f"… and {len(items) - SHOWN_PER_KIND:,} more", "", "", ""])
            if kind.repairable:
                # A repair that takes a side says which; the advice names the other way.
                button = QPushButton("Repair" if kind.by_default else "Keep the memory's text")
                button.setObjectName(f"repair_{kind.id}")
                button.setAccessibleName(f"Repair: {kind.title}")
                button.setToolTip(f"Repair: {kind.repair} (one step; Edit > Undo reverts it)"
                                  + ("" if kind.by_default else f". Or: {kind.advice}"))
                button.setEnabled(not read_only)
                button.clicked.connect(lambda _checked=False, k=kind.id: self.repair(k))
                self.tree.setItemWidget(top, 3, button)
                self.repair_buttons[kind.id] = button
            else:
                top.setText(3, "see advice")
                top.setToolTip(3, kind.advice)
        checked = ", ".join(f"{n:,} {what}" for what, n in report.checked.items())
        found = ", ".join(f"{len(report.items(k.id))} {k.id}" for k in report.kinds())
        notes = "".join(f"\n{note}" for note in report.skipped)
        self.status.setText(f"Checked {checked}: " + (f"{report.total} inconsistencies ({found})." if found
                                                       else "every copy is consistent.") + notes)

    def counts(self) -> dict[str, int]:
        """The count shown for each kind (kind id -> count), as the tree shows it."""
        out = {}
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is None:
                continue
            out[str(item.data(0, 256))] = int(item.text(1).replace(",", ""))
        return out

    # -- repairing ------------------------------------------------------------------------

    def repair(self, kind: str) -> None:
        """Repair one kind's findings as a curation step of the session."""
        if self.report is None or kind not in KINDS:
            return
        for button in self.repair_buttons.values():
            button.setEnabled(False)
        self.status.setText(f"Repairing: {KINDS[kind].title}…")
        self.repair_requested.emit(kind)
        self.session.curate("repair", self.report, [kind])

    def _on_session_curated(self, _outcome: Any) -> None:
        self.run_check()
