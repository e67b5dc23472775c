"""Every error reaches the person through one channel: a store's own message, an internal error to
report (its trace on stderr), or the offer a folder of stores or an unmapped table makes."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage import StoreError
from mnemoscope.storage.errors import UnmappedTableError, WrapsStoresError
from mnemoscope.ui.controllers.error_reports import ErrorReports
from PySide6.QtWidgets import QMainWindow, QMessageBox


def _reports(qtbot) -> tuple[QMainWindow, ErrorReports]:
    window = QMainWindow()
    qtbot.addWidget(window)
    return window, ErrorReports(window.statusBar(), window)


def test_a_store_error_and_an_internal_one(qtbot, capsys) -> None:
    window, reports = _reports(qtbot)
    with qtbot.waitSignal(reports.error_shown) as shown:
        reports.show_error(StoreError("memory.db is locked by another program"))
    assert shown.args == ["memory.db is locked by another program"] == [reports.last_error]
    assert window.statusBar().currentMessage() == reports.last_error
    boxes = window.findChildren(QMessageBox, "error_box")
    assert boxes and boxes[-1].text() == reports.last_error
    bug = ValueError("bad")
    bug.__traceback_text__ = "Traceback: the trace"  # type: ignore[attr-defined]
    with qtbot.waitSignal(reports.error_shown) as shown:
        reports.show_error(bug)
    assert shown.args[0] == "Internal error (ValueError: bad). Please report it."
    assert "Traceback: the trace" in capsys.readouterr().err


def test_a_folder_of_stores_and_an_unmapped_table_are_offers(qtbot, tmp_path: Path) -> None:
    window, reports = _reports(qtbot)
    with qtbot.waitSignals([reports.folder_holds_stores, reports.error_shown]) as _:
        reports.show_error(WrapsStoresError("home holds stores", str(tmp_path), []))
    with qtbot.waitSignal(reports.table_unmapped) as unmapped:
        reports.show_error(UnmappedTableError("no format reads it", str(tmp_path / "x.db")))
    assert unmapped.args == [tmp_path / "x.db"] and reports.last_error == "no format reads it"
    assert not window.findChildren(QMessageBox, "error_box")  # offers, not error boxes
