"""Scratchpad view: sessions -> keys -> values, reserved key patterns grouped and labelled."""

from __future__ import annotations

import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QHeaderView, QTreeView, QVBoxLayout, QWidget

from mnemoscope.storage import MemoryStore
from mnemoscope.storage.views.overview import scratchpad

from .workers import start_worker

USER_KEYS = "User and agent keys"


class ScratchpadView(QWidget):
    """Signals: loaded(int) with the number of sessions shown, load_failed(object)."""

    loaded = Signal(int)
    load_failed = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = QStandardItemModel(0, 3, self)
        self.model.setHorizontalHeaderLabels(["Session / key", "Value", "Updated"])
        self.tree = QTreeView()
        self.tree.setObjectName("scratchpad_tree")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tree.header().resizeSection(0, 320)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree)
        self._generation = 0

    def load(self, store: MemoryStore, session_id: str | None = None) -> None:
        self._generation += 1
        generation = self._generation
        start_worker(
            scratchpad,
            store,
            session_id,
            on_result=lambda sessions: self._on_loaded(generation, sessions),
            on_error=self.load_failed.emit,
        )

    def clear(self) -> None:
        self._generation += 1
        self.model.removeRows(0, self.model.rowCount())

    def _on_loaded(self, generation: int, sessions: list[dict[str, Any]]) -> None:
        if generation != self._generation:
            return
        self.model.removeRows(0, self.model.rowCount())
        for session in sessions:
            title = session.get("title") or session["id"]
            head = _row(f"{title}", f"{session['id']} · {session.get('channel') or '–'}", "")
            head[0].setToolTip(session["id"])
            groups: dict[str, list[QStandardItem]] = {}
            for entry in session["entries"]:
                label = entry["label"] if entry["pattern"] else USER_KEYS
                if label not in groups:
                    groups[label] = _row(label, "", "")
                    head[0].appendRow(groups[label])
                value = entry["json"] if entry["json"] is not None else entry["value"]
                shown = json.dumps(value, ensure_ascii=False) if entry["json"] is not None else _one_line(entry["value"])
                key_row = _row(entry["key"], shown, (entry["updated_at"] or "")[:16].replace("T", " "))
                key_row[1].setToolTip(entry["value"])
                if entry["json"] is not None:
                    _append_json(key_row[0], value)
                elif "\n" in entry["value"]:
                    for line in entry["value"].splitlines():
                        key_row[0].appendRow(_row("", line, ""))
                groups[label][0].appendRow(key_row)
            self.model.appendRow(head)
        self.tree.expandToDepth(1)
        self.loaded.emit(len(sessions))

    def keys_under(self, row: int) -> list[str]:
        """The keys shown for session row, across its groups (for tests and copy)."""
        session = self.model.item(row, 0)
        keys = []
        for g in range(session.rowCount()):
            group = session.child(g, 0)
            keys += [group.child(k, 0).text() for k in range(group.rowCount())]
        return keys


def _row(*texts: str) -> list[QStandardItem]:
    items = [QStandardItem(t) for t in texts]
    for item in items:
        item.setEditable(False)
    return items


def _one_line(value: str) -> str:
    text = " ⏎ ".join(value.splitlines())
    return text if len(text) <= 300 else text[:299] + "…"


def _append_json(parent: QStandardItem, value: Any) -> None:
    """JSON as a collapsible tree: objects by key, arrays by index."""
    if isinstance(value, dict):
        children = list(value.items())
    elif isinstance(value, list):
        children = [(f"[{i}]", v) for i, v in enumerate(value)]
    else:
        return
    for key, child in children:
        scalar = not isinstance(child, (dict, list))
        row = _row(str(key), json.dumps(child, ensure_ascii=False) if scalar else _summary(child), "")
        row[0].setData(Qt.AlignmentFlag.AlignLeft, Qt.ItemDataRole.TextAlignmentRole)
        parent.appendRow(row)
        if not scalar:
            _append_json(row[0], child)


def _summary(value: Any) -> str:
    return f"{{{len(value)} keys}}" if isinstance(value, dict) else f"[{len(value)} items]"
