"""The Help menu: keyboard shortcuts (read from the window's actions), the supported stores (the
README's table), the README itself, and About. Nothing here is a hand-kept copy of anything."""

from __future__ import annotations

import html
import platform
import re
from collections.abc import Callable
from email.message import Message
from importlib import metadata
from pathlib import Path
from typing import Any

import PySide6
from markdown_it import MarkdownIt
from mnemoscope.storage.data_folder import data_folder
from PySide6.QtCore import QSettings, Qt, qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMainWindow,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from ..widgets.detail_panel import SafeTextBrowser

DISTRIBUTION = "mnemoscope"
FORMATS_HEADING = "## Stores other tools wrote"
SOURCE_README = Path(__file__).resolve().parents[2] / "README.md"
_markdown = MarkdownIt("commonmark", {"html": False}).enable("table")


def readme_text() -> str:
    """The README: the source tree's file when running from a checkout, else the installed
    package's long description (the wheel's metadata carries the README whole)."""
    if SOURCE_README.exists():
        return SOURCE_README.read_text(encoding="utf-8")
    try:
        meta = metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return ""
    described = meta.get_payload() if isinstance(meta, Message) else None  # the body after the headers
    return described if isinstance(described, str) else ""


def version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def license_name() -> str:
    try:
        meta = metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "MIT"
    named = [*(meta.get_all("License-Expression") or []), *(meta.get_all("License") or [])]
    return next((str(name) for name in named if name), "MIT")


def section(markdown: str, heading: str) -> str:
    """The text under a heading, up to the next heading of the same or a higher level."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = markdown.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        return ""
    end = next((i for i in range(start + 1, len(lines))
                if re.match(rf"#{{1,{level}}} ", lines[i])), len(lines))
    return "\n".join(lines[start + 1:end])


def markdown_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The first pipe table in text: its header and rows, cells with their markdown marks left in."""
    rows = [line.strip() for line in text.splitlines() if line.strip().startswith("|")]
    if len(rows) < 2:
        return [], []

    def cells(line: str) -> list[str]:
        return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]

    return cells(rows[0]), [cells(r) for r in rows[2:]]


def shortcut_rows(window: QMainWindow) -> list[tuple[str, str, str]]:
    """(where, what, keys) for every action of the window that has a shortcut: the menus'
    first, by their path, then any other action (a view's own)."""
    rows: list[tuple[str, str, str]] = []
    seen: set[int] = set()

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu, f"{path} › {_plain(action.text())}")
            elif not action.isSeparator():
                _add(action, path)

    def _add(action: QAction, where: str) -> None:
        keys = [k for k in action.shortcuts() if not k.isEmpty()]
        if keys and id(action) not in seen:
            seen.add(id(action))
            rows.append((where, _plain(action.text()),
                         ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys)))

    for top in window.menuBar().actions():
        top_menu = top.menu()
        if isinstance(top_menu, QMenu):
            walk(top_menu, _plain(top.text()))
    for action in window.findChildren(QAction):
        parent = action.parent()
        _add(action, parent.objectName() if isinstance(parent, QWidget) and parent.objectName() else "Window")
    return rows


def _plain(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


class _TableDialog(QDialog):
    def __init__(self, title: str, name: str, header: list[str], rows: list[list[str]] | list[tuple[str, str, str]],
                 parent: QWidget | None = None, intro: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName(name)
        self.table = QTableWidget(len(rows), len(header))
        self.table.setObjectName(f"{name}_table")
        self.table.setAccessibleName(title)
        self.table.setHorizontalHeaderLabels(header)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.setObjectName(f"{name}_buttons")
        buttons.setAccessibleName("Close")
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        if intro:
            label = QLabel(intro)
            label.setWordWrap(True)
            layout.addWidget(label)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)

    def rows(self) -> list[list[str]]:
        cells = [[self.table.item(r, c) for c in range(self.table.columnCount())] for r in range(self.table.rowCount())]
        return [[item.text() if item is not None else "" for item in row] for row in cells]


class ShortcutsDialog(_TableDialog):
    def __init__(self, window: QMainWindow) -> None:
        super().__init__("Keyboard shortcuts", "shortcuts_dialog", ["Where", "Command", "Keys"],
                         shortcut_rows(window), window)
        self.resize(620, 560)


class StoreFormatsDialog(_TableDialog):
    """The stores Mnemoscope opens: the README's table, so the two never disagree."""

    def __init__(self, parent: QWidget | None = None) -> None:
        header, rows = markdown_table(section(readme_text(), FORMATS_HEADING))
        plain = [[_unmarked(c) for c in row] for row in rows]
        super().__init__("Store formats", "store_formats_dialog", [_unmarked(h) for h in header], plain, parent,
                         "Besides Mnemoscope's own workspaces (memory.db, Chroma vectors, markdown), it opens:")
        self.resize(1100, 640)


def _unmarked(cell: str) -> str:
    return re.sub(r"\*\*|`", "", cell).replace("\\|", "|")


class HelpDialog(QDialog):
    """The README, rendered: what the CLI does, how stores open, how curation is undone."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Mnemoscope Help")
        self.setObjectName("help_dialog")
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("help_browser")
        self.browser.setAccessibleName("Mnemoscope help")
        self.browser.setOpenExternalLinks(False)
        text = readme_text()
        self.browser.setHtml(_markdown.render(text) if text else "<p>The README is not installed with this copy.</p>")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.setObjectName("help_buttons")
        buttons.setAccessibleName("Close")
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(900, 700)


class AboutDialog(QDialog):
    def __init__(self, settings: QSettings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Mnemoscope")
        self.setObjectName("about_dialog")
        facts = [
            ("Version", version()),
            ("License", license_name()),
            ("Data folder", str(data_folder())),
            ("Settings file", settings.fileName()),
            ("Qt", qVersion()),
            ("PySide6", PySide6.__version__),
            ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ]
        self.facts = dict(facts)
        rows = "".join(f"<tr><td><b>{name}</b></td><td>{html.escape(value)}</td></tr>" for name, value in facts)
        self.text = QLabel(
            "<h2>Mnemoscope</h2><p>See and fix what your AI agents remember.</p>"
            f"<table cellpadding='3'>{rows}</table>"
        )
        self.text.setObjectName("about_text")
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.setObjectName("about_buttons")
        buttons.setAccessibleName("Close")
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)


def install_help_menu(window: QMainWindow, settings: QSettings) -> QMenu:
    """Add the Help menu to a main window; each entry opens its dialog (the last one opened is
    window.help_dialog)."""
    menu = window.menuBar().addMenu("&Help")
    menu.setObjectName("help_menu")

    def show(make: Callable[[], QDialog]) -> None:
        dialog = make()
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        window.help_dialog = dialog  # type: ignore[attr-defined]
        dialog.open()

    entries: tuple[tuple[str, Any, Callable[[], QDialog]], ...] = (
        ("&Mnemoscope Help", QKeySequence.StandardKey.HelpContents, lambda: HelpDialog(window)),
        ("&Keyboard shortcuts", "Ctrl+/", lambda: ShortcutsDialog(window)),
        ("&Store formats", None, lambda: StoreFormatsDialog(window)),
        ("&About Mnemoscope", None, lambda: AboutDialog(settings, window)),
    )
    for text, keys, make in entries:
        action = QAction(text, window)
        action.setObjectName("help_" + _plain(text).split()[-1].lower() + "_action")
        if keys is not None:
            action.setShortcut(QKeySequence(keys))
        action.triggered.connect(lambda _checked=False, m=make: show(m))
        menu.addAction(action)
    return menu
