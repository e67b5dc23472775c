"""The memories table: a QTableView whose focus and activation changes repaint one row, not
the whole viewport."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QEvent, QRect, Qt
from PySide6.QtGui import QFocusEvent, QPalette, QRegion
from PySide6.QtWidgets import QTableView

_NO_UPDATES = Qt.WidgetAttribute.WA_UpdatesDisabled
_ACTIVATION = (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate)


class MemoryTable(QTableView):
    """QAbstractItemView repaints its whole viewport when it gains or loses focus and when its
    window is activated or deactivated. A focus change alters only the current row's focus
    frame, and activation alters nothing where the palette's active and inactive colours are
    one (Fusion's). A full repaint of the table is 10-35 ms of the UI thread, and it falls at
    the moment a curation step starts: a dialog closing gives the focus and the activation back
    as its step begins. Here such a change repaints the current row and the table's frame; with
    a palette whose inactive colours differ, activation still repaints everything."""

    def focusInEvent(self, event: QFocusEvent) -> None:
        self._repainting_focus_only(super().focusInEvent, event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self._repainting_focus_only(super().focusOutEvent, event)

    def event(self, event: QEvent) -> bool:
        if event.type() in _ACTIVATION and self.palette().isEqual(QPalette.ColorGroup.Active,
                                                                  QPalette.ColorGroup.Inactive):
            handled: list[bool] = []
            self._repainting_focus_only(lambda e: handled.append(super(MemoryTable, self).event(e)), event)
            return handled[0]
        return super().event(event)

    def _repainting_focus_only(self, handler: Callable[[Any], Any], event: QEvent) -> None:
        viewport = self.viewport()
        if not self.isVisible() or self.testAttribute(_NO_UPDATES) or viewport.testAttribute(_NO_UPDATES):
            handler(event)
            return
        # setUpdatesEnabled(True) would repaint everything again; the attribute alone does not.
        self.setAttribute(_NO_UPDATES, True)
        viewport.setAttribute(_NO_UPDATES, True)
        try:
            handler(event)  # Qt's handling (current index, input method); its update() is dropped
        finally:
            viewport.setAttribute(_NO_UPDATES, False)
            self.setAttribute(_NO_UPDATES, False)
        frame = QRegion(self.rect()).subtracted(QRegion(viewport.geometry()))
        self.update(frame)
        current = self.currentIndex()
        if current.isValid():
            row = self.visualRect(current)
            viewport.update(QRect(0, row.top(), viewport.width(), row.height()))
