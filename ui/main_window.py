"""The main window: layout and wiring.

The store session (store_session.py) owns the open store and runs every storage
call on a worker; the window lays out the views, turns actions into session
calls, and updates the views from the session's signals.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemoscope.storage import (
    AuditEntry,
    Memory,
    MemoryQuery,
    MemoryStore,
    Order,
    Outcome,
    StoreError,
    StoreEvent,
)
from mnemoscope.storage.credentials import Credentials, credential_name
from mnemoscope.storage.errors import UnmappedTableError, WrapsStoresError
from mnemoscope.storage.transfer import import_store
from mnemoscope.storage.views.search import SearchResult, search
from PySide6.QtCore import QByteArray, QItemSelectionModel, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .controllers.table_actions import MemoryTableActions
from .dialogs.candidates_dialog import CandidatesDialog
from .dialogs.check_dialog import CheckDialog
from .dialogs.conflict_dialog import ConflictDialog
from .dialogs.connect_dialog import ConnectDialog, ServerRequest
from .dialogs.credentials_dialog import CredentialsDialog
from .dialogs.discover_dialog import DiscoverDialog
from .dialogs.edit_dialog import EditDialog
from .dialogs.help_dialogs import install_help_menu
from .dialogs.preferences_dialog import PreferencesDialog, saved_search_mode
from .gc_pauses import freeze_long_lived_objects
from .models.memory_table_model import COLUMN_KEYS, MemoryTableModel
from .store_session import Conflict, JournalSteps, StoreSession
from .views.embedding_map_view import EmbeddingMapView
from .views.findings_view import FindingsView
from .views.graph_view import GraphView
from .views.salience_view import SalienceView
from .views.scratchpad_view import ScratchKey, ScratchpadView, ScratchValueDialog
from .views.timeline_view import TimelineView
from .views.transcript_view import TranscriptView
from .widgets.detail_panel import DetailPanel
from .widgets.filter_chips import ActiveFilters, FilterChips
from .widgets.memory_table import MemoryTable
from .widgets.sidebar import Sidebar, gather_counts
from .workers import ASKED, AT_ONCE, Worker, start_worker

MAX_RECENT = 8
VIEWS = ("memories", "timeline", "scratchpad", "salience", "graph", "transcript", "map", "findings")
SEARCH_MODES = ("keyword", "vector", "hybrid")
SEARCH_K = 100  # hits a window search shows ('mnemoscope search --k 100' lists the same)
COLUMN_WIDTHS = (0, 78, 72, 72, 84, 84, 64, 58, 58)


class MainWindow(MemoryTableActions, QMainWindow):
    """Signals: store_opened(object), store_closed(), store_changed(), conflict_shown(object),
    import_finished(object), curated(object), error_shown(str)."""

    store_opened = Signal(object)
    store_closed = Signal()
    store_changed = Signal()
    conflict_shown = Signal(object)
    import_finished = Signal(object)
    curated = Signal(object)
    error_shown = Signal(str)
    searched = Signal(object)  # the SearchResult the table shows
    exported = Signal(object)  # {"path", "format", "exported"} once an export is written

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or QSettings()
        self.model: MemoryTableModel | None = None
        self.last_error = ""
        self._opening = False  # an open is under way: the count label says "Opening …"
        self._count_before_open = "No store open"
        self.store_notes: list[str] = []
        self.setWindowTitle("Mnemoscope")
        self.setAcceptDrops(True)
        self._detail_generation = 0
        self.session = StoreSession(self)
        self.session.opened.connect(self._on_session_opened)
        self.session.closed.connect(self._on_session_closed)
        self.session.changed.connect(self._on_session_changed)
        self.session.curated.connect(self._on_session_curated)
        self.session.journal_moved.connect(self._on_session_journal_moved)
        self.session.conflicted.connect(self._on_session_conflicted)
        self.session.error.connect(self.show_error)
        self._build_widgets()
        self._build_actions()
        self._restore_state()
        self._update_actions()
        freeze_long_lived_objects()

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
        self.search_mode.setCurrentText(saved_search_mode(self.settings))
        self.search_mode.setAccessibleName("Search mode")
        self.search_mode.currentTextChanged.connect(self._on_search_mode_changed)
        self.search_box.setAccessibleName("Search memories")
        self.filters = ActiveFilters()
        self._search_generation = 0
        self.filter_chips = FilterChips()
        self.filter_chips.removed.connect(self.remove_filter)
        self.filter_chips.cleared.connect(self.clear_filters)
        self.empty_label = QLabel()
        self.empty_label.setObjectName("empty_result_label")
        self.empty_label.setAccessibleName("No results")
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.hide()
        self.table = MemoryTable()
        self.table.setObjectName("memories_table")
        self.table.setAccessibleName("Memories")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setSortingEnabled(False)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)  # one line per memory, elided: the detail panel shows it whole
        # A scroll bar appearing with the first rows would narrow the viewport, resize the columns
        # and repaint the table again; a store of memories scrolls anyway.
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setSectionsClickable(True)
        self.table.horizontalHeader().setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.horizontalHeader().customContextMenuRequested.connect(self._on_header_context_menu)
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
        layout.addWidget(self.filter_chips)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.table, 1)
        self.scratchpad = ScratchpadView()
        self.scratchpad.load_failed.connect(self.show_error)
        self.scratchpad.edit_requested.connect(self.edit_scratch_key)
        self.scratchpad.delete_requested.connect(self.delete_scratch_key)
        self.views = QTabWidget()
        self.views.setObjectName("views")
        self.views.setAccessibleName("Views")
        self.timeline = TimelineView()
        self.timeline.load_failed.connect(self.show_error)
        self.timeline.range_chosen.connect(self._on_timeline_range_chosen)
        self.views.addTab(memories, "Memories")
        self.views.addTab(self.timeline, "Timeline")
        self.views.addTab(self.scratchpad, "Scratchpad")
        self.salience = SalienceView()
        self.salience.load_failed.connect(self.show_error)
        self.salience.reinforce_requested.connect(lambda memory_id: self.session.curate("reinforce", memory_id))
        self.views.addTab(self.salience, "Salience")
        self.graph = GraphView()
        self.graph.load_failed.connect(self.show_error)
        self.views.addTab(self.graph, "Graph")
        self.transcript = TranscriptView()
        self.transcript.load_failed.connect(self.show_error)
        self.views.addTab(self.transcript, "Transcript")
        self.map_view = EmbeddingMapView()
        self.map_view.setObjectName("map_view")
        self.map_view.load_failed.connect(self.show_error)
        self.map_view.selection_changed.connect(self._on_map_selection_changed)
        self.map_view.show_in_table_requested.connect(lambda: self.show_view("memories"))
        # The table's "N selected on the map" chip closed: the map's selection ends with it.
        self.filter_chips.removed.connect(lambda key: self.map_view.forget_selection() if key == "ids" else None)
        self.filter_chips.cleared.connect(self.map_view.forget_selection)
        self.views.addTab(self.map_view, "Map")
        self.findings = FindingsView()
        self.findings.setObjectName("findings_view")
        self.findings.load_failed.connect(self.show_error)
        self.findings.redact_requested.connect(
            lambda f: self.session.curate("redact", f.memory_id, f.start, f.end, finding=f.fingerprint))
        self.findings.delete_requested.connect(lambda ids: self.session.curate("delete", ids))
        self.findings.accept_requested.connect(lambda found: self.session.curate("accept_findings", found))
        self.views.addTab(self.findings, "Findings")
        self.scratchpad.transcript_requested.connect(self.show_transcript)
        self.views.currentChanged.connect(lambda _index: self._reload_stale_view())
        self._stale_views: set[str] = set()  # views the store changed under while they were hidden
        self._sidebar_stale = False
        self.setCentralWidget(self.views)

        self.sidebar = Sidebar()
        self.sidebar.filter_chosen.connect(self._on_sidebar_filter_chosen)
        self.sidebar.transcript_requested.connect(self.show_transcript)
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
        self.open_read_only_action = self._action(
            "Open &Read-only…", self.choose_store_read_only, "Ctrl+Shift+O",
            "Open a memory store without writing a byte of it (every change is refused)",
        )
        self.refresh_action = self._action("&Refresh", self.session.refresh, QKeySequence.StandardKey.Refresh)
        self.quit_action = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit)
        self.import_action = self._action("&Import into a workspace…", self.choose_import)
        self.discover_action = self._action("&Discover stores…", self.discover_stores, "Ctrl+Shift+D",
                                            "Find the memory stores on this machine, every supported tool's")
        self.undo_action = self._action("&Undo", lambda: self.session.curate("undo"), QKeySequence.StandardKey.Undo)
        self.redo_action = self._action("&Redo", lambda: self.session.curate("redo"), QKeySequence.StandardKey.Redo)
        self.edit_action = self._action("&Edit memory…", self.edit_selected, "F2")
        self.promote_action = self._action("&Promote to _global", self.promote_selected, "Ctrl+Shift+P")
        self.delete_action = self._action("&Delete", self.delete_selected, QKeySequence.StandardKey.Delete)
        self.restore_action = self._action("Re&store", self.restore_selected, "Ctrl+Shift+R")
        self.reinforce_action = self._action("Re&inforce", self.reinforce_selected, "Ctrl+Shift+I", "One more access now: pin against decay")
        self.find_action = self._action("&Find", self._focus_search, QKeySequence.StandardKey.Find)

        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_file_action)
        file_menu.addAction(self.open_read_only_action)
        self.connect_action = self._action("Connect to &server…", self.show_connect_dialog, None,
                                           "A store on PostgreSQL, a Chroma server, or both")
        file_menu.addAction(self.connect_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addAction(self.discover_action)
        file_menu.addAction(self.import_action)
        self.export_action = self._action("&Export…", self.choose_export, "Ctrl+E",
                                          "The selected memories, or the table as filtered, to JSONL, CSV or Markdown")
        file_menu.addAction(self.export_action)
        self.credentials_action = self._action("&Credentials…", self.show_credentials, None,
                                               "Passwords and API keys, kept in the OS keyring")
        file_menu.addAction(self.credentials_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = self.menuBar().addMenu("&Edit")
        for action in (self.undo_action, self.redo_action, None, self.edit_action, self.promote_action,
                       self.delete_action, self.restore_action, self.reinforce_action, None, self.find_action):
            edit_menu.addSeparator() if action is None else edit_menu.addAction(action)
        self.preferences_action = self._action("Pre&ferences…", self.show_preferences, "Ctrl+,",
                                               "Theme and default search mode")
        edit_menu.addSeparator()
        edit_menu.addAction(self.preferences_action)
        tools_menu = self.menuBar().addMenu("&Tools")
        self.reembed_action = self._action("Re-&embed stale vectors", self.reembed_stale, None,
                                           "Recompute vectors whose memory was edited without an embedder")
        tools_menu.addAction(self.reembed_action)
        self.check_action = self._action("C&heck store…", self.show_check_dialog, None,
                                         "Compare every copy of every memory; repair what is safe to repair")
        self.check_action.setObjectName("check_store_action")
        tools_menu.addAction(self.check_action)
        self.notes_action = self._action("Store &notes…", self.show_store_notes, None,
                                         "Read-only parts and problems found in the open store")
        tools_menu.addAction(self.notes_action)
        self.candidates_action = self._action("Promotion &candidates…", self.show_promotion_candidates, None,
                                              "Project facts that meet the promotion thresholds")
        tools_menu.addAction(self.candidates_action)
        view_menu = self.menuBar().addMenu("&View")
        for i, name in enumerate(VIEWS):
            view_menu.addAction(self._action(f"&{name.title()}", lambda n=name: self.show_view(n), f"Ctrl+{i + 1}"))
        view_menu.addSeparator()
        view_menu.addAction(self.refresh_action)
        self.wrap_action = QAction("&Wrap content", self)
        self.wrap_action.setCheckable(True)
        self.wrap_action.setStatusTip("Show each memory's whole content in the table, on as many lines as it needs")
        self.wrap_action.setChecked(self.settings.value("memories/wrap", False, type=bool))
        self.wrap_action.toggled.connect(self.set_wrap_content)
        view_menu.addAction(self.wrap_action)
        for dock in self.findChildren(QDockWidget):
            view_menu.addAction(dock.toggleViewAction())

        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main_toolbar")
        for action in (self.open_action, self.refresh_action, self.undo_action, self.redo_action,
                       self.edit_action, self.promote_action, self.delete_action, self.restore_action):
            toolbar.addAction(action)
        self._rebuild_recent_menu()
        self.help_menu = install_help_menu(self, self.settings)

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

    def choose_store_read_only(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a memory store read-only")
        if path:
            self.open_path(Path(path), read_only=True)

    def discover_stores(self, roots: list[Path] | None = None) -> DiscoverDialog:
        """File > Discover stores…: the stores found (on a worker); the one chosen opens here."""
        dialog = DiscoverDialog(self, roots)
        dialog.setObjectName("discover_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open_requested.connect(self.open_path)
        dialog.open()
        return dialog

    def show_preferences(self) -> PreferencesDialog:
        """Edit > Preferences…: the theme and the default search mode, applied as they are picked."""
        dialog = PreferencesDialog(self.settings, self.search_mode, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_credentials(self) -> CredentialsDialog:
        """File > Credentials…: the secrets kept in the OS keyring (the dialog reads it on workers)."""
        dialog = CredentialsDialog(self)
        dialog.setObjectName("credentials_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def open_path(self, path: Path | str, *, read_only: bool = False, vectors: str | None = None,
                  credentials: Credentials | None = None) -> None:
        """Open a store (a path or a server's URL) off the UI thread; errors reach the person as
        one message."""
        if not self._opening:
            self._count_before_open = self.count_label.text()
        self._opening = True
        self.count_label.setText(f"Opening {path}" + (f" + {vectors}" if vectors else "") + "…")
        self.session.open(path, read_only=read_only, vectors=vectors, credentials=credentials)

    def show_connect_dialog(self) -> ConnectDialog:
        """File > Connect to server…: a PostgreSQL store, a Chroma server, or both."""
        dialog = ConnectDialog(self)
        dialog.setObjectName("connect_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.connect_requested.connect(self.open_server)
        dialog.open()
        return dialog

    def open_server(self, request: ServerRequest) -> None:
        credentials = self.session.new_credentials()
        if request.password is not None:
            credentials.offer(credential_name(request.url), request.password, remember=request.remember)
        self.open_path(request.url, read_only=request.read_only, vectors=request.vectors, credentials=credentials)

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
        dialog = self._progress_dialog(label)

        def run(worker: Worker) -> Any:
            # Signals emitted here are queued to the UI thread.
            return work(lambda done, total: worker.signals.yielded.emit((done, total)), lambda: worker.cancelled)

        def progress(tick: tuple[int, int]) -> None:
            _show_progress(dialog, label, tick)

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
        """Re-embed stale vectors on the session's write worker, with progress and cancel."""
        if self.store is None:
            return
        label = "Re-embedding stale vectors:"
        dialog = self._progress_dialog(label)
        worker = self.session.curate("reembed", on_progress=lambda tick: _show_progress(dialog, label, tick),
                                     on_finished=dialog.close)
        if worker is not None:
            dialog.canceled.connect(worker.cancel)
            dialog.open()

    def show_check_dialog(self) -> CheckDialog | None:
        """Tools > Check store: the store-wide consistency check, with its repairs as undoable steps."""
        if self.store is None:
            return None
        dialog = CheckDialog(self.session, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.failed.connect(self.show_error)
        self.check_dialog = dialog
        dialog.open()
        return dialog

    def _progress_dialog(self, label: str) -> QProgressDialog:
        dialog = QProgressDialog(label, "Cancel", 0, 100, self)
        dialog.setWindowTitle("Mnemoscope")
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        return dialog

    # -- the session's signals ------------------------------------------------------------------

    @property
    def store(self) -> MemoryStore | None:
        return self.session.store

    def _on_session_opened(self, store: MemoryStore) -> None:
        self._opening = False
        self.model = MemoryTableModel(store, parent=self)
        self.model.total_changed.connect(self._on_model_total_changed)
        self.model.load_failed.connect(self.show_error)
        self.model.refreshed.connect(self._on_model_refreshed)
        self.table.setModel(self.model)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._on_selection_changed())
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column, width in enumerate(COLUMN_WIDTHS[1:], start=1):
            header.resizeSection(column, width)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self._restore_hidden_columns()
        self.model.set_wrap(self.wrap_action.isChecked())
        self.set_wrap_content(self.wrap_action.isChecked())
        self.search_box.clear()
        self.filters = ActiveFilters(search_mode=self.search_mode.currentText())
        self._show_filters()
        self.setWindowTitle(f"Mnemoscope — {store.location}" + (" (read-only)" if store.read_only else ""))
        self._remember_recent(" + ".join(part for part in store.opened_as if part))
        self._populate_sidebar()
        self._stale_views.clear()
        self._sidebar_stale = False  # a change to the store closed before its refresh came back
        self.scratchpad.load(store)
        self.salience.load(store)
        self.timeline.load(store)
        self.graph.load(store)
        self.transcript.load(store)
        self._stale_views.add("map")  # made when first shown: it reads every vector
        self._stale_views.add("findings")  # scanned when first shown: it reads every memory
        self._reload_stale_view()
        self._update_actions()
        self.store_opened.emit(store)

    def close_store(self) -> None:
        """Close the open store (after the work running on it); the views empty."""
        self._detach_model()
        self.session.close()

    def _detach_model(self) -> None:
        self.table.setModel(None)
        if self.model is not None:
            self.model.detach()
            self.model.deleteLater()
        self.model = None

    def _on_session_closed(self) -> None:
        self._detach_model()
        self.filters = ActiveFilters(search_mode=self.filters.search_mode)
        self.filter_chips.show_filters(self.filters)
        self.empty_label.hide()
        self._detail_generation += 1
        self.sidebar.clear()
        self.scratchpad.clear()
        self.salience.clear()
        self.timeline.clear()
        self.graph.clear()
        self.transcript.clear()
        self.map_view.clear()
        self.detail.show_nothing()
        self._update_actions()
        self.store_closed.emit()

    def refresh(self) -> None:
        """Look at the store again (files edited by hand too); the views follow its event."""
        self.session.refresh()

    def _on_session_changed(self, event: StoreEvent) -> None:
        """Update what the change can touch: rows in place, counts, and the views over them."""
        store = self.store
        if store is None or self.model is None:
            return
        if event.everything:
            self.statusBar().showMessage("The store changed on disk; refreshed.", 5_000)
        if self.filters.searching and (event.everything or not event.ids):  # new memories may be hits now
            self._show_filters()
        else:
            self.model.refresh()
        self._sidebar_stale = True
        self._stale_views |= {"salience", "timeline", "findings"}
        if event.everything or not event.ids:  # sessions, scratchpad or graph may have changed
            self._stale_views |= {"scratchpad", "graph", "transcript", "map"}
        self._reload_stale_view()
        self.store_changed.emit()

    def _reload_stale_view(self) -> None:
        """Read the shown view again if the store changed since it last read: a hidden view waits
        until it is shown, so that a step's reads do not compete with the table's repaint."""
        name = VIEWS[self.views.currentIndex()]
        store = self.store
        if name not in self._stale_views or store is None:
            return
        self._stale_views.discard(name)
        if name == "timeline":
            self.timeline.reload()
        elif name == "salience":
            self.salience.load(store)
        elif name == "scratchpad":
            self.scratchpad.reload(store)
        elif name == "graph":
            self.graph.load(store)
        elif name == "transcript":
            self.transcript.load(store, self.transcript.session_id())
        elif name == "map":
            self.map_view.load(store)
        elif name == "findings":
            self.findings.load(store)

    def _on_model_refreshed(self) -> None:
        """Rows were swapped in place: the selection followed them; show what it holds now."""
        self._on_selection_changed()

    def _on_session_curated(self, outcome: Outcome) -> None:
        for note in outcome.notes:
            self.statusBar().showMessage(note, 10_000)
        self.statusBar().showMessage(f"{outcome.operation} done (journal #{outcome.seq})", 5_000)
        self.curated.emit(outcome)

    def _on_session_journal_moved(self, _steps: JournalSteps) -> None:
        self._update_actions()

    def show_view(self, name: str) -> None:
        self.views.setCurrentIndex(VIEWS.index(name))

    def show_transcript(self, session_id: str) -> None:
        """The Transcript tab on one session's conversation."""
        if self.store is not None:
            self.transcript.show_session(session_id)
            self.show_view("transcript")

    # -- sidebar ---------------------------------------------------------------------------------

    def _populate_sidebar(self) -> None:
        self.session.read(gather_counts, on_result=self._on_sidebar_counts, priority=AT_ONCE)

    def _on_sidebar_counts(self, data: dict[str, Any]) -> None:
        notes = data["notes"]
        if notes and notes != self.store_notes:
            more = f" (+{len(notes) - 1} more: Tools > Store notes)" if len(notes) > 1 else ""
            self.statusBar().showMessage(notes[0] + more, 30_000)
        self.store_notes = notes
        self.sidebar.show_counts(data)

    def _on_sidebar_filter_chosen(self, kind: str, value: Any) -> None:
        if self.model is not None:
            self.apply_filter(kind, value)

    def apply_filter(self, kind: str, value: Any) -> None:
        """Add a filter to the active ones: a sidebar entry (kind, channel, layer or status: it
        replaces that axis's earlier one; "all" clears the sidebar's), or "ids" (the memories
        selected on the embedding map). A session entry opens its scratchpad instead."""
        assert self.model is not None and self.store is not None
        if kind == "session":
            self.scratchpad.load(self.store, value)
            self.show_view("scratchpad")
            return
        if kind == "all":
            self.scratchpad.load(self.store)
        self.set_filters(self.filters.with_ids(value) if kind == "ids" else self.filters.with_sidebar(kind, value))

    def _on_map_selection_changed(self, ids: list[str]) -> None:
        """The map stays in view (to refine the selection); the table lists what it selects."""
        if self.model is None:
            return
        self.apply_filter("ids", ids)
        if ids:
            self.statusBar().showMessage(
                f"{len(ids):,} selected on the map: the Memories table lists them (Show in table).", 10_000)

    def _on_timeline_range_chosen(self, start: Any, end: Any) -> None:
        """A click on a timeline bin adds its dates to the active filters; its memories list
        oldest first."""
        if self.model is None:
            return
        self.set_filters(self.filters.with_dates(start, end), order=(Order.CREATED, False))
        self.show_view("memories")

    def remove_filter(self, key: str) -> None:
        """A chip's close button: the table shows the other filters' memories."""
        self.set_filters(self.filters.without(key))

    def clear_filters(self) -> None:
        self.set_filters(ActiveFilters(search_mode=self.filters.search_mode))

    def set_filters(self, filters: ActiveFilters, order: tuple[Order, bool] | None = None) -> None:
        """Make filters the active ones (order: the table's order and direction, else kept)."""
        self.filters = filters
        self._show_filters(order)

    def _show_filters(self, order: tuple[Order, bool] | None = None) -> None:
        """Show the active filters as chips, point the other views at their channel, and load the
        table: the store's memories they keep, or the search over those."""
        filters = self.filters
        self.filter_chips.show_filters(filters)
        if self.search_box.text().strip() != filters.search_text:
            blocked = self.search_box.blockSignals(True)
            self.search_box.setText(filters.search_text)
            self.search_box.blockSignals(blocked)
        channels = filters.channels()  # the timeline and the graph show the channel too
        self.timeline.set_channels(channels)
        self.graph.set_channel(channels[0] if len(channels) == 1 else None)
        if self.model is None or self.store is None:
            return
        current = self.model.query
        wanted, descending = order or (current.order, current.descending)
        query = filters.query(wanted, descending, self.store.settings.salience)
        self.empty_label.hide()
        self.table.setColumnHidden(COLUMN_KEYS.index("score"), not filters.searching)
        self._search_generation += 1
        if not filters.searching:
            self.model.set_query(query)
            return
        generation = self._search_generation
        self.count_label.setText(f"Searching “{filters.search_text}”…")
        self.session.read(search, filters.search_text, mode=filters.search_mode, k=SEARCH_K, query=query,
                          on_result=lambda result: self._on_search_result(generation, query, result),
                          priority=ASKED)

    # -- searching ---------------------------------------------------------------------------------

    def _focus_search(self) -> None:
        self.search_box.setFocus()
        self.search_box.selectAll()

    def _on_search_box_text_changed(self, text: str) -> None:
        if not text.strip() and self.filters.searching:
            self.set_filters(self.filters.with_search("", self.search_mode.currentText()))

    def _on_search_box_return_pressed(self) -> None:
        if self.store is None or self.model is None:
            return
        self.set_filters(self.filters.with_search(self.search_box.text(), self.search_mode.currentText()))

    def _on_search_mode_changed(self, mode: str) -> None:
        """Another mode runs the shown search again in it."""
        if self.filters.searching and self.model is not None:
            self.set_filters(self.filters.with_search(self.filters.search_text, mode))
        else:
            self.filters = self.filters.with_search(self.filters.search_text, mode)

    def _on_search_result(self, generation: int, query: MemoryQuery, result: SearchResult) -> None:
        if self.model is None or generation != self._search_generation:
            return
        for notice in result.notices:
            self.statusBar().showMessage(notice, 10_000)
        scores = {hit.memory.id: hit.score for hit in result.hits}
        meaning = f"Score: {result.score_meaning}"
        selected = [m.id for m in self.selected_memories()]
        self.model.show_list([hit.memory for hit in result.hits], f"{result.mode} search", scores, meaning)
        self._select_ids(selected)
        self.model.setHeaderData(COLUMN_KEYS.index("score"), Qt.Orientation.Horizontal, meaning,
                                 Qt.ItemDataRole.ToolTipRole)
        self.searched.emit(result)

    def _select_ids(self, ids: list[str]) -> None:
        """Select the rows of these memories again (a search run again keeps the selection)."""
        selection = self.table.selectionModel()
        rows = [row for row in (self.model.row_of(i) for i in ids) if row is not None] if self.model else []
        if selection is None or not rows:
            return
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        selection.setCurrentIndex(self.model.index(rows[0], 0), flags | QItemSelectionModel.SelectionFlag.Clear)
        for row in rows[1:]:
            selection.select(self.model.index(row, 0), flags)

    def _show_empty(self, empty: bool) -> None:
        """An empty table says so, and names the filters that left it empty."""
        if empty:
            what = "No memories match " + (f"“{self.filters.search_text}”" if self.filters.searching else "these filters")
            active = self.filters.describe()
            self.empty_label.setText(f"{what}. Active filters: {active}. Remove a filter above, or Clear all."
                                     if self.filters.chips() else f"{what}: the store holds no active memories.")
        self.empty_label.setVisible(empty)

    def _on_header_sort_indicator_changed(self, column: int, order: Qt.SortOrder) -> None:
        if self.model is None:
            return
        if self.filters.searching:  # search hits stay in score order, as the CLI lists them
            self.statusBar().showMessage("Search results are listed by score; remove the search to sort.", 5_000)
            return
        self.model.sort(column, order)

    # -- selection and curation ---------------------------------------------------------------------

    def selected_memories(self) -> list[Memory]:
        if self.model is None or self.table.selectionModel() is None:
            return []
        rows = sorted({index.row() for index in self.table.selectionModel().selectedRows()})
        return [m for m in (self.model.memory_at(r) for r in rows) if m is not None]

    def select_row(self, row: int) -> None:
        """Select one row alone (whatever modifier keys are down) and make it current."""
        if self.model is None or self.table.selectionModel() is None:
            return
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(self.model.index(row, 0), flags)

    def _on_selection_changed(self) -> None:
        self._update_actions()
        selected = self.selected_memories()
        if len(selected) != 1 or self.store is None:
            self._detail_generation += 1
            self.detail.show_nothing()
            return
        self.show_detail(selected[0].id)

    def show_detail(self, memory_id: str) -> None:
        """Read the memory, its journal history and its owner's log on a worker, then show them."""
        self._detail_generation += 1
        generation = self._detail_generation
        self.session.read(_detail_of, memory_id, on_result=lambda found: self._on_detail_read(generation, found),
                          priority=ASKED)

    def _on_detail_read(self, generation: int, found: dict[str, Any]) -> None:
        if generation != self._detail_generation or self.store is None:
            return
        memory = found["memory"]
        self.detail.show_memory(memory, found["history"], found["promotion"], found["owner_history"])
        self.salience.show_memory(self.store.settings.salience, memory, self.store.settings.fact_decay)
        if found["owner_error"] is not None:
            self.show_error(found["owner_error"])

    def edit_selected(self) -> None:
        selected = self.selected_memories()
        if len(selected) != 1 or self.store is None:
            return
        memory = selected[0]
        editable = self.store.capabilities(memory.id).editable_fields
        dialog = EditDialog(memory, editable, self)
        dialog.setObjectName("edit_dialog")
        dialog.accepted.connect(lambda: self.session.edit(memory, dialog.changes()))
        dialog.open()

    def _on_session_conflicted(self, conflict: Conflict) -> None:
        """The store changed under an edit: show what changed and let the person choose."""
        box = ConflictDialog(conflict, self)
        box.apply_chosen.connect(lambda c: self.session.edit(c.now, c.changes))
        box.keep_chosen.connect(lambda _c: self.session.refresh())
        box.open()
        self.conflict_shown.emit(box)

    def _selection(self) -> tuple[list[str], dict[str, str]]:
        """The selected memories' ids and the revisions they were read at."""
        selected = self.selected_memories()
        return [m.id for m in selected], {m.id: m.revision for m in selected}

    def promote_selected(self) -> None:
        """Promote the selection as one step; memories below the store's promotion thresholds
        are named first and promoted only when the person says so (forced, and journaled so)."""
        ids, revisions = self._selection()
        store = self.store
        if not ids or store is None:
            return
        thresholds = store.settings.promotion
        unmet = {m.id: failed for m in self.selected_memories() if (failed := store.promotion_shortfall(m))}
        if not unmet:
            self.session.curate("promote", ids, expected_revision=revisions)
            return
        listed = "\n".join(f"{memory_id}: {', '.join(failed)}" for memory_id, failed in list(unmet.items())[:10])
        more = f"\n... and {len(unmet) - 10} more" if len(unmet) > 10 else ""
        self._ask(
            "confirm_promote_box", "Promote below the thresholds",
            f"{len(unmet)} of the {len(ids)} selected memories do not meet this store's promotion thresholds "
            f"(confidence >= {thresholds.confidence:g}, accesses >= {thresholds.access_count}, "
            f"conversations >= {thresholds.conversations}):\n\n{listed}{more}\n\n"
            "Promote anyway? The journal records which thresholds were missed; you can undo it.",
            lambda: self.session.curate("promote", ids, expected_revision=revisions, force=True),
        )

    def delete_selected(self) -> None:
        """Delete the selection as one step; several memories are confirmed first (no nested loop)."""
        ids, revisions = self._selection()
        if not ids:
            return
        if len(ids) == 1:
            self.session.curate("delete", ids, expected_revision=revisions)
            return
        self._ask("confirm_delete_box", "Delete memories", f"Delete {len(ids)} memories? You can undo this.",
                  lambda: self.session.curate("delete", ids, expected_revision=revisions))

    def _ask(self, name: str, title: str, text: str, on_yes: Callable[[], None]) -> None:
        """A window-modal Yes/No question (no nested event loop); on_yes runs on Yes."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setObjectName(name)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(_result: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                on_yes()

        box.finished.connect(answered)
        box.open()

    def edit_scratch_key(self, entry: ScratchKey) -> None:
        """The value of one scratchpad key in a dialog; Save sets it as one step, checked against
        the value the view read."""
        dialog = ScratchValueDialog(entry, self)
        dialog.setObjectName("scratch_value_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def saved() -> None:
            if dialog.changed():
                self.session.curate("set_scratch", entry.session_id, entry.key, dialog.value(), expected=entry.value)

        dialog.accepted.connect(saved)
        dialog.open()

    def delete_scratch_key(self, entry: ScratchKey) -> None:
        self._ask("confirm_delete_scratch_box", "Delete scratchpad key",
                  f"Delete {entry.key} from the scratchpad of session {entry.session_id}? You can undo this.",
                  lambda: self.session.curate("delete_scratch", entry.session_id, entry.key, expected=entry.value))

    def reinforce_selected(self) -> None:
        ids, revisions = self._selection()
        if ids:
            self.session.curate("reinforce", ids, expected_revision=revisions)

    def restore_selected(self) -> None:
        ids, _ = self._selection()
        if ids:
            self.session.curate("restore", ids)

    def _update_actions(self) -> None:
        has_store = self.store is not None
        selected = self.selected_memories() if has_store else []
        next_undo, next_redo = self.session.steps  # as the session last read the journal
        if self.store is not None and self.store.read_only:
            next_undo = next_redo = None
        self.undo_action.setEnabled(next_undo is not None)
        self.undo_action.setText(f"&Undo {next_undo.operation}" if next_undo else "&Undo")
        self.redo_action.setEnabled(next_redo is not None)
        self.redo_action.setText(f"&Redo {next_redo.operation}" if next_redo else "&Redo")
        caps = [self.store.capabilities(m.id) for m in selected] if self.store is not None else []
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
        self.reembed_action.setEnabled(has_store and not self.store.read_only)
        self.check_action.setEnabled(has_store)
        self.candidates_action.setEnabled(has_store)

    # -- messages -------------------------------------------------------------------------------------

    def show_promotion_candidates(self) -> CandidatesDialog | None:
        """Tools > Promotion candidates: the qualifying facts (read on a worker), promoted as one step."""
        if self.store is None:
            return None
        dialog = CandidatesDialog(self.store, self)
        dialog.setObjectName("candidates_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.load_failed.connect(self.show_error)
        dialog.promote_requested.connect(lambda ids: self.session.curate("promote", ids))
        dialog.open()
        return dialog

    def show_store_notes(self) -> None:
        text = "\n".join(f"• {note}" for note in self.store_notes) or "Nothing to note: every part of this store is writable and consistent."
        box = QMessageBox(QMessageBox.Icon.Information, "Store notes", text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("notes_box")
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    def show_error(self, exc: BaseException) -> None:
        """The one channel every error reaches the person through. A folder that is no store
        but holds some (a home folder) offers those instead."""
        if isinstance(exc, WrapsStoresError):
            self.last_error = str(exc)
            self._restore_count_label()
            dialog = self.discover_stores([Path(exc.folder)])
            dialog.status.setText(f"{exc.folder} is no memory store itself. Looking for the stores inside it…")
            self.error_shown.emit(str(exc))
            return
        if isinstance(exc, UnmappedTableError):  # a SQLite file no format reads: offer to map a table
            from .dialogs.table_mapping_dialog import TableMappingDialog

            self.last_error = str(exc)
            self._restore_count_label()
            self.mapping_dialog = TableMappingDialog(Path(exc.path), self)
            self.mapping_dialog.setObjectName("table_mapping_dialog")
            self.mapping_dialog.mapping_accepted.connect(self.open_path)
            self.mapping_dialog.open()
            self.error_shown.emit(str(exc))
            return
        if isinstance(exc, StoreError):
            text = str(exc)
        else:
            text = f"Internal error ({type(exc).__name__}: {exc}). Please report it."
            trace = getattr(exc, "__traceback_text__", "")
            if trace:
                print(trace, file=sys.stderr)
        self.last_error = text
        self._restore_count_label()
        self.statusBar().showMessage(text, 15_000)
        box = QMessageBox(QMessageBox.Icon.Warning, "Mnemoscope", text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("error_box")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.error_shown.emit(text)

    def _restore_count_label(self) -> None:
        """After an error: an open that failed leaves the label as it was before it (not "Opening …")."""
        if self._opening:
            self._opening = False
            self.count_label.setText("No store open" if self.store is None else self._count_before_open)
        elif self.store is None:
            self.count_label.setText("No store open")

    def _on_model_total_changed(self, total: int) -> None:
        label = self.model.label if self.model is not None and self.model.label else "memories"
        self.count_label.setText(f"{total:,} {label}")
        self._show_empty(total == 0)
        if self._sidebar_stale:  # the store changed: count again once the table has its rows
            self._sidebar_stale = False
            QTimer.singleShot(0, self._populate_sidebar)

    # -- recent stores, window state, drag & drop ------------------------------------------------------

    def recent_stores(self) -> list[str]:
        value = self.settings.value("recent_stores", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _remember_recent(self, entry: str) -> None:
        """entry: a path, a server's URL (never with its secret), or "STORE_URL + VECTORS_URL"."""
        recent = [entry] + [p for p in self.recent_stores() if p != entry]
        self.settings.setValue("recent_stores", recent[:MAX_RECENT])
        self._rebuild_recent_menu()

    def open_recent(self, entry: str) -> None:
        target, _, vectors = entry.partition(" + ")
        self.open_path(target if "://" in target else Path(target), vectors=vectors or None)

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        for i, path in enumerate(self.recent_stores()):
            action = self.recent_menu.addAction(f"&{i + 1} {path}")
            action.triggered.connect(lambda _checked=False, p=path: self.open_recent(p))
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



def run_app(*args: Any, **kwargs: Any) -> int:
    """The bootstrap lives in ui/app.py; kept here for callers that import it from the window."""
    from .app import run_app as run

    return run(*args, **kwargs)


def _show_progress(dialog: QProgressDialog, label: str, tick: tuple[int, int]) -> None:
    done, total = tick
    dialog.setLabelText(f"{label} {done:,} of {total:,}")
    dialog.setValue(int(100 * done / total) if total else 100)


def _detail_of(store: MemoryStore, memory_id: str) -> dict[str, Any]:
    """What the detail panel shows of one memory (runs on a worker)."""
    memory = store.get(memory_id)
    history: list[AuditEntry] = store.journal.history(target=memory.id, limit=50)
    owner_error: StoreError | None = None
    try:
        owner_history = store.owner_history(memory.id)
    except StoreError as exc:
        owner_error, owner_history = exc, []
    return {"memory": memory, "history": history, "promotion": store.settings.promotion.check(memory),
            "owner_history": owner_history, "owner_error": owner_error}
