"""The Findings view: secrets, injection and hidden text the store's memories hold, and their fixes.

The store is scanned on a worker of its own (storage.findings.scan_stream, on the background pool:
a whole-store job never holds a thread the window's reads need); the findings are listed as the
scan finds them, a batch at a time, and sorted worst first when it ends. A scan of a store
unchanged since the last one is read back from Mnemoscope's data folder. The fixes are asked for
by signal and carried out by the window as ordinary curation steps (redact, delete, accept into
the baseline), so each is journaled and undone by Undo.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mnemoscope.storage.findings import Finding, ScanBatch, ScanReport, scan_stream
from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..models.rows_model import Index, RowsModel
from ..store_session import StoreSession
from ..workers import Worker, background_pool
from .base_view import View

HEADERS = ("Severity", "Rule", "Memory", "Excerpt")
FindingRole = Qt.ItemDataRole.UserRole + 1


class FindingsModel(RowsModel):
    """The findings listed: appended a batch at a time as a scan finds them (no widget per cell),
    those accepted into the baseline left out unless asked for."""

    headers = HEADERS

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.every: list[Finding] = []
        self.shown: list[Finding] = []
        self.include_accepted = False

    def shown_rows(self) -> list[Finding]:
        return self.shown

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        finding = self.shown[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return (finding.severity, finding.rule, finding.memory_id,
                    finding.excerpt + ("  (accepted)" if finding.accepted else ""))[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            return finding.title
        if role == FindingRole:
            return finding
        return None

    def _listed(self, findings: Iterable[Finding]) -> list[Finding]:
        return [f for f in findings if self.include_accepted or not f.accepted]

    def append(self, findings: list[Finding]) -> None:
        self.every += findings
        listed = self._listed(findings)
        if listed:
            self.beginInsertRows(QModelIndex(), len(self.shown), len(self.shown) + len(listed) - 1)
            self.shown += listed
            self.endInsertRows()

    def set_every(self, findings: list[Finding]) -> None:
        """The whole list in its final order: rows move, a selection follows its findings."""
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        moved = [self.shown[i.row()] if 0 <= i.row() < len(self.shown) else None for i in before]
        self.every = list(findings)
        self.shown = self._listed(self.every)
        rows = {id(f): r for r, f in enumerate(self.shown)}
        after = [self.index(rows[id(f)], i.column()) if f is not None and id(f) in rows else QModelIndex()
                 for f, i in zip(moved, before, strict=True)]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def set_include_accepted(self, include: bool) -> None:
        self.beginResetModel()
        self.include_accepted = include
        self.shown = self._listed(self.every)
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self.every, self.shown = [], []
        self.endResetModel()


class FindingsView(View):
    """Signals: found(int) with the number of findings listed so far (after each batch a scan
    yields), loaded(int) with the number of findings once the scan is done, failed(object),
    redact_requested(object Finding), delete_requested(list of memory ids),
    accept_requested(list of Finding)."""

    name, title, order, read_when_shown, follows_rows = "findings", "Findings", 70, True, True
    redact_requested = Signal(object)
    delete_requested = Signal(list)
    accept_requested = Signal(list)
    found = Signal(int)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._report: ScanReport | None = None
        self._generation = 0
        self._scan: Worker | None = None
        self.model = FindingsModel(self)

        self.summary = QLabel("No store scanned yet.")
        self.summary.setObjectName("findings_summary")
        self.summary.setAccessibleName("Findings summary")
        self.show_accepted = QCheckBox("Show accepted")
        self.show_accepted.setObjectName("findings_show_accepted")
        self.show_accepted.setAccessibleName("Show findings accepted into the baseline")
        self.show_accepted.toggled.connect(self._on_show_accepted_toggled)
        self.rescan_button = self._button("Rescan", "findings_rescan", "Scan the store again", self._rescan)

        self.table = QTableView()
        self.table.setObjectName("findings_table")
        self.table.setAccessibleName("Findings")
        self.table.setModel(self.model)
        for column, width in enumerate((70, 190, 150)):
            self.table.setColumnWidth(column, width)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(len(HEADERS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu)
        self.table.selectionModel().selectionChanged.connect(lambda *_args: self._update_buttons())

        self.redact_button = self._button("Redact", "findings_redact", "Redact the selected finding's text",
                                          self._on_redact)
        self.delete_button = self._button("Delete memory", "findings_delete", "Delete the selected findings' memories",
                                          self._on_delete)
        self.accept_button = self._button("Accept into baseline", "findings_accept",
                                          "Accept the selected findings: hide them from later scans", self._on_accept)

        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        top.addWidget(self.show_accepted)
        top.addWidget(self.rescan_button)
        actions = QHBoxLayout()
        actions.addWidget(self.redact_button)
        actions.addWidget(self.delete_button)
        actions.addWidget(self.accept_button)
        actions.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(actions)
        self._update_buttons()

    def _button(self, text: str, name: str, accessible: str, slot: object) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAccessibleName(accessible)
        button.clicked.connect(lambda _checked=False: slot())  # type: ignore[operator]
        return button

    # -- loading -------------------------------------------------------------------------

    def read_store(self) -> None:
        """Scan the store on the background pool, listing findings as they come; a scan overtaken
        by a newer one is cancelled and its results dropped."""
        self._stop_scan()
        self._generation += 1
        generation = self._generation
        self._report = None
        self.model.clear()
        self.summary.setText("Scanning…")
        self._update_buttons()
        self._scan = self.read(_scan, on_result=lambda report: self._on_scanned(generation, report),
                               on_progress=lambda batch: self._on_batch(generation, batch),
                               with_worker=True, pool=background_pool())

    def _rescan(self) -> None:
        if self.is_open:
            self.load()

    def _stop_scan(self) -> None:
        if self._scan is not None:
            self._scan.cancel()
            self._scan = None

    def forget(self) -> None:
        self._stop_scan()
        self._generation += 1
        self._report = None
        self.model.clear()
        self.summary.setText("No store scanned yet.")
        self._update_buttons()

    def _on_batch(self, generation: int, batch: ScanBatch) -> None:
        if generation != self._generation:
            return
        self.model.append(batch.findings)
        if not batch.from_cache:
            self.summary.setText(f"Scanning… {len(self.model.every)} found ({batch.scanned:,} of {batch.total:,} memories).")
        self.found.emit(self.model.rowCount())

    def _on_scanned(self, generation: int, report: ScanReport | None) -> None:
        if generation != self._generation or report is None:
            return
        self._scan = None
        self._report = report
        self.model.set_every(report.findings)
        self._show_summary()
        self.loaded.emit(len(report.findings))

    def _on_show_accepted_toggled(self, checked: bool) -> None:
        self.model.set_include_accepted(checked)
        self._update_buttons()

    def _show_summary(self) -> None:
        report = self._report
        if report is None:
            return
        new = [f for f in report.findings if not f.accepted]
        hidden = len(report.findings) - len(new)
        text = f"{len(new)} finding{'s' if len(new) != 1 else ''} in {report.scanned} memories"
        if hidden:
            text += f"; {hidden} accepted into the baseline"
        self.summary.setText(text + f" (rules v{report.rules_version}).")
        self._update_buttons()

    # -- selection and fixes -----------------------------------------------------------

    def findings(self) -> list[Finding]:
        """Every finding listed, in table order."""
        return list(self.model.shown)

    def selected_findings(self) -> list[Finding]:
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [self.model.shown[row] for row in rows if row < len(self.model.shown)]

    def select_finding(self, fingerprint: str) -> bool:
        for row, finding in enumerate(self.model.shown):
            if finding.fingerprint == fingerprint:
                self.table.selectRow(row)
                return True
        return False

    def _update_buttons(self) -> None:
        selected = self.selected_findings()
        store = self.session.store
        writable = self.is_open and store is not None and not store.read_only
        self.redact_button.setEnabled(writable and len(selected) == 1)
        self.delete_button.setEnabled(writable and bool(selected))
        self.accept_button.setEnabled(writable and any(not f.accepted for f in selected))

    def _on_redact(self) -> None:
        selected = self.selected_findings()
        if len(selected) == 1:
            self.redact_requested.emit(selected[0])

    def _on_delete(self) -> None:
        ids = list(dict.fromkeys(f.memory_id for f in self.selected_findings()))
        if ids:
            self.delete_requested.emit(ids)

    def _on_accept(self) -> None:
        chosen = [f for f in self.selected_findings() if not f.accepted]
        if chosen:
            self.accept_requested.emit(chosen)

    def _on_table_context_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        menu.setObjectName("findings_menu")
        for button in (self.redact_button, self.delete_button, self.accept_button):
            action = QAction(button.text(), menu)
            action.setEnabled(button.isEnabled())
            action.triggered.connect(button.click)
            menu.addAction(action)
        menu.exec(self.table.viewport().mapToGlobal(position))


def _scan(worker: Worker, store: Any) -> Any:
    """The scan's generator (its batches are the worker's progress), stopping at a cancel."""
    return scan_stream(store, cancelled=lambda: worker.cancelled)


VIEW = FindingsView
