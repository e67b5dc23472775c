"""A long step's progress: a dialog with Cancel that stays open until the step ends."""

from __future__ import annotations

from PySide6.QtWidgets import QProgressDialog, QWidget


def progress_dialog(label: str, parent: QWidget | None = None) -> QProgressDialog:
    """A progress dialog (0-100) with Cancel, shown at once, that closes only when told."""
    dialog = QProgressDialog(label, "Cancel", 0, 100, parent)
    dialog.setWindowTitle("Mnemoscope")
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    return dialog


def show_progress(dialog: QProgressDialog, label: str, tick: tuple[int, int]) -> None:
    """Show a (done, total) tick: "label done of total" and the percentage."""
    done, total = tick
    dialog.setLabelText(f"{label} {done:,} of {total:,}")
    dialog.setValue(int(100 * done / total) if total else 100)
