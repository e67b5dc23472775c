"""The conflict dialog names what changed in the store since the edit began, and the person's
choice comes back as apply_chosen or keep_chosen."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.ui.dialogs.conflict_dialog import ConflictDialog
from mnemoscope.ui.store_session import Conflict
from PySide6.QtWidgets import QMessageBox


def _conflict(demo_path: Path) -> Conflict:
    with open_store(demo_path, read_only=True) as store:
        seen = store.page(MemoryQuery(), 1)[0]
    return Conflict(seen, replace(seen, content=seen.content + " (changed elsewhere)"), {"content": "mine"})


def test_apply_and_keep(qtbot, demo_path: Path) -> None:
    conflict = _conflict(demo_path)
    for button, signal in (("Apply my edit", "apply_chosen"), (None, "keep_chosen")):
        box = ConflictDialog(conflict)
        qtbot.addWidget(box)
        assert conflict.seen.id in box.text() and "changed elsewhere" in box.detailedText()
        assert "content: mine" in box.detailedText()
        box.open()
        chosen = next((b for b in box.buttons() if button and b.text().replace("&", "").startswith(button)), None)
        if chosen is None:
            chosen = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.RejectRole)
        with qtbot.waitSignal(getattr(box, signal)) as answered:
            chosen.click()
        assert answered.args == [conflict]
