"""One scratchpad key's value in an editor: stored as JSON when the text parses as JSON, else as
text, and the dialog says which as the person types."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mnemoscope.storage.curation import scratch_value
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from ..views.scratchpad_view import ScratchKey


class ScratchValueDialog(QDialog):
    """Edit one key's value as text: stored as JSON when the text parses as JSON, else as text
    (what the type label says as the person types)."""

    def __init__(self, entry: ScratchKey, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.entry = entry
        self.setWindowTitle(f"Edit {entry.key}")
        about = QLabel(f"Session {entry.session_id} · {entry.label or 'scratchpad key'}")
        about.setObjectName("scratch_value_about")
        about.setWordWrap(True)
        self.shown = _editable_text(entry.value)
        self.editor = QPlainTextEdit(self.shown)
        self.editor.setObjectName("scratch_value_editor")
        self.editor.setAccessibleName(f"Value of {entry.key}")
        self.type_label = QLabel()
        self.type_label.setObjectName("scratch_value_type")
        self.type_label.setAccessibleName("How the value will be stored")
        self.editor.textChanged.connect(self._on_editor_text_changed)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.setObjectName("scratch_value_buttons")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(about)
        layout.addWidget(self.editor, 1)
        layout.addWidget(self.type_label)
        layout.addWidget(buttons)
        self._on_editor_text_changed()
        self.resize(560, 380)

    def value(self) -> Any:
        """The value to store, typed: JSON when the text parses, else the text."""
        return scratch_value(self.editor.toPlainText())

    def changed(self) -> bool:
        """Whether the value typed differs from the one read (spacing of JSON aside)."""
        return _canonical(self.value()) != _canonical(scratch_value(self.shown))

    def _on_editor_text_changed(self) -> None:
        self.type_label.setText(f"Saved as {_type_name(self.editor.toPlainText())}.")


def _editable_text(value: str) -> str:
    """A stored value as the editor shows it: an object or array indented, anything else as it is."""
    parsed = scratch_value(value)
    return json.dumps(parsed, ensure_ascii=False, indent=2) if isinstance(parsed, (dict, list)) else value


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _type_name(text: str) -> str:
    value = scratch_value(text)
    if isinstance(value, str):
        return "text" if value == text else "text (a JSON string)"
    if isinstance(value, bool):
        return "JSON true/false"
    if value is None:
        return "JSON null"
    if isinstance(value, (int, float)):
        return "a JSON number"
    return "a JSON object" if isinstance(value, dict) else "a JSON array"
