"""Opening stores from the window: a folder, a file, read-only, a server, a found store, a recent
one, and importing one into a workspace; the count label says "Opening …" meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemoscope.storage.credentials import Credentials, credential_name
from mnemoscope.storage.transfer import import_store
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QLabel, QProgressDialog, QStatusBar, QWidget

from ..dialogs.connect_dialog import ConnectDialog, ServerRequest
from ..dialogs.discover_dialog import DiscoverDialog
from ..dialogs.progress_dialog import progress_dialog, show_progress
from ..dialogs.table_mapping_dialog import TableMappingDialog
from ..store_session import StoreSession
from ..workers import Worker, start_worker
from .error_reports import ErrorReports

STORE_FILES = "Memory stores (memory.db chroma.sqlite3 *.db *.sqlite *.sqlite3);;All files (*)"


class StoreOpening(QObject):
    """The ways to open a store. Signals: import_finished(object) with the import's summary, or the
    exception that stopped it."""

    import_finished = Signal(object)

    def __init__(self, session: StoreSession, errors: ErrorReports, count_label: QLabel, status: QStatusBar,
                 parent: QWidget) -> None:
        super().__init__(parent)
        self.session, self.errors, self.count_label, self.status = session, errors, count_label, status
        self._widget = parent  # the dialogs' parent
        self._opening = False  # an open is under way: the count label says "Opening …"
        self._count_before_open = "No store open"
        self.import_dialog: QProgressDialog | None = None
        self.mapping_dialog: TableMappingDialog | None = None
        errors.folder_holds_stores.connect(self._on_errors_folder_holds_stores)
        errors.table_unmapped.connect(self._on_errors_table_unmapped)
        errors.error_shown.connect(self._on_errors_error_shown)

    def open_path(self, path: Path | str, *, read_only: bool = False, vectors: str | None = None,
                  credentials: Credentials | None = None) -> None:
        """Open a store (a path or a server's URL) off the UI thread; errors reach the person as
        one message."""
        if not self._opening:
            self._count_before_open = self.count_label.text()
        self._opening = True
        self.count_label.setText(f"Opening {path}" + (f" + {vectors}" if vectors else "") + "…")
        self.session.open(path, read_only=read_only, vectors=vectors, credentials=credentials)

    def opened(self) -> None:
        """The session opened the store asked for."""
        self._opening = False

    def open_recent(self, entry: str) -> None:
        target, _, vectors = entry.partition(" + ")
        self.open_path(target if "://" in target else Path(target), vectors=vectors or None)

    def _on_errors_error_shown(self, _text: str) -> None:
        """After an error: an open that failed leaves the label as it was before it (not "Opening …")."""
        if self._opening:
            self._opening = False
            self.count_label.setText("No store open" if self.session.store is None else self._count_before_open)
        elif self.session.store is None:
            self.count_label.setText("No store open")

    # -- choosing --------------------------------------------------------------------------------------

    def choose_store(self) -> None:
        path = QFileDialog.getExistingDirectory(self._widget, "Open a memory store")
        if path:
            self.open_path(Path(path))

    def choose_store_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self._widget, "Open a memory store file", "", STORE_FILES)
        if path:
            self.open_path(Path(path))

    def choose_store_read_only(self) -> None:
        path = QFileDialog.getExistingDirectory(self._widget, "Open a memory store read-only")
        if path:
            self.open_path(Path(path), read_only=True)

    def discover_stores(self, roots: list[Path] | None = None) -> DiscoverDialog:
        """File > Discover stores…: the stores found (on a worker); the one chosen opens here."""
        dialog = DiscoverDialog(self._widget, roots)
        dialog.setObjectName("discover_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open_requested.connect(self.open_path)
        dialog.open()
        return dialog

    def _on_errors_folder_holds_stores(self, folder: Path) -> None:
        dialog = self.discover_stores([folder])
        dialog.status.setText(f"{folder} is no memory store itself. Looking for the stores inside it…")

    def _on_errors_table_unmapped(self, path: Path) -> None:
        self.mapping_dialog = TableMappingDialog(path, self._widget)
        self.mapping_dialog.setObjectName("table_mapping_dialog")
        self.mapping_dialog.mapping_accepted.connect(self.open_path)
        self.mapping_dialog.open()

    def show_connect_dialog(self) -> ConnectDialog:
        """File > Connect to server…: a PostgreSQL store, a Chroma server, or both."""
        dialog = ConnectDialog(self._widget)
        dialog.setObjectName("connect_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.connect_requested.connect(self.open_server)
        dialog.open()
        return dialog

    def open_server(self, request: ServerRequest) -> None:
        credentials = self.session.new_credentials()
        if request.password is not None:
            credentials.offer(credential_name(request.url), request.password, remember=request.remember)
        self.open_path(request.url, read_only=request.read_only, vectors=request.vectors, credentials=credentials)

    # -- importing -------------------------------------------------------------------------------------

    def choose_import(self) -> None:
        src = QFileDialog.getExistingDirectory(self._widget, "Import memories from")
        if not src:
            return
        dest = QFileDialog.getExistingDirectory(self._widget, "Into the workspace (a new or native workspace folder)")
        if dest:
            self.import_into(Path(src), Path(dest))

    def import_into(self, src: Path, dest: Path) -> None:
        """Import src into the native workspace dest off the UI thread, with progress and cancel."""

        def done(summary: Any) -> None:
            self.status.showMessage(
                f"Imported {summary.imported} memories into {dest}; {summary.already_present} were already there.",
                15_000,
            )
            self.import_finished.emit(summary)

        self.import_dialog = self.run_with_progress(
            f"Importing {src.name}:",
            lambda progress, cancelled: import_store(src, dest, progress=progress, cancelled=cancelled),
            done,
            self.import_finished.emit,
        )

    def run_with_progress(
        self,
        label: str,
        work: Callable[[Callable[[int, int], None], Callable[[], bool]], Any],
        on_result: Callable[[Any], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> QProgressDialog:
        """Run work(progress, cancelled) on a worker behind a progress dialog with Cancel."""
        dialog = progress_dialog(label, self._widget)

        def run(worker: Worker) -> Any:
            # Signals emitted here are queued to the UI thread.
            return work(lambda done, total: worker.signals.yielded.emit((done, total)), lambda: worker.cancelled)

        def finished(result: Any) -> None:
            dialog.close()
            on_result(result)

        def failed(exc: BaseException) -> None:
            dialog.close()
            self.errors.show_error(exc)
            if on_error is not None:
                on_error(exc)

        worker = start_worker(run, on_result=finished, on_error=failed,
                              on_progress=lambda tick: show_progress(dialog, label, tick), with_worker=True)
        dialog.canceled.connect(worker.cancel)
        dialog.open()
        return dialog
