"""The one channel every error reaches the person through: the session's, the views', the
table's and the dialogs' failures end here as a message (and in the status bar), or, for the
two an open can meet and get past, as an offer (the stores inside a folder, a table to map)."""

from __future__ import annotations

import sys
from pathlib import Path

from mnemoscope.storage import StoreError
from mnemoscope.storage.errors import UnmappedTableError, WrapsStoresError
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QMessageBox, QStatusBar, QWidget


class ErrorReports(QObject):
    """Shows errors. Signals: folder_holds_stores(object Path) for a folder that is no store but
    holds some, table_unmapped(object Path) for a SQLite file no format reads, error_shown(str)
    with the text of every error reported (after the two offers above too)."""

    folder_holds_stores = Signal(object)
    table_unmapped = Signal(object)
    error_shown = Signal(str)

    def __init__(self, status: QStatusBar, parent: QWidget) -> None:
        super().__init__(parent)
        self.status = status
        self._widget = parent  # the message boxes' parent
        self.last_error = ""

    def show_error(self, exc: BaseException) -> None:
        """Report exc: a StoreError's own words (the environment's fault), else an internal error
        to report, its trace on stderr."""
        if isinstance(exc, WrapsStoresError):
            self.last_error = str(exc)
            self.folder_holds_stores.emit(Path(exc.folder))
            self.error_shown.emit(str(exc))
            return
        if isinstance(exc, UnmappedTableError):  # a SQLite file no format reads: offer to map a table
            self.last_error = str(exc)
            self.table_unmapped.emit(Path(exc.path))
            self.error_shown.emit(str(exc))
            return
        if isinstance(exc, StoreError):
            text = str(exc)
        else:
            text = f"Internal error ({type(exc).__name__}: {exc}). Please report it."
            trace = getattr(exc, "__traceback_text__", "")
            if trace:
                print(trace, file=sys.stderr)
        self.last_error = text
        self.status.showMessage(text, 15_000)
        box = QMessageBox(QMessageBox.Icon.Warning, "Mnemoscope", text, QMessageBox.StandardButton.Ok, self._widget)
        box.setObjectName("error_box")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_shown.emit(text)
