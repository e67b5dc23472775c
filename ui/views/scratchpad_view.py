"""Scratchpad view: sessions -> keys -> values, reserved key patterns grouped and labelled;
a key's value edited or the key deleted where its store lets a person write the scratchpad."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mnemoscope.storage import Curator, MemoryStore
from mnemoscope.storage.model import ABSENT
from mnemoscope.storage.views.scratchpad import scratchpad
from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QHeaderView,
    QMenu,
    QToolBar,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ..store_session import StoreSession
from .base_view import View

USER_KEYS = "User and agent keys"
KEYS = {Qt.Key.Key_F2: "edit", Qt.Key.Key_Delete: "delete"}  # on the tree, before the window's shortcuts
KEY_ROLE = Qt.ItemDataRole.UserRole + 1  # on a key row's first cell: its ScratchKey
SESSION_ROLE = Qt.ItemDataRole.UserRole + 2  # on a session row's first cell: the session's id


@dataclass(frozen=True)
class ScratchKey:
    """One scratchpad key as the view read it (value: ScratchEntry.value, the conflict check's)."""

    session_id: str
    key: str
    value: str
    label: str = ""


def scratchpad_and_refusals(store: MemoryStore, session_id: str | None) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The view's data (on a worker): the sessions' keys, and why each session's scratchpad
    cannot be written ("" where it can)."""
    sessions = scratchpad(store, session_id)
    return sessions, Curator(store).scratch_refusals([s["id"] for s in sessions])


class ScratchpadView(View):
    """Signals: loaded(int) with the number of sessions shown, failed(object),
    edit_requested(object ScratchKey), delete_requested(object ScratchKey),
    transcript_requested(str) with a session's id."""

    name, title, order = "scratchpad", "Scratchpad", 20
    edit_requested = Signal(object)
    delete_requested = Signal(object)
    transcript_requested = Signal(str)

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.model = QStandardItemModel(0, 4, self)
        self.model.setHorizontalHeaderLabels(["Session / key", "Value", "Updated", "Expires (TTL)"])
        self.tree = QTreeView()
        self.tree.setObjectName("scratchpad_tree")
        self.tree.setAccessibleName("Scratchpad keys")
        self.tree.setModel(self.model)
        self.tree.setUniformRowHeights(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Interactive)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tree.header().resizeSection(0, 320)
        self.tree.selectionModel().currentChanged.connect(lambda *_: self._update_actions())
        self.tree.doubleClicked.connect(self._on_tree_double_clicked)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.tree.customContextMenuRequested.connect(self._on_tree_context_menu)
        self.tree.installEventFilter(self)
        self.edit_key_action = QAction("&Edit value…", self)
        self.edit_key_action.setObjectName("scratch_edit_action")
        self.edit_key_action.triggered.connect(lambda _checked=False: self._request(self.edit_requested))
        self.delete_key_action = QAction("&Delete key", self)
        self.delete_key_action.setObjectName("scratch_delete_action")
        self.delete_key_action.triggered.connect(lambda _checked=False: self._request(self.delete_requested))
        self.toolbar = QToolBar()
        self.toolbar.setObjectName("scratchpad_toolbar")
        self.toolbar.setAccessibleName("Scratchpad key actions")
        self.toolbar.addAction(self.edit_key_action)
        self.toolbar.addAction(self.delete_key_action)
        self.transcript_action = QAction("Read &transcript", self)
        self.transcript_action.setObjectName("scratch_transcript_action")
        self.transcript_action.setToolTip("Read the selected session's conversation in the Transcript tab")
        self.transcript_action.triggered.connect(lambda _checked=False: self._request_transcript())
        self.toolbar.addAction(self.transcript_action)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.tree)
        self._generation = 0
        self._session_id: str | None = None
        self._refusals: dict[str, str] = {}
        self._update_actions()

    def show_session(self, session_id: str | None) -> None:
        """Show the scratchpad of session_id alone (None: of every session), read off the UI thread."""
        self._session_id = session_id
        self.load()

    def read_store(self) -> None:
        """Read again what is shown (the same session filter); the selected key stays selected."""
        self._generation += 1
        generation = self._generation
        self.read(scratchpad_and_refusals, self._session_id,
                  on_result=lambda result: self._on_loaded(generation, *result))

    def forget(self) -> None:
        self._session_id = None
        self._generation += 1
        self._refusals = {}
        self.model.removeRows(0, self.model.rowCount())
        self._update_actions()

    def refusal(self, session_id: str) -> str:
        """Why this session's scratchpad cannot be written here, as last read ("" if it can)."""
        return self._refusals.get(session_id, "Not read yet.")

    def _on_loaded(self, generation: int, sessions: list[dict[str, Any]], refusals: dict[str, str]) -> None:
        if generation != self._generation:
            return
        kept = self.selected_key()
        self._refusals = refusals
        self.model.removeRows(0, self.model.rowCount())
        for session in sessions:
            title = session.get("title") or session["id"]
            head = _row(f"{title}", f"{session['id']} · {session.get('channel') or '–'}", "")
            head[0].setToolTip(session["id"])
            head[0].setData(session["id"], SESSION_ROLE)
            groups: dict[str, list[QStandardItem]] = {}
            for entry in session["entries"]:
                label = entry["label"] if entry["pattern"] else USER_KEYS
                if label not in groups:
                    groups[label] = _row(label, "", "")
                    head[0].appendRow(groups[label])
                value = entry["json"] if entry["json"] is not None else entry["value"]
                shown = json.dumps(value, ensure_ascii=False) if entry["json"] is not None else _one_line(entry["value"])
                updated = (entry["updated_at"] or ABSENT)[:16].replace("T", " ")
                key_row = _row(entry["key"], shown, updated, expiry_text(entry.get("expires_at"), entry.get("ttl_seconds")))
                key_row[0].setData(ScratchKey(session["id"], entry["key"], entry["value"], entry["label"]), KEY_ROLE)
                key_row[1].setToolTip(entry["value"])
                if entry["json"] is not None:
                    _append_json(key_row[0], value)
                elif "\n" in entry["value"]:
                    for line in entry["value"].splitlines():
                        key_row[0].appendRow(_row("", line, ""))
                groups[label][0].appendRow(key_row)
            self.model.appendRow(head)
        self.tree.expandToDepth(1)
        if kept is not None:
            self.select_key(kept.session_id, kept.key)
        self._update_actions()
        self.loaded.emit(len(sessions))

    def keys_under(self, row: int) -> list[str]:
        """The keys shown for session row, across its groups (for tests and copy)."""
        session = self.model.item(row, 0)
        keys = []
        for g in range(session.rowCount()):
            group = session.child(g, 0)
            keys += [group.child(k, 0).text() for k in range(group.rowCount())]
        return keys


    # -- the key a person acts on -------------------------------------------------------------

    def selected_key(self) -> ScratchKey | None:
        """The key of the current row (a row inside a key's value counts as that key)."""
        return self._key_at(self.tree.currentIndex())

    def select_key(self, session_id: str, key: str) -> bool:
        """Make that key's row current; False when it is not shown."""
        for row in range(self.model.rowCount()):
            session = self.model.item(row, 0)
            for g in range(session.rowCount()):
                group = session.child(g, 0)
                for k in range(group.rowCount()):
                    item = group.child(k, 0)
                    found = item.data(KEY_ROLE)
                    if isinstance(found, ScratchKey) and (found.session_id, found.key) == (session_id, key):
                        self.tree.setCurrentIndex(item.index())
                        self.tree.scrollTo(item.index())
                        return True
        return False

    def _key_at(self, index: QModelIndex) -> ScratchKey | None:
        item = self.model.itemFromIndex(index.siblingAtColumn(0)) if index.isValid() else None
        while item is not None:
            found = item.data(KEY_ROLE)
            if isinstance(found, ScratchKey):
                return found
            item = item.parent()
        return None

    def selected_session(self) -> str | None:
        """The session of the current row, or the one session shown."""
        index = self.tree.currentIndex()
        item = self.model.itemFromIndex(index.siblingAtColumn(0)) if index.isValid() else None
        while item is not None:
            if item.data(SESSION_ROLE):
                return str(item.data(SESSION_ROLE))
            item = item.parent()
        return self._session_id

    def _request_transcript(self) -> None:
        session_id = self.selected_session()
        if session_id:
            self.transcript_requested.emit(session_id)

    def _update_actions(self) -> None:
        self.transcript_action.setEnabled(self.selected_session() is not None)
        entry = self.selected_key()
        refusal = self.refusal(entry.session_id) if entry is not None else ""
        for action, verb in ((self.edit_key_action, f"Edit the value of {entry.key if entry else 'a key'}"),
                             (self.delete_key_action, f"Delete {entry.key if entry else 'a key'}")):
            action.setEnabled(entry is not None and not refusal)
            if entry is None:
                action.setToolTip(f"Select a scratchpad key first ({verb.lower()}).")
            elif refusal:
                action.setToolTip(f"The scratchpad cannot be changed here: {refusal}")
            else:
                action.setToolTip(f"{verb} in session {entry.session_id} (one step; Edit > Undo undoes it).")

    def _request(self, signal: Any) -> None:
        entry = self.selected_key()
        if entry is not None and not self.refusal(entry.session_id):
            signal.emit(entry)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """F2 and Delete on the tree act on its key, not on the memories the window's shortcuts
        of the same keys act on."""
        if watched is self.tree and event.type() in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            assert isinstance(event, QKeyEvent)
            verb = KEYS.get(Qt.Key(event.key())) if event.modifiers() == Qt.KeyboardModifier.NoModifier else None
            if verb is not None:
                event.accept()
                if event.type() == QEvent.Type.KeyPress:
                    self._request(self.edit_requested if verb == "edit" else self.delete_requested)
                return True
        return super().eventFilter(watched, event)

    def _on_tree_double_clicked(self, index: QModelIndex) -> None:
        if self._key_at(index) is not None:
            self._request(self.edit_requested)

    def _on_tree_context_menu(self, pos: QPoint) -> None:
        if self._key_at(self.tree.indexAt(pos)) is None:
            return
        menu = QMenu(self)
        menu.setObjectName("scratchpad_menu")
        menu.addAction(self.edit_key_action)
        menu.addAction(self.delete_key_action)
        menu.popup(self.tree.viewport().mapToGlobal(pos))


def _row(*texts: str) -> list[QStandardItem]:
    items = [QStandardItem(t) for t in texts]
    for item in items:
        item.setEditable(False)
    return items


def expiry_text(expires_at: str | None, ttl_seconds: int | None) -> str:
    """When the owner drops a key by itself, as "9 min left (2026-11-27 19:12 UTC)"; "" for never."""
    if not expires_at:
        return ""
    seconds = ttl_seconds or 0
    left = (f"{seconds} s" if seconds < 120 else f"{seconds // 60} min" if seconds < 7200
            else f"{seconds // 3600} h" if seconds < 172800 else f"{seconds // 86400} days")
    return f"{left} left ({expires_at[:16].replace('T', ' ')} UTC)"


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


VIEW = ScratchpadView
