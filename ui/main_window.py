"""The main window: open a store, browse its memories, curate them, undo."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QByteArray, QItemSelectionModel, QSettings, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressDialog,
    QTableView,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mnemoscope.storage import (
    ConflictError,
    Curator,
    Kind,
    Layer,
    Memory,
    MemoryQuery,
    MemoryStore,
    Order,
    Status,
    StoreError,
    open_store,
)
from mnemoscope.storage.views.search import search
from mnemoscope.storage.transfer import import_store

from .detail_panel import DetailPanel
from .edit_dialog import EditDialog
from .graph_view import GraphView
from .memory_model import COLUMNS, MemoryTableModel
from .salience_view import SalienceView
from .scratchpad_view import ScratchpadView
from .timeline_view import TimelineView
from .workers import Worker, start_worker

MAX_RECENT = 8
WATCH_INTERVAL_MS = 2_000
VIEWS = ("memories", "timeline", "scratchpad", "salience", "graph")
SEARCH_MODES = ("keyword", "vector", "hybrid")
FilterRole = Qt.ItemDataRole.UserRole + 2
COLUMN_WIDTHS = (0, 78, 72, 72, 84, 84, 64, 58, 58)


class MainWindow(QMainWindow):
    """Signals: store_opened(object), store_closed(), store_changed(), curated(object), error_shown(str)."""

    store_opened = Signal(object)
    store_closed = Signal()
    store_changed = Signal()
    conflict_shown = Signal(object)
    import_finished = Signal(object)
    curated = Signal(object)
    error_shown = Signal(str)

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or QSettings()
        self.store: MemoryStore | None = None
        self.model: MemoryTableModel | None = None
        self.last_error = ""
        self.store_notes: list[str] = []
        self.setWindowTitle("Mnemoscope")
        self.setAcceptDrops(True)
        self._change_token = ""
        self._watching = False
        self._restore_after_reload: tuple[list[str], int, int] | None = None
        self.watch_timer = QTimer(self)
        self.watch_timer.setInterval(WATCH_INTERVAL_MS)
        self.watch_timer.timeout.connect(self._on_watch_timer_timeout)
        self.watch_timer.start()
        self._build_widgets()
        self._build_actions()
        self._restore_state()
        self._update_actions()

    # -- construction ------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.search_box = QLineEdit(placeholderText="Search memories (Ctrl+F)…")
        self.search_box.setObjectName("search_box")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(self._on_search_box_return_pressed)
        self.search_box.textChanged.connect(self._on_search_box_text_changed)
        self.search_mode = QComboBox()
        self.search_mode.setObjectName("search_mode")
        self.search_mode.addItems(SEARCH_MODES)
        self.search_mode.setCurrentText("hybrid")
        self.table = QTableView()
        self.table.setObjectName("memories_table")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(False)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionsClickable(True)
        self.table.horizontalHeader().sortIndicatorChanged.connect(self._on_header_sort_indicator_changed)
        self.table.doubleClicked.connect(lambda _index: self.edit_selected())
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu)

        bar = QHBoxLayout()
        bar.addWidget(self.search_box, 1)
        bar.addWidget(self.search_mode)
        memories = QWidget()
        layout = QVBoxLayout(memories)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)
        self.scratchpad = ScratchpadView()
        self.scratchpad.load_failed.connect(self.show_error)
        self.views = QTabWidget()
        self.views.setObjectName("views")
        self.timeline = TimelineView()
        self.timeline.load_failed.connect(self.show_error)
        self.timeline.range_chosen.connect(self._on_timeline_range_chosen)
        self.views.addTab(memories, "Memories")
        self.views.addTab(self.timeline, "Timeline")
        self.views.addTab(self.scratchpad, "Scratchpad")
        self.salience = SalienceView()
        self.salience.load_failed.connect(self.show_error)
        self.salience.reinforce_requested.connect(lambda memory_id: self._curate("reinforce", memory_id))
        self.views.addTab(self.salience, "Salience")
        self.graph = GraphView()
        self.graph.load_failed.connect(self.show_error)
        self.views.addTab(self.graph, "Graph")
        self.setCentralWidget(self.views)

        self.sidebar = QTreeWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setHeaderLabels(["Store", "Count"])
        self.sidebar.itemClicked.connect(self._on_sidebar_item_clicked)
        sidebar_dock = QDockWidget("Store", self)
        sidebar_dock.setObjectName("sidebar_dock")
        sidebar_dock.setWidget(self.sidebar)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, sidebar_dock)

        self.detail = DetailPanel()
        detail_dock = QDockWidget("Memory", self)
        detail_dock.setObjectName("detail_dock")
        detail_dock.setWidget(self.detail)
        self.detail.setMinimumWidth(240)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, detail_dock)
        self.resizeDocks([sidebar_dock, detail_dock], [170, 270], Qt.Orientation.Horizontal)

        self.count_label = QLabel("No store open")
        self.count_label.setObjectName("count_label")
        self.statusBar().addPermanentWidget(self.count_label)

    def _action(self, text: str, slot: Callable[[], Any], shortcut: Any = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action("&Open…", self.choose_store, QKeySequence.StandardKey.Open, "Open a memory store folder")
        self.open_file_action = self._action("Open &File…", self.choose_store_file, "Ctrl+Alt+O", "Open a memory.db or chroma.sqlite3")
        self.refresh_action = self._action("&Refresh", self.refresh, QKeySequence.StandardKey.Refresh)
        self.quit_action = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.import_action = self._action("&Import into a workspace…", self.choose_import, "Ctrl+Shift+O")
        self.undo_action = self._action("&Undo", lambda: self._curate("undo"), QKeySequence.StandardKey.Undo)
        self.redo_action = self._action("&Redo", lambda: self._curate("redo"), QKeySequence.StandardKey.Redo)
        self.edit_action = self._action("&Edit memory…", self.edit_selected, "F2")
        self.promote_action = self._action("&Promote to _global", self.promote_selected, "Ctrl+Shift+P")
        self.delete_action = self._action("&Delete", self.delete_selected, QKeySequence.StandardKey.Delete)
        self.restore_action = self._action("Re&store", self.restore_selected, "Ctrl+Shift+R")
        self.reinforce_action = self._action("Re&inforce", self.reinforce_selected, "Ctrl+Shift+I", "One more access now: pin against decay")
        self.find_action = self._action("&Find", self._focus_search, QKeySequence.StandardKey.Find)

        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_file_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addAction(self.import_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        for action in (self.undo_action, self.redo_action, None, self.edit_action, self.promote_action,
                       self.delete_action, self.restore_action, self.reinforce_action, None, self.find_action):
            edit_menu.addSeparator() if action is None else edit_menu.addAction(action)
        tools_menu = self.menuBar().addMenu("&Tools")
        self.reembed_action = self._action("Re-&embed stale vectors", self.reembed_stale, None,
                                           "Recompute vectors whose memory was edited without an embedder")
        tools_menu.addAction(self.reembed_action)
        self.notes_action = self._action("Store &notes…", self.show_store_notes, None,
                                         "Read-only parts and problems found in the open store")
        tools_menu.addAction(self.notes_action)
        view_menu = self.menuBar().addMenu("&View")
        for i, name in enumerate(VIEWS):
            view_menu.addAction(self._action(f"&{name.title()}", lambda n=name: self.show_view(n), f"Ctrl+{i + 1}"))
        view_menu.addSeparator()
        view_menu.addAction(self.refresh_action)
        for dock in self.findChildren(QDockWidget):
            view_menu.addAction(dock.toggleViewAction())

        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main_toolbar")
        for action in (self.open_action, self.refresh_action, self.undo_action, self.redo_action,
                       self.edit_action, self.promote_action, self.delete_action, self.restore_action):
            toolbar.addAction(action)
        self._rebuild_recent_menu()

    # -- opening -------------------------------------------------------------------------------

    def choose_store(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a memory store")
        if path:
            self.open_path(Path(path))

    def choose_store_file(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Open a memory store file", "", "Memory stores (memory.db chroma.sqlite3 *.db *.sqlite *.sqlite3);;All files (*)"
        )
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> None:
        """Open a store off the UI thread; errors reach the person as one message."""
        self.count_label.setText(f"Opening {path}…")
        start_worker(open_store, path, on_result=self._on_store_opened, on_error=self.show_error)

    def choose_import(self) -> None:
        src = QFileDialog.getExistingDirectory(self, "Import memories from")
        if not src:
            return
        dest = QFileDialog.getExistingDirectory(self, "Into the workspace (a new or native workspace folder)")
        if dest:
            self.import_into(Path(src), Path(dest))

    def run_with_progress(
        self,
        label: str,
        work: Callable[[Callable[[int, int], None], Callable[[], bool]], Any],
        on_result: Callable[[Any], None],
        on_error: Callable[[BaseException], None] | None = None,
    ) -> QProgressDialog:
        """Run work(progress, cancelled) on a worker behind a progress dialog with Cancel."""
        dialog = QProgressDialog(label, "Cancel", 0, 100, self)
        dialog.setWindowTitle("Mnemoscope")
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)

        def run(worker: Worker) -> Any:
            # Signals emitted here are queued to the UI thread.
            return work(lambda done, total: worker.signals.yielded.emit((done, total)), lambda: worker.cancelled)

        def progress(tick: tuple[int, int]) -> None:
            done, total = tick
            dialog.setLabelText(f"{label} {done:,} of {total:,}")
            dialog.setValue(int(100 * done / total) if total else 100)

        def finished(result: Any) -> None:
            dialog.close()
            on_result(result)

        def failed(exc: BaseException) -> None:
            dialog.close()
            self.show_error(exc)
            if on_error is not None:
                on_error(exc)

        worker = start_worker(run, on_result=finished, on_error=failed, on_progress=progress, with_worker=True)
        dialog.canceled.connect(worker.cancel)
        dialog.open()
        return dialog

    def import_into(self, src: Path, dest: Path) -> None:
        """Import src into the native workspace dest off the UI thread, with progress and cancel."""

        def done(summary: Any) -> None:
            self.statusBar().showMessage(
                f"Imported {summary.imported} memories into {dest}; {summary.already_present} were already there.",
                15_000,
            )
            self.import_finished.emit(summary)

        self.import_dialog = self.run_with_progress(
            f"Importing {src.name}:",
            lambda progress, cancelled: import_store(src, dest, progress=progress, cancelled=cancelled),
            done,
            self.import_finished.emit,
        )

    def reembed_stale(self) -> None:
        """Re-embed stale vectors off the UI thread, with progress and cancel."""
        store = self.store
        if store is not None:
            self.run_with_progress(
                "Re-embedding stale vectors:",
                lambda progress, cancelled: Curator(store).reembed(progress=progress, cancelled=cancelled),
                lambda outcome: self._after_curation("reembed", outcome),
            )

    def _on_store_opened(self, store: MemoryStore) -> None:
        self.close_store()
        self.store = store
        self.model = MemoryTableModel(store, parent=self)
        self.model.total_changed.connect(self._on_model_total_changed)
        self.model.load_failed.connect(self.show_error)
        self.model.chunk_loaded.connect(self._on_model_chunk_loaded)
        self._change_token = store.change_token()
        self.table.setModel(self.model)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_selection_changed())
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate(COLUMN_WIDTHS[1:], start=1):
            header.resizeSection(column, width)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.model.set_query(MemoryQuery())
        self.setWindowTitle(f"Mnemoscope — {store.root}")
        self._remember_recent(store.root)
        self._populate_sidebar()
        self.scratchpad.load(store)
        self.salience.load(store)
        self.timeline.load(store)
        self.graph.load(store)
        self._update_actions()
        self.store_opened.emit(store)

    def close_store(self) -> None:
        if self.store is None:
            return
        self.table.setModel(None)
        if self.model is not None:
            self.model.detach()
            self.model.deleteLater()
        # Let reads already running on the store finish before it closes.
        QThreadPool.globalInstance().waitForDone(5_000)
        self.model = None
        self.store.close()
        self.store = None
        self.sidebar.clear()
        self.scratchpad.clear()
        self.salience.clear()
        self.timeline.clear()
        self.graph.clear()
        self.detail.show_nothing()
        self.store_closed.emit()

    def refresh(self) -> None:
        """Read the store again, keeping the selection and the scroll position."""
        if self.store is None or self.model is None:
            return
        selected = [m.id for m in self.selected_memories()]
        scroll = self.table.verticalScrollBar().value()
        rows_shown = self.model.rowCount()
        self.store.refresh_copies()
        self._change_token = self.store.change_token()
        if selected or scroll:
            self._restore_after_reload = (selected, scroll, rows_shown)
        self.model.reload()
        self._populate_sidebar()
        self.scratchpad.load(self.store)
        self.salience.load(self.store)
        self.timeline.reload()
        self.graph.reload()

    def _on_model_chunk_loaded(self, _start: int) -> None:
        """After a reload, bring back the rows and selection the person had."""
        pending = self._restore_after_reload
        if pending is None or self.model is None:
            return
        selected, scroll, rows_shown = pending
        while self.model.rowCount() < rows_shown and self.model.canFetchMore():
            self.model.fetchMore()
        rows = [r for r in (self.model.row_of(i) for i in selected) if r is not None]
        if len(rows) < len(selected) and any(self.model.memory_at(r) is None for r in range(self.model.rowCount())):
            return  # the selected rows may be in a chunk still on its way
        self._restore_after_reload = None
        if rows:
            self.table.clearSelection()
            for row in rows:
                self.table.selectionModel().select(
                    self.model.index(row, 0),
                    QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
                )
        self.table.verticalScrollBar().setValue(scroll)

    def _on_watch_timer_timeout(self) -> None:
        """Poll the store's change token off the UI thread; reload when an agent wrote."""
        store = self.store
        if store is None or self._watching:
            return
        self._watching = True

        def done(token: str) -> None:
            self._watching = False
            if store is self.store and token != self._change_token:
                self.statusBar().showMessage("The store changed on disk; refreshed.", 5_000)
                self.refresh()
                self.store_changed.emit()

        def failed(exc: BaseException) -> None:
            self._watching = False

        start_worker(store.change_token, on_result=done, on_error=failed)

    def show_view(self, name: str) -> None:
        self.views.setCurrentIndex(VIEWS.index(name))

    # -- sidebar ---------------------------------------------------------------------------------

    def _populate_sidebar(self) -> None:
        store = self.store
        if store is None:
            return

        def gather() -> dict[str, Any]:
            counts = store.counts()
            sessions = store.sessions()
            notes = [
                f"{s.label} is read-only: {s.capabilities().read_only_reason}"
                for s in store.foreign
                if s.capabilities().read_only
            ]
            return {"counts": counts, "sessions": sessions, "notes": notes + store.problems()}

        start_worker(gather, on_result=self._on_sidebar_counts, on_error=self.show_error)

    def _on_sidebar_counts(self, data: dict[str, Any]) -> None:
        self.store_notes = data["notes"]
        if self.store_notes:
            more = f" (+{len(self.store_notes) - 1} more: Tools > Store notes)" if len(self.store_notes) > 1 else ""
            self.statusBar().showMessage(self.store_notes[0] + more, 30_000)
        self.sidebar.clear()
        counts = data["counts"]
        everything = QTreeWidgetItem(["All memories", str(counts["statuses"].get("active", 0))])
        everything.setData(0, FilterRole, ("all", None))
        self.sidebar.addTopLevelItem(everything)
        for title, key, kind in (("Kinds", "kinds", "kind"), ("Channels", "channels", "channel"),
                                 ("Layers", "layers", "layer"), ("Status", "statuses", "status")):
            group = QTreeWidgetItem([title, ""])
            self.sidebar.addTopLevelItem(group)
            for value, n in sorted(counts[key].items()):
                item = QTreeWidgetItem([value, str(n)])
                item.setData(0, FilterRole, (kind, value))
                group.addChild(item)
            group.setExpanded(True)
        if data["sessions"]:
            group = QTreeWidgetItem(["Sessions", str(len(data["sessions"]))])
            self.sidebar.addTopLevelItem(group)
            for session in data["sessions"]:
                item = QTreeWidgetItem([session.title or session.id, str(session.turn_count)])
                item.setToolTip(0, f"{session.id} ({session.channel})")
                item.setData(0, FilterRole, ("session", session.id))
                group.addChild(item)
        self.sidebar.resizeColumnToContents(0)

    def _on_sidebar_item_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        spec = item.data(0, FilterRole)
        if spec and self.model is not None:
            self.apply_filter(*spec)

    def apply_filter(self, kind: str, value: str | None) -> None:
        """Filter the views by one sidebar entry (kind, channel, layer, status or session)."""
        assert self.model is not None and self.store is not None
        if kind == "session":
            self.scratchpad.load(self.store, value)
            self.show_view("scratchpad")
            return
        channels = (value,) if kind == "channel" else ()
        self.timeline.set_channels(channels)
        self.graph.set_channel(value if kind == "channel" else None)
        if kind == "all":
            self.scratchpad.load(self.store)
        base = replace(MemoryQuery(), order=self.model.query.order, descending=self.model.query.descending)
        if kind == "kind":
            base = replace(base, kinds=(Kind(value),))
        elif kind == "channel":
            base = replace(base, channels=(value,))
        elif kind == "layer":
            base = replace(base, layers=(Layer(value),))
        elif kind == "status":
            base = replace(base, statuses=(Status(value),))
        self.search_box.clear()
        self.model.set_query(base)

    def _on_timeline_range_chosen(self, start: Any, end: Any) -> None:
        """A click on a timeline bin lists that bin's memories, oldest first."""
        if self.model is None:
            return
        self.search_box.clear()
        query = MemoryQuery(statuses=(), since=start, until=end, order=Order.CREATED, descending=False)
        self.model.set_query(query)
        self.show_view("memories")
        self.statusBar().showMessage(f"Memories created {start:%Y-%m-%d} – {end:%Y-%m-%d}", 10_000)

    # -- searching ---------------------------------------------------------------------------------

    def _focus_search(self) -> None:
        self.search_box.setFocus()
        self.search_box.selectAll()

    def _on_search_box_text_changed(self, text: str) -> None:
        if not text and self.model is not None and self.model.query.contains:
            self.model.set_query(replace(self.model.query, contains=None))

    def _on_search_box_return_pressed(self) -> None:
        text = self.search_box.text().strip()
        if self.store is None or self.model is None:
            return
        if not text:
            self.model.set_query(replace(self.model.query, contains=None))
            return
        mode = self.search_mode.currentText()
        if mode == "keyword":
            # Keyword search filters the windowed view in the store itself.
            self.model.set_query(replace(self.model.query, contains=text))
            return
        store = self.store
        start_worker(
            lambda: search(store, text, mode=mode, k=100, query=MemoryQuery(channels=self.model.query.channels)),
            on_result=self._on_search_result,
            on_error=self.show_error,
        )

    def _on_search_result(self, result: Any) -> None:
        if self.model is None:
            return
        for notice in result.notices:
            self.statusBar().showMessage(notice, 10_000)
        self.model.show_list([hit.memory for hit in result.hits], f"{result.mode} search")

    def _on_header_sort_indicator_changed(self, column: int, order: Qt.SortOrder) -> None:
        if self.model is not None:
            self.model.sort(column, order)

    # -- selection and curation ---------------------------------------------------------------------

    def selected_memories(self) -> list[Memory]:
        if self.model is None or self.table.selectionModel() is None:
            return []
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [m for m in (self.model.memory_at(r) for r in rows) if m is not None]

    def select_row(self, row: int) -> None:
        self.table.clearSelection()
        self.table.selectRow(row)

    def _on_selection_changed(self) -> None:
        self._update_actions()
        selected = self.selected_memories()
        if len(selected) != 1 or self.store is None:
            self.detail.show_nothing()
            return
        self.show_detail(selected[0].id)

    def show_detail(self, memory_id: str) -> None:
        assert self.store is not None
        try:
            memory = self.store.get(memory_id)
        except StoreError as exc:
            self.show_error(exc)
            return
        history = self.store.journal.history(target=memory.id, limit=50)
        try:
            owner_history = self.store.owner_history(memory.id)
        except StoreError as exc:
            self.show_error(exc)
            owner_history = []
        self.detail.show_memory(memory, history, self.store.settings.promotion.check(memory), owner_history)
        self.salience.show_memory(self.store.settings.salience, memory)

    def _on_table_context_menu(self, pos: Any) -> None:
        menu = QMenu(self)
        for action in (self.edit_action, self.promote_action, self.delete_action, self.restore_action,
                       self.reinforce_action):
            menu.addAction(action)
        menu.popup(self.table.viewport().mapToGlobal(pos))

    def edit_selected(self) -> None:
        selected = self.selected_memories()
        if len(selected) != 1 or self.store is None:
            return
        memory = selected[0]
        editable = self.store.capabilities(memory.id).editable_fields
        dialog = EditDialog(memory, editable, self)
        dialog.setObjectName("edit_dialog")
        dialog.accepted.connect(lambda: self._apply_edit(memory, dialog.changes()))
        dialog.open()

    def _apply_edit(self, memory: Memory, changes: dict[str, Any]) -> None:
        if not changes or self.store is None:
            return
        try:
            outcome = Curator(self.store).edit(memory.id, expected_revision=memory.revision, **changes)
        except ConflictError:
            self._resolve_conflict(memory, changes)
            return
        except StoreError as exc:
            self.show_error(exc)
            return
        self._after_curation("edit", outcome)

    def _resolve_conflict(self, seen: Memory, changes: dict[str, Any]) -> None:
        """The store changed under an edit: show what changed and let the person choose."""
        assert self.store is not None
        try:
            now = self.store.get(seen.id)
        except StoreError as exc:
            self.show_error(exc)
            return
        lines = []
        for name in ("content", "tags", "layer", "channel", "salience", "access_count", "status"):
            before, current = getattr(seen, name), getattr(now, name)
            if before != current:
                lines.append(f"{name}: when you opened it: {_plain(before)!s}\n   now in the store: {_plain(current)!s}")
        yours = "\n".join(f"{k}: {_plain(v)!s}" for k, v in changes.items())
        box = QMessageBox(self)
        box.setObjectName("conflict_box")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("The memory changed")
        box.setText(f"{seen.id} changed since you opened it (another program wrote to the store).")
        box.setInformativeText("Apply your edit over the new version, or keep the store's version?")
        box.setDetailedText("Changed in the store:\n" + ("\n".join(lines) or "(its record)") + "\n\nYour edit:\n" + yours)
        mine = box.addButton("Apply my edit", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Keep the store's", QMessageBox.ButtonRole.RejectRole)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def chosen(_result: int) -> None:
            if box.clickedButton() is mine:
                self._curate("edit", now.id, expected_revision=now.revision, **changes)
            else:
                self.refresh()

        box.finished.connect(chosen)
        box.open()
        self.conflict_shown.emit(box)

    def _selection(self) -> tuple[list[str], dict[str, str]]:
        """The selected memories' ids and the revisions they were read at."""
        selected = self.selected_memories()
        return [m.id for m in selected], {m.id: m.revision for m in selected}

    def promote_selected(self) -> None:
        ids, revisions = self._selection()
        if ids:
            self._curate("promote", ids, expected_revision=revisions)

    def delete_selected(self) -> None:
        selected = self.selected_memories()
        if not selected:
            return
        if len(selected) > 1:
            answer = QMessageBox.question(self, "Delete memories", f"Delete {len(selected)} memories? You can undo this.")
            if answer != QMessageBox.StandardButton.Yes:
                return
        ids, revisions = self._selection()
        self._curate("delete", ids, expected_revision=revisions)

    def reinforce_selected(self) -> None:
        ids, revisions = self._selection()
        if ids:
            self._curate("reinforce", ids, expected_revision=revisions)

    def restore_selected(self) -> None:
        ids, _ = self._selection()
        if ids:
            self._curate("restore", ids)

    def _curate(self, operation: str, *args: Any, **kwargs: Any) -> None:
        """Run one curation step through the store's journal, then show its effect."""
        if self.store is None:
            return
        curator = Curator(self.store)
        method = {"edit": curator.edit, "promote": curator.promote, "delete": curator.delete,
                  "restore": curator.restore, "reinforce": curator.reinforce,
                  "undo": curator.undo, "redo": curator.redo}[operation]
        try:
            outcome = method(*args, **kwargs)
        except StoreError as exc:
            self.show_error(exc)
            return
        self._after_curation(operation, outcome)

    def _after_curation(self, operation: str, outcome: Any) -> None:
        for note in outcome.notes:
            self.statusBar().showMessage(note, 10_000)
        self.statusBar().showMessage(f"{operation} done (journal #{outcome.seq})", 5_000)
        self.refresh()
        self._update_actions()
        self.curated.emit(outcome)

    def _update_actions(self) -> None:
        has_store = self.store is not None
        selected = self.selected_memories() if has_store else []
        journal = self.store.journal if has_store else None
        next_undo = journal.next_to_undo() if journal else None
        next_redo = journal.next_to_redo() if journal else None
        self.undo_action.setEnabled(next_undo is not None)
        self.undo_action.setText(f"&Undo {next_undo.operation}" if next_undo else "&Undo")
        self.redo_action.setEnabled(next_redo is not None)
        self.redo_action.setText(f"&Redo {next_redo.operation}" if next_redo else "&Redo")
        caps = [self.store.capabilities(m.id) for m in selected] if has_store else []
        writable = bool(caps) and all(not c.read_only for c in caps)
        self.edit_action.setEnabled(len(caps) == 1 and bool(caps[0].editable_fields))
        self.promote_action.setEnabled(writable and all(c.can_promote for c in caps))
        self.delete_action.setEnabled(writable)
        self.restore_action.setEnabled(writable)
        self.reinforce_action.setEnabled(writable and all(c.can_reinforce for c in caps))
        reasons = sorted({c.read_only_reason for c in caps if c.read_only and c.read_only_reason})
        for action in (self.edit_action, self.delete_action, self.restore_action):
            action.setToolTip(f"Read-only: {'; '.join(reasons)}" if reasons else action.text().replace("&", ""))
        self.refresh_action.setEnabled(has_store)

    # -- messages -------------------------------------------------------------------------------------

    def show_store_notes(self) -> None:
        text = "\n".join(f"• {note}" for note in self.store_notes) or "Nothing to note: every part of this store is writable and consistent."
        box = QMessageBox(QMessageBox.Icon.Information, "Store notes", text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("notes_box")
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    def show_error(self, exc: BaseException) -> None:
        """The one channel every error reaches the person through."""
        if isinstance(exc, StoreError):
            text = str(exc)
        else:
            text = f"Internal error ({type(exc).__name__}: {exc}). Please report it."
            trace = getattr(exc, "__traceback_text__", "")
            if trace:
                print(trace, file=sys.stderr)
        self.last_error = text
        self.count_label.setText("No store open" if self.store is None else self.count_label.text())
        self.statusBar().showMessage(text, 15_000)
        box = QMessageBox(QMessageBox.Icon.Warning, "Mnemoscope", text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("error_box")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_shown.emit(text)

    def _on_model_total_changed(self, total: int) -> None:
        label = self.model.label if self.model is not None and self.model.label else "memories"
        self.count_label.setText(f"{total:,} {label}")

    # -- recent stores, window state, drag & drop ------------------------------------------------------

    def recent_stores(self) -> list[str]:
        value = self.settings.value("recent_stores", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _remember_recent(self, path: Path) -> None:
        recent = [str(path)] + [p for p in self.recent_stores() if p != str(path)]
        self.settings.setValue("recent_stores", recent[:MAX_RECENT])
        self._rebuild_recent_menu()

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        for i, path in enumerate(self.recent_stores()):
            action = self.recent_menu.addAction(f"&{i + 1} {path}")
            action.triggered.connect(lambda _checked=False, p=path: self.open_path(Path(p)))
        self.recent_menu.setEnabled(bool(self.recent_stores()))

    def _restore_state(self) -> None:
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        if isinstance(state, QByteArray):
            self.restoreState(state)

    def closeEvent(self, event: QCloseEvent) -> None:
        self.watch_timer.stop()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.sync()
        self.close_store()
        super().closeEvent(event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        urls = [u for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.open_path(Path(urls[0].toLocalFile()))
            event.acceptProposedAction()


def run_app(
    path: Path, settings_file: Path | None = None, screenshot: Path | None = None, view: str = "memories"
) -> int:
    """Open the window on a store; with screenshot, render it offscreen to a PNG and exit."""
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("Mnemoscope")
    app.setOrganizationName("Mnemoscope")
    settings = QSettings(str(settings_file), QSettings.Format.IniFormat) if settings_file else QSettings()
    window = MainWindow(settings)
    if screenshot is not None:
        window.resize(1280, 800)
    window.show()
    if screenshot is not None:
        waiting = {"rows", view}

        def ready(what: str) -> None:
            if what == "rows" and "rows" in waiting:
                window.select_row(0)  # a selected memory fills the detail panel and the curve
            waiting.discard(what)
            if not waiting:
                waiting.add("done")
                QTimer.singleShot(300, lambda: (window.grab().save(str(screenshot)), window.close(), app.quit()))

        def on_opened(_store: Any) -> None:
            assert window.model is not None
            window.show_view(view)
            window.model.chunk_loaded.connect(lambda _start: ready("rows"))
            window.scratchpad.loaded.connect(lambda _n: ready("scratchpad"))
            window.salience.loaded.connect(lambda: ready("salience"))
            window.timeline.loaded.connect(lambda: ready("timeline"))
            window.graph.loaded.connect(lambda: ready("graph"))
            waiting.discard("memories")

        window.store_opened.connect(on_opened)
        window.error_shown.connect(lambda _text: (window.close(), app.exit(2)))
    window.open_path(path)
    return app.exec()


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return value.value if hasattr(value, "value") else value
