"""What a person does with the memories table besides curating it: its model (made when a store
opens), the selection, the row menu (copy ids, open the source file, show in the graph or the
timeline), the column chooser, wrapping, and export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mnemoscope.storage import Kind, Memory, MemoryStore
from mnemoscope.storage.atomic_file import atomic_text_writer
from mnemoscope.storage.transfer import export_memories, iter_memories
from PySide6.QtCore import QItemSelectionModel, QObject, QSettings, Qt, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QFileDialog, QHeaderView, QMenu, QStatusBar, QWidget

from ..models.memory_table_model import COLUMN_KEYS, MemoryTableModel
from ..store_session import StoreSession
from ..views.base_view import View
from ..views.graph_view import GraphView
from ..widgets.memory_table import MemoryTable
from ..workers import ASKED

EXPORT_FILTERS = {"jsonl": "JSON Lines (*.jsonl)", "csv": "CSV (*.csv)", "markdown": "Markdown (*.md)"}
COLUMN_WIDTHS = (0, 78, 72, 72, 84, 84, 64, 58, 58)


class TableActions(QObject):
    """The table's model, selection, menus, columns and export.

    Signals: model_attached(object MemoryTableModel) once a store's model is in the table,
    selection_changed() (the rows selected, or the memories in them, changed),
    view_requested(str) with a view's name, exported(object) with {"path", "format", "exported"}
    once an export is written."""

    model_attached = Signal(object)
    selection_changed = Signal()
    view_requested = Signal(str)
    exported = Signal(object)

    def __init__(self, session: StoreSession, table: MemoryTable, settings: QSettings, status: QStatusBar,
                 views: dict[str, View], parent: QWidget) -> None:
        super().__init__(parent)
        self.session, self.table, self.settings, self.status, self.views = session, table, settings, status, views
        self._widget = parent  # the dialogs' and the menus' parent
        self.model: MemoryTableModel | None = None
        self.row_actions: list[QAction] = []  # the curation actions the row menu lists after its own
        self.export_action = QAction("&Export…", parent)
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.setStatusTip("The selected memories, or the table as filtered, to JSONL, CSV or Markdown")
        self.export_action.triggered.connect(lambda _checked=False: self.choose_export())
        self.wrap_action = QAction("&Wrap content", parent)
        self.wrap_action.setCheckable(True)
        self.wrap_action.setStatusTip("Show each memory's whole content in the table, on as many lines as it needs")
        self.wrap_action.setChecked(bool(settings.value("memories/wrap", False, type=bool)))
        self.wrap_action.toggled.connect(self.set_wrap_content)
        header = table.horizontalHeader()
        header.customContextMenuRequested.connect(self._on_header_context_menu)
        table.customContextMenuRequested.connect(self._on_table_context_menu)

    # -- the model ---------------------------------------------------------------------------------

    def attach(self) -> MemoryTableModel:
        """A model over the session's store in the table, its columns as the person left them."""
        self.detach()
        self.model = model = MemoryTableModel(self.session, parent=self)
        model.refreshed.connect(self.selection_changed.emit)  # rows swapped in place: the selection followed
        self.table.setModel(model)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self.selection_changed.emit())
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate(COLUMN_WIDTHS[1:], start=1):
            header.resizeSection(column, max(width, header.sectionSizeHint(column)))  # its title in full
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self._restore_hidden_columns()
        model.set_wrap(self.wrap_action.isChecked())
        self.set_wrap_content(self.wrap_action.isChecked())
        self.model_attached.emit(model)
        return model

    def detach(self) -> None:
        self.table.setModel(None)
        if self.model is not None:
            self.model.detach()
            self.model.deleteLater()
        self.model = None

    # -- the selection -----------------------------------------------------------------------------

    def selected_memories(self) -> list[Memory]:
        selection = self.table.selectionModel()
        if self.model is None or selection is None:
            return []
        rows = sorted({index.row() for index in selection.selectedRows()})
        return [m for m in (self.model.memory_at(r) for r in rows) if m is not None]

    def select_row(self, row: int) -> None:
        """Select one row alone (whatever modifier keys are down) and make it current."""
        selection = self.table.selectionModel()
        if self.model is None or selection is None:
            return
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        selection.setCurrentIndex(self.model.index(row, 0), flags)

    def select_ids(self, ids: list[str]) -> None:
        """Select the rows of these memories again (a search run again keeps the selection)."""
        selection, model = self.table.selectionModel(), self.model
        rows = [row for row in (model.row_of(i) for i in ids) if row is not None] if model is not None else []
        if selection is None or model is None or not rows:
            return
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        selection.setCurrentIndex(model.index(rows[0], 0), flags | QItemSelectionModel.SelectionFlag.Clear)
        for row in rows[1:]:
            selection.select(model.index(row, 0), flags)

    # -- the row menu ------------------------------------------------------------------------------

    def _on_table_context_menu(self, pos: Any) -> None:
        self.table_menu().popup(self.table.viewport().mapToGlobal(pos))

    def table_menu(self) -> QMenu:
        """The rows' context menu, for the selection: copy ids, open the source file, show in the
        graph or the timeline, then the curation actions."""
        menu = QMenu(self._widget)
        menu.setObjectName("table_context_menu")
        menu.setAccessibleName("Memory actions")
        selected = self.selected_memories()
        one = selected[0] if len(selected) == 1 else None
        source = self.source_file_of(one) if one is not None else None
        copy = menu.addAction("&Copy id" if len(selected) <= 1 else f"&Copy {len(selected)} ids")
        copy.setObjectName("copy_ids_action")
        copy.setEnabled(bool(selected))
        copy.triggered.connect(lambda _checked=False: self.copy_selected_ids())
        open_source = menu.addAction("&Open source file")
        open_source.setObjectName("open_source_action")
        open_source.setEnabled(source is not None)
        open_source.setToolTip(str(source) if source is not None else "This memory is a database row, not a file")
        open_source.triggered.connect(lambda _checked=False: self.open_source_file(source) if source else None)
        graph = menu.addAction("Show in &graph")
        graph.setObjectName("show_in_graph_action")
        graph.setEnabled(one is not None and "graph" in self.views)
        graph.triggered.connect(lambda _checked=False: self.show_in_graph(one) if one is not None else None)
        timeline = menu.addAction("Show in &timeline")
        timeline.setObjectName("show_in_timeline_action")
        timeline.setEnabled(one is not None and "timeline" in self.views)
        timeline.triggered.connect(lambda _checked=False: self.show_in_timeline(one) if one is not None else None)
        menu.addSeparator()
        for action in self.row_actions:
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.export_action)
        return menu

    def copy_selected_ids(self) -> None:
        ids = [m.id for m in self.selected_memories()]
        if ids:
            QGuiApplication.clipboard().setText("\n".join(ids))
            self.status.showMessage(f"Copied {len(ids)} id{'s' if len(ids) > 1 else ''}", 3_000)

    def source_file_of(self, memory: Memory) -> Path | None:
        """The file a memory is a part of (a markdown bullet's file, another tool's file), if it
        is one that exists; None for a database row or a vector."""
        store = self.session.store
        if store is None or not memory.source.path or memory.source.kind in (Kind.SQLITE, Kind.POSTGRESQL, Kind.CHROMA):
            return None
        path = Path(memory.source.path)
        if not path.is_absolute():
            root = getattr(store, "root", None)
            if root is None:
                return None
            path = Path(root) / path
        return path if path.is_file() else None

    def open_source_file(self, path: Path) -> bool:
        return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))

    def show_in_graph(self, memory: Memory) -> None:
        """The graph of the memory's channel, focused."""
        graph = self.views.get("graph")
        if isinstance(graph, GraphView):
            graph.set_channel(memory.channel)
            self.view_requested.emit("graph")
            graph.setFocus()

    def show_in_timeline(self, memory: Memory) -> None:
        """The timeline of the memory's channel, focused, and when the memory was created."""
        timeline = self.views.get("timeline")
        if timeline is None:
            return
        timeline.set_channels((memory.channel,))
        self.view_requested.emit("timeline")
        timeline.setFocus()
        self.status.showMessage(f"{memory.id} was created {memory.created_at:%Y-%m-%d %H:%M} ({memory.channel})",
                                10_000)

    # -- columns and wrapping ------------------------------------------------------------------------

    def _on_header_context_menu(self, pos: Any) -> None:
        self.column_menu().popup(self.table.horizontalHeader().mapToGlobal(pos))

    def column_menu(self) -> QMenu:
        """The header's context menu: a checkable entry per column (the choice is remembered)."""
        menu = QMenu(self._widget)
        menu.setObjectName("column_chooser_menu")
        menu.setAccessibleName("Columns")
        if self.model is None:
            return menu
        for column, key in enumerate(COLUMN_KEYS):
            if key == "score":  # shown while search results are
                continue
            title = self.model.headerData(column, Qt.Orientation.Horizontal)
            action = menu.addAction(str(title))
            action.setObjectName(f"column_{key}_action")
            action.setCheckable(True)
            action.setChecked(not self.table.isColumnHidden(column))
            action.setEnabled(key != "content")  # a row needs its content
            action.toggled.connect(lambda shown, k=key: self.set_column_shown(k, shown))
        return menu

    def set_column_shown(self, key: str, shown: bool) -> None:
        self.table.setColumnHidden(COLUMN_KEYS.index(key), not shown)
        hidden = [k for i, k in enumerate(COLUMN_KEYS) if k != "score" and self.table.isColumnHidden(i)]
        self.settings.setValue("memories/hidden_columns", hidden)

    def hidden_columns(self) -> list[str]:
        return settings_list(self.settings.value("memories/hidden_columns", []))

    def _restore_hidden_columns(self) -> None:
        hidden = set(self.hidden_columns())
        for column, key in enumerate(COLUMN_KEYS):
            if key != "score":
                self.table.setColumnHidden(column, key in hidden)

    def set_wrap_content(self, wrap: bool) -> None:
        """View > Wrap content: each memory's whole content, its row as tall as it needs."""
        self.settings.setValue("memories/wrap", wrap)
        self.table.setWordWrap(wrap)
        mode = QHeaderView.ResizeMode.ResizeToContents if wrap else QHeaderView.ResizeMode.Fixed
        self.table.verticalHeader().setSectionResizeMode(mode)
        if self.model is not None:
            self.model.set_wrap(wrap)

    # -- export --------------------------------------------------------------------------------------

    def choose_export(self) -> None:
        if self.session.store is None:
            return
        path, chosen = QFileDialog.getSaveFileName(self._widget, "Export memories", "",
                                                   ";;".join(EXPORT_FILTERS.values()))
        if path:
            fmt = next((f for f, label in EXPORT_FILTERS.items() if label == chosen), None)
            self.export_to(Path(path), fmt or _format_of_suffix(Path(path)))

    def export_to(self, path: Path, fmt: str) -> None:
        """Write the selected memories, else the table's (the search hits, or every memory the
        filters keep, in its order), to path on a worker, atomically."""
        store, model = self.session.store, self.model
        if store is None or model is None:
            return
        selected = self.selected_memories()
        listed: list[Memory] | None
        if selected:
            what, listed = f"{len(selected)} selected memories", selected
        elif model.label:  # search hits: the rows the table holds
            listed = [m for m in (model.memory_at(r) for r in range(model.rowCount())) if m is not None]
            what = f"{len(listed)} search hits"
        else:
            what, listed = "the table's memories", None
        query = model.query
        title = Path(str(store.location)).name or str(store.location)

        def write(store: MemoryStore) -> dict[str, Any]:
            memories = listed if listed is not None else iter_memories(store, query)
            with atomic_text_writer(path) as out:  # written as read: a 1M-memory export stays flat
                n = export_memories(memories, out, fmt, title)
            return {"path": str(path), "format": fmt, "exported": n}

        def written(result: dict[str, Any]) -> None:
            self.status.showMessage(f"Exported {result['exported']} memories to {result['path']}", 10_000)
            self.exported.emit(result)

        self.status.showMessage(f"Exporting {what} to {path}…")
        self.session.read(write, on_result=written, priority=ASKED)


def settings_list(value: object) -> list[str]:
    """A list QSettings gave back: an INI file stores a one-item list as that item's string."""
    if isinstance(value, str):
        return [value]
    return [str(item) for item in value] if isinstance(value, list) else []


def _format_of_suffix(path: Path) -> str:
    return {".csv": "csv", ".md": "markdown", ".markdown": "markdown"}.get(path.suffix.lower(), "jsonl")
