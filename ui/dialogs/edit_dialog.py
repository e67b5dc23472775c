"""Edit a memory in place: content, tags, layer, channel, salience."""

from __future__ import annotations

from typing import Any

from mnemoscope.storage import Layer, Memory
from mnemoscope.storage.salience import salience_kept
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)


class EditDialog(QDialog):
    """Only the fields the memory's store can hold are enabled."""

    def __init__(self, memory: Memory, editable: tuple[str, ...], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Edit {memory.id}")
        self.memory = memory
        self.content = QPlainTextEdit(memory.content)
        self.content.setObjectName("edit_content")
        self.tags = QLineEdit(", ".join(memory.tags))
        self.tags.setObjectName("edit_tags")
        self.layer = QComboBox()
        self.layer.addItems([layer.value for layer in Layer])
        self.layer.setCurrentText(memory.layer.value)
        self.channel = QLineEdit(memory.channel)
        self.salience = QDoubleSpinBox()
        self.salience.setRange(0.0, 1.0)
        self.salience.setSingleStep(0.05)
        self.salience.setDecimals(2)
        self.salience.setValue(memory.salience)
        if not salience_kept(memory).kept and "salience" not in editable:  # none kept: none shown
            self.salience.setSpecialValueText("—")
            self.salience.setValue(self.salience.minimum())
        form = QFormLayout(self)
        form.addRow("Content", self.content)
        form.addRow("Tags", self.tags)
        form.addRow("Layer", self.layer)
        form.addRow("Channel", self.channel)
        form.addRow("Salience", self.salience)
        widgets = {"content": self.content, "tags": self.tags, "layer": self.layer, "channel": self.channel, "salience": self.salience}
        for name, widget in widgets.items():
            widget.setEnabled(name in editable)
        if set(widgets) - set(editable):
            note = QLabel(f"A {memory.source.kind.value} memory keeps only: {', '.join(editable)}.")
            note.setWordWrap(True)
            form.addRow(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.resize(560, 380)

    def changes(self) -> dict[str, Any]:
        """Only the fields a person changed, ready for Curator.edit."""
        m = self.memory
        out: dict[str, Any] = {}
        content = self.content.toPlainText()
        if self.content.isEnabled() and content.strip() != m.content.strip():
            out["content"] = content
        tags = tuple(t.strip() for t in self.tags.text().split(",") if t.strip())
        if self.tags.isEnabled() and tags != m.tags:
            out["tags"] = tags
        if self.layer.isEnabled() and self.layer.currentText() != m.layer.value:
            out["layer"] = self.layer.currentText()
        if self.channel.isEnabled() and self.channel.text().strip() and self.channel.text().strip() != m.channel:
            out["channel"] = self.channel.text().strip()
        if self.salience.isEnabled() and abs(self.salience.value() - m.salience) > 1e-9:
            out["salience"] = round(self.salience.value(), 4)
        return out
