"""The choice after an edit met another program's write: both versions, the person decides."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QMessageBox, QWidget

from ..store_session import Conflict

COMPARED = ("content", "tags", "layer", "channel", "salience", "access_count", "status")
APPLY = "Apply my edit"
KEEP = "Keep the store's"


def plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return value.value if hasattr(value, "value") else value


class ConflictDialog(QMessageBox):
    """Signals: apply_chosen(object Conflict), keep_chosen(object Conflict)."""

    apply_chosen = Signal(object)
    keep_chosen = Signal(object)

    def __init__(self, conflict: Conflict, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conflict = conflict
        seen, now = conflict.seen, conflict.now
        lines = []
        for name in COMPARED:
            before, current = getattr(seen, name), getattr(now, name)
            if before != current:
                lines.append(f"{name}: when you opened it: {plain(before)!s}\n   now in the store: {plain(current)!s}")
        yours = "\n".join(f"{k}: {plain(v)!s}" for k, v in conflict.changes.items())
        self.setObjectName("conflict_box")
        self.setIcon(QMessageBox.Icon.Question)
        self.setWindowTitle("The memory changed")
        self.setText(f"{seen.id} changed since you opened it (another program wrote to the store).")
        self.setInformativeText("Apply your edit over the new version, or keep the store's version?")
        self.setDetailedText("Changed in the store:\n" + ("\n".join(lines) or "(its record)") + "\n\nYour edit:\n" + yours)
        self._apply = self.addButton(APPLY, QMessageBox.ButtonRole.AcceptRole)
        self.addButton(KEEP, QMessageBox.ButtonRole.RejectRole)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.finished.connect(self._on_finished)

    def _on_finished(self, _result: int) -> None:
        if self.clickedButton() is self._apply:
            self.apply_chosen.emit(self.conflict)
        else:
            self.keep_chosen.emit(self.conflict)
