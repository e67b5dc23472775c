"""The Findings view: secrets, injection and hidden text the store's memories hold, and their fixes.

The store is scanned on a worker (storage.findings.scan_store); the fixes are asked for by
signal and carried out by the window as ordinary curation steps (redact, delete, accept into
the baseline), so each is journaled and undone by Undo.
"""

from __future__ import annotations

from collections.abc import Iterable

from mnemoscope.storage.findings import Finding, ScanReport, scan_store
from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from .base_view import View

HEADERS = ("Severity", "Rule", "Memory", "Excerpt")
FindingRole = Qt.ItemDataRole.UserRole + 1


class FindingsView(View):
    """Signals: loaded(int) with the number of findings, failed(object), redact_requested(object
    Finding), delete_requested(list of memory ids), accept_requested(list of Finding)."""

    name, title, order, read_when_shown, follows_rows = "findings", "Findings", 70, True, True
    redact_requested = Signal(object)
    delete_requested = Signal(list)
    accept_requested = Signal(list)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self._report: ScanReport | None = None
        self._generation = 0

        self.summary = QLabel("No store scanned yet.")
        self.summary.setObjectName("findings_summary")
        self.summary.setAccessibleName("Findings summary")
        self.show_accepted = QCheckBox("Show accepted")
        self.show_accepted.setObjectName("findings_show_accepted")
        self.show_accepted.setAccessibleName("Show findings accepted into the baseline")
        self.show_accepted.toggled.connect(lambda _checked: self._show())
        self.rescan_button = self._button("Rescan", "findings_rescan", "Scan the store again", self._rescan)

        self.table = QTableWidget(0, len(HEADERS))
        self.table.setObjectName("findings_table")
        self.table.setAccessibleName("Findings")
        self.table.setHorizontalHeaderLabels(HEADERS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(len(HEADERS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu)
        self.table.itemSelectionChanged.connect(self._update_buttons)

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
        """Scan the store off the UI thread; a scan overtaken by a newer one is dropped."""
        self._generation += 1
        generation = self._generation
        self.summary.setText("Scanning…")
        self.read(scan_store, on_result=lambda report: self._on_scanned(generation, report))

    def _rescan(self) -> None:
        if self.is_open:
            self.load()

    def forget(self) -> None:
        self._generation += 1
        self._report = None
        self.table.setRowCount(0)
        self.summary.setText("No store scanned yet.")
        self._update_buttons()

    def _on_scanned(self, generation: int, report: ScanReport) -> None:
        if generation != self._generation:
            return
        self._report = report
        self._show()
        self.loaded.emit(len(report.findings))

    def _show(self) -> None:
        report = self._report
        if report is None:
            return
        shown = report.shown(include_accepted=self.show_accepted.isChecked())
        self.table.setRowCount(len(shown))
        for row, finding in enumerate(shown):
            cells = (finding.severity, finding.rule, finding.memory_id,
                     finding.excerpt + ("  (accepted)" if finding.accepted else ""))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(FindingRole, finding)
                item.setToolTip(finding.title)
                self.table.setItem(row, column, item)
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
        return self._findings_in(range(self.table.rowCount()))

    def selected_findings(self) -> list[Finding]:
        return self._findings_in(sorted({index.row() for index in self.table.selectionModel().selectedRows()}))

    def _findings_in(self, rows: Iterable[int]) -> list[Finding]:
        items = [self.table.item(row, 0) for row in rows]
        return [item.data(FindingRole) for item in items if item is not None]

    def select_finding(self, fingerprint: str) -> bool:
        for row, finding in enumerate(self.findings()):
            if finding.fingerprint == fingerprint:
                self.table.selectRow(row)
                return True
        return False

    def _update_buttons(self) -> None:
        selected = self.selected_findings() if self.table.selectionModel() is not None else []
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


VIEW = FindingsView
