"""What a person does with the memories table besides curating it: the row menu (copy ids,
open the source file, show in the graph or the timeline), the column chooser, wrapping, and
export. A mixin of MainWindow, whose table, model, store, session, settings and views it uses."""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mnemoscope.storage import Kind, Memory, MemoryStore
from mnemoscope.storage.atomic_file import atomic_write_bytes
from mnemoscope.storage.transfer import export_memories, iter_memories
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QFileDialog, QHeaderView, QMenu

from ..models.memory_table_model import COLUMN_KEYS
from ..workers import ASKED

if TYPE_CHECKING:
    from PySide6.QtCore import QSettings, SignalInstance
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QStatusBar

    from ..models.memory_table_model import MemoryTableModel
    from ..store_session import StoreSession
    from ..views.graph_view import GraphView
    from ..views.timeline_view import TimelineView
    from ..widgets.memory_table import MemoryTable

EXPORT_FILTERS = {"jsonl": "JSON Lines (*.jsonl)", "csv": "CSV (*.csv)", "markdown": "Markdown (*.md)"}


class MemoryTableActions:
    """The table's menus, columns and export, for MainWindow."""

    if TYPE_CHECKING:  # what MainWindow provides
        table: MemoryTable
        model: MemoryTableModel | None
        settings: QSettings
        session: StoreSession
        graph: GraphView
        timeline: TimelineView
        exported: SignalInstance
        edit_action: QAction
        promote_action: QAction
        delete_action: QAction
        restore_action: QAction
        reinforce_action: QAction
        export_action: QAction

        @property
        def store(self) -> MemoryStore | None: ...
        def selected_memories(self) -> list[Memory]: ...
        def show_view(self, name: str) -> None: ...
        def statusBar(self) -> QStatusBar: ...

    # -- the row menu ------------------------------------------------------------------------------

    def _on_table_context_menu(self, pos: Any) -> None:
        self.table_menu().popup(self.table.viewport().mapToGlobal(pos))

    def table_menu(self) -> QMenu:
        """The rows' context menu, for the selection: copy ids, open the source file, show in the
        graph or the timeline, then the curation actions."""
        menu = QMenu(self)
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
        open_source.triggered.connect(lambda _checked=False: source is not None and self.open_source_file(source))
        graph = menu.addAction("Show in &graph")
        graph.setObjectName("show_in_graph_action")
        graph.setEnabled(one is not None)
        graph.triggered.connect(lambda _checked=False: one is not None and self.show_in_graph(one))
        timeline = menu.addAction("Show in &timeline")
        timeline.setObjectName("show_in_timeline_action")
        timeline.setEnabled(one is not None)
        timeline.triggered.connect(lambda _checked=False: one is not None and self.show_in_timeline(one))
        menu.addSeparator()
        for action in (self.edit_action, self.promote_action, self.delete_action, self.restore_action,
                       self.reinforce_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.export_action)
        return menu

    def copy_selected_ids(self) -> None:
        ids = [m.id for m in self.selected_memories()]
        if ids:
            QGuiApplication.clipboard().setText("\n".join(ids))
            self.statusBar().showMessage(f"Copied {len(ids)} id{'s' if len(ids) > 1 else ''}", 3_000)

    def source_file_of(self, memory: Memory) -> Path | None:
        """The file a memory is a part of (a markdown bullet's file, another tool's file), if it
        is one that exists; None for a database row or a vector."""
        store = self.store
        if store is None or not memory.source.path or memory.source.kind in (Kind.SQLITE, Kind.CHROMA):
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
        self.graph.set_channel(memory.channel)
        self.show_view("graph")
        self.graph.setFocus()

    def show_in_timeline(self, memory: Memory) -> None:
        """The timeline of the memory's channel, focused, and when the memory was created."""
        self.timeline.set_channels((memory.channel,))
        self.show_view("timeline")
        self.timeline.setFocus()
        self.statusBar().showMessage(f"{memory.id} was created {memory.created_at:%Y-%m-%d %H:%M} ({memory.channel})",
                                     10_000)

    # -- columns and wrapping ------------------------------------------------------------------------

    def _on_header_context_menu(self, pos: Any) -> None:
        self.column_menu().popup(self.table.horizontalHeader().mapToGlobal(pos))

    def column_menu(self) -> QMenu:
        """The header's context menu: a checkable entry per column (the choice is remembered)."""
        menu = QMenu(self)
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
        value = self.settings.value("memories/hidden_columns", [])
        return [value] if isinstance(value, str) else list(value or [])

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
        if self.store is None:
            return
        path, chosen = QFileDialog.getSaveFileName(self, "Export memories", "", ";;".join(EXPORT_FILTERS.values()))
        if path:
            fmt = next((f for f, label in EXPORT_FILTERS.items() if label == chosen), None)
            self.export_to(Path(path), fmt or _format_of_suffix(Path(path)))

    def export_to(self, path: Path, fmt: str) -> None:
        """Write the selected memories, else the table's (the search hits, or every memory the
        filters keep, in its order), to path on a worker, atomically."""
        store, model = self.store, self.model
        if store is None or model is None:
            return
        selected = self.selected_memories()
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
            buffer = io.StringIO()
            memories = listed if listed is not None else iter_memories(store, query)
            n = export_memories(memories, buffer, fmt, title)
            atomic_write_bytes(path, buffer.getvalue().encode("utf-8"))
            return {"path": str(path), "format": fmt, "exported": n}

        def written(result: dict[str, Any]) -> None:
            self.statusBar().showMessage(f"Exported {result['exported']} memories to {result['path']}", 10_000)
            self.exported.emit(result)

        self.statusBar().showMessage(f"Exporting {what} to {path}…")
        self.session.read(write, on_result=written, priority=ASKED)


def _format_of_suffix(path: Path) -> str:
    return {".csv": "csv", ".md": "markdown", ".markdown": "markdown"}.get(path.suffix.lower(), "jsonl")
