"""Every control a person can reach has a name a screen reader can say."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers.windows import open_window
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import running_workers
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDialog,
    QGraphicsView,
    QHeaderView,
    QLineEdit,
    QPlainTextEdit,
    QTabBar,
    QTabWidget,
    QTextEdit,
    QWidget,
)

INTERACTIVE = (QAbstractButton, QLineEdit, QComboBox, QAbstractItemView, QTabWidget, QTabBar, QAbstractSpinBox,
               QTextEdit, QPlainTextEdit, QGraphicsView)


def _is_qt_internal(widget: QWidget) -> bool:
    """Parts Qt builds inside a control (a combo's popup list, a spin box's line edit, a dock's
    float button, a tab bar's scroll arrows): they are named through the control they belong to."""
    if widget.objectName().startswith("qt_") or isinstance(widget, QHeaderView):
        return True
    if isinstance(widget, QAbstractButton) and isinstance(widget.parentWidget(), QLineEdit):
        return True  # a line edit's clear button
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, (QComboBox, QAbstractSpinBox)) or (isinstance(widget, QTabBar) and isinstance(parent, QTabWidget)):
            return True
        if isinstance(parent, QTabBar) and isinstance(widget, QAbstractButton):
            return True
        parent = parent.parentWidget()
    return False


def controls(top: QWidget) -> list[QWidget]:
    return [w for w in [top, *top.findChildren(QWidget)] if isinstance(w, INTERACTIVE) and not _is_qt_internal(w)]


def unnamed_controls(top: QWidget) -> list[str]:
    """The interactive widgets under top whose accessible name is empty, as path: class."""
    missing = []
    for widget in controls(top):
        face = QAccessible.queryAccessibleInterface(widget)
        name = face.text(QAccessible.Text.Name) if face is not None else ""
        if not name.strip():
            missing.append(f"{widget.objectName() or '(no object name)'}: {type(widget).__name__} "
                           f"in {widget.parentWidget().objectName() if widget.parentWidget() else '-'}")
    return missing


@pytest.fixture
def window(qtbot, demo_path: Path, tmp_path: Path):
    win = open_window(qtbot, demo_path, tmp_path, (lambda w: w.view("graph").loaded, lambda w: w.view("transcript").loaded))
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() > 0)
    yield win
    win.close_store()


def test_every_control_of_the_main_window_has_an_accessible_name(qtbot, window: MainWindow) -> None:
    window.table_actions.select_row(0)
    assert unnamed_controls(window) == []


def test_every_control_of_the_dialogs_has_an_accessible_name(qtbot, window: MainWindow, tmp_path: Path) -> None:
    from mnemoscope.ui.dialogs.table_mapping_dialog import TableMappingDialog

    window.table_actions.select_row(0)
    qtbot.waitUntil(lambda: bool(window.table_actions.selected_memories()))
    qtbot.waitUntil(window.curation.edit_action.isEnabled)  # what the memory allows, read on a worker
    table = tmp_path / "notes.db"
    with sqlite3.connect(table) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, created TEXT)")
        db.execute("INSERT INTO notes (body, created) VALUES ('a note', '2026-01-01')")
    dialogs: list[QDialog] = [
        window.show_preferences(),
        window.opening.show_connect_dialog(),
        window.opening.discover_stores([tmp_path]),
        TableMappingDialog(table, window),
    ]
    for entry in [a for a in window.help_menu.actions()]:
        entry.trigger()
        dialogs.append(window.help_dialog)
    window.curation.edit_action.trigger()
    dialogs += [d for d in window.findChildren(QDialog, "edit_dialog")]
    candidates = window.curation.show_promotion_candidates()
    assert candidates is not None
    dialogs.append(candidates)
    assert {d.objectName(): len(controls(d)) for d in dialogs if not controls(d)} == {}  # each was looked at
    assert len(controls(window)) > 30
    missing = {d.objectName() or type(d).__name__: unnamed_controls(d) for d in dialogs}
    qtbot.waitUntil(lambda: running_workers() == 0)  # the dialogs' own readers done before they close
    for dialog in dialogs:
        dialog.close()
    assert {name: found for name, found in missing.items() if found} == {}
