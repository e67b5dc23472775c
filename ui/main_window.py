"""The main window: layout and wiring.

The store session (store_session.py) owns the open store and runs every storage call on a
worker; the views (views/, found by view_registry.py) read through it; the controllers
(controllers/) do what the menus, the table and the views ask. The window lays them out,
builds the menus from them, and tells the views when the store opened, changed or closed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from mnemoscope.storage import MemoryStore, Outcome, StoreEvent
from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QDockWidget, QLabel, QMainWindow, QMessageBox, QTabWidget

from .controllers.curation_actions import CurationActions
from .controllers.error_reports import ErrorReports
from .controllers.filter_search import FilterSearch
from .controllers.recent_stores import RecentStores
from .controllers.store_opening import StoreOpening
from .controllers.table_actions import TableActions
from .dialogs.check_dialog import CheckDialog
from .dialogs.credentials_dialog import CredentialsDialog
from .dialogs.help_dialogs import install_help_menu
from .dialogs.preferences_dialog import PreferencesDialog, saved_search_mode
from .gc_pauses import freeze_long_lived_objects
from .models.memory_table_model import MemoryTableModel
from .store_session import StoreSession
from .views.base_view import View
from .views.salience_view import SalienceView
from .views.scratchpad_view import ScratchpadView
from .views.transcript_view import TranscriptView
from .views.view_registry import view_classes
from .widgets.detail_panel import DetailPanel, detail_of
from .widgets.memories_pane import MemoriesPane
from .widgets.sidebar import Sidebar, gather_counts
from .workers import ASKED, AT_ONCE

MEMORIES = "memories"  # the first tab: the table (every other tab is a View)


class MainWindow(QMainWindow):
    """Signals: store_opened(object), store_closed(), store_changed(), conflict_shown(object),
    import_finished(object), curated(object), error_shown(str), searched(object SearchResult),
    exported(object) ({"path", "format", "exported"} once an export is written)."""

    store_opened = Signal(object)
    store_closed = Signal()
    store_changed = Signal()
    conflict_shown = Signal(object)
    import_finished = Signal(object)
    curated = Signal(object)
    error_shown = Signal(str)
    searched = Signal(object)
    exported = Signal(object)

    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.settings = settings or QSettings()
        self.store_notes: list[str] = []
        self.setWindowTitle("Mnemoscope")
        self.setAcceptDrops(True)
        self._detail_generation = 0
        self._stale_views: set[str] = set()  # views the store changed under while they were hidden
        self._sidebar_stale = False
        self.session = StoreSession(self)
        self._build_widgets()
        self._build_controllers()
        self._build_menus()
        self._connect_session()
        self._restore_state()
        self._update_actions()
        freeze_long_lived_objects()

    # -- construction ------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.memories = MemoriesPane(saved_search_mode(self.settings))
        self.table = self.memories.table
        self.views = QTabWidget()
        self.views.setObjectName("views")
        self.views.setAccessibleName("Views")
        self.views.addTab(self.memories, "Memories")
        self.view_names = [MEMORIES]
        self.views_by_name: dict[str, View] = {}
        for view_class in view_classes():
            view = view_class(self.session)
            self.views_by_name[view.name] = view
            self.view_names.append(view.name)
            self.views.addTab(view, view.title)
        self.views.currentChanged.connect(lambda _index: self._reload_stale_view())
        self.setCentralWidget(self.views)

        self.sidebar = Sidebar()
        sidebar_dock = self._dock("Store", "sidebar_dock", self.sidebar, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.detail = DetailPanel()
        self.detail.setMinimumWidth(240)
        detail_dock = self._dock("Memory", "detail_dock", self.detail, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([sidebar_dock, detail_dock], [170, 270], Qt.Orientation.Horizontal)
        self.count_label = QLabel("No store open")
        self.count_label.setObjectName("count_label")
        self.statusBar().addPermanentWidget(self.count_label)

    def _dock(self, title: str, name: str, widget: Any, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_controllers(self) -> None:
        status, views = self.statusBar(), self.views_by_name
        self.errors = ErrorReports(status, self)
        self.errors.error_shown.connect(self.error_shown)
        self.opening = StoreOpening(self.session, self.errors, self.count_label, status, self)
        self.opening.import_finished.connect(self.import_finished)
        self.table_actions = TableActions(self.session, self.table, self.settings, status, views, self)
        self.table_actions.view_requested.connect(self.show_view)
        self.table_actions.exported.connect(self.exported)
        self.table_actions.selection_changed.connect(self._on_table_selection_changed)
        self.filter_search = FilterSearch(self.session, self.memories, self.table_actions, views, self.count_label,
                                          status, self)
        self.filter_search.view_requested.connect(self.show_view)
        self.filter_search.searched.connect(self.searched)
        self.curation = CurationActions(self.session, self.table_actions, views, self)
        self.curation.conflict_shown.connect(self.conflict_shown)
        self.curation.error_raised.connect(self.errors.show_error)
        self.table.doubleClicked.connect(lambda _index: self.curation.edit_selected())
        self.table_actions.row_actions = [*self.curation.selection_actions]
        for view in views.values():
            view.failed.connect(self.errors.show_error)
            if isinstance(view, ScratchpadView):
                view.transcript_requested.connect(self.show_transcript)
            view.memory_chosen.connect(self.show_detail)
        self.sidebar.filter_chosen.connect(self._on_sidebar_filter_chosen)
        self.sidebar.transcript_requested.connect(self.show_transcript)

    def _action(self, text: str, slot: Callable[[], Any], shortcut: Any = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_menus(self) -> None:
        opening, curation = self.opening, self.curation
        self.open_action = self._action("&Open…", opening.choose_store, QKeySequence.StandardKey.Open,
                                        "Open a memory store folder")
        self.refresh_action = self._action("&Refresh", self.session.refresh, QKeySequence.StandardKey.Refresh)
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self._action("Open &File…", opening.choose_store_file, "Ctrl+Alt+O",
                                         "Open a memory.db or chroma.sqlite3"))
        self.open_read_only_action = self._action(
            "Open &Read-only…", opening.choose_store_read_only, "Ctrl+Shift+O",
            "Open a memory store without writing a byte of it (every change is refused)")
        file_menu.addAction(self.open_read_only_action)
        self.connect_action = self._action("Connect to &server…", opening.show_connect_dialog, None,
                                           "A store on PostgreSQL, a Chroma server, or both")
        file_menu.addAction(self.connect_action)
        self.recent = RecentStores(self.settings, file_menu.addMenu("Open &Recent"), self)
        self.recent.open_requested.connect(opening.open_recent)
        self.discover_action = self._action("&Discover stores…", opening.discover_stores, "Ctrl+Shift+D",
                                            "Find the memory stores on this machine, every supported tool's")
        file_menu.addAction(self.discover_action)
        file_menu.addAction(self._action("&Import into a workspace…", opening.choose_import))
        file_menu.addAction(self.table_actions.export_action)
        self.credentials_action = self._action("&Credentials…", self.show_credentials, None,
                                               "Passwords and API keys, kept in the OS keyring")
        file_menu.addAction(self.credentials_action)
        file_menu.addSeparator()
        file_menu.addAction(self._action("&Quit", self.close, QKeySequence.StandardKey.Quit))

        edit_menu = self.menuBar().addMenu("&Edit")
        for action in (curation.undo_action, curation.redo_action, None, *curation.selection_actions, None,
                       self._action("&Find", self.filter_search.focus_search, QKeySequence.StandardKey.Find), None,
                       self._action("Pre&ferences…", self.show_preferences, "Ctrl+,", "Theme and default search mode")):
            edit_menu.addSeparator() if action is None else edit_menu.addAction(action)

        tools_menu = self.menuBar().addMenu("&Tools")
        self.check_action = self._action("C&heck store…", self.show_check_dialog, None,
                                         "Compare every copy of every memory; repair what is safe to repair")
        self.check_action.setObjectName("check_store_action")
        for action in (curation.reembed_action, self.check_action,
                       self._action("Store &notes…", self.show_store_notes, None,
                                    "Read-only parts and problems found in the open store"),
                       curation.candidates_action):
            tools_menu.addAction(action)

        view_menu = self.menuBar().addMenu("&View")
        titles = {MEMORIES: "Memories", **{name: view.title for name, view in self.views_by_name.items()}}
        for i, (name, title) in enumerate(titles.items()):
            action = self._action(f"&{title}", partial(self.show_view, name), f"Ctrl+{i + 1}" if i < 9 else None)
            action.setObjectName(f"show_{name}_action")
            view_menu.addAction(action)
        view_menu.addSeparator()
        view_menu.addAction(self.refresh_action)
        view_menu.addAction(self.table_actions.wrap_action)
        for dock in self.findChildren(QDockWidget):
            view_menu.addAction(dock.toggleViewAction())
        self.view_menu = view_menu

        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main_toolbar")
        for action in (self.open_action, self.refresh_action, curation.undo_action, curation.redo_action,
                       *curation.selection_actions[:4]):
            toolbar.addAction(action)
        self.help_menu = install_help_menu(self, self.settings)

    def _connect_session(self) -> None:
        session = self.session
        session.opened.connect(self._on_session_opened)
        session.closed.connect(self._on_session_closed)
        session.changed.connect(self._on_session_changed)
        session.curated.connect(self._on_session_curated)
        session.journal_moved.connect(lambda _steps: self._update_actions())
        session.error.connect(self.errors.show_error)

    # -- what the rest of the program asks of the window ----------------------------------------

    @property
    def store(self) -> MemoryStore | None:
        return self.session.store

    @property
    def model(self) -> MemoryTableModel | None:
        return self.table_actions.model

    def view(self, name: str) -> View:
        """The view named name (a KeyError for a name no view module declares)."""
        return self.views_by_name[name]

    def open_path(self, path: Path | str, **options: Any) -> None:
        """Open a store (a path or a server's URL; options: read_only, vectors, credentials)."""
        self.opening.open_path(path, **options)

    def close_store(self) -> None:
        """Close the open store: the views empty at once; its files close on a worker after the work
        running on it (the session's released signal)."""
        self.table_actions.detach()
        self.session.close()

    def show_view(self, name: str) -> None:
        self.views.setCurrentIndex(self.view_names.index(name))

    def show_transcript(self, session_id: str) -> None:
        """The Transcript tab on one session's conversation."""
        transcript = self.views_by_name.get("transcript")
        if self.store is not None and isinstance(transcript, TranscriptView):
            transcript.show_session(session_id)
            self.show_view("transcript")

    # -- the session's signals ------------------------------------------------------------------

    def _on_session_opened(self, store: MemoryStore) -> None:
        self.opening.opened()
        model = self.table_actions.attach()
        model.total_changed.connect(self._on_model_total_changed)
        model.load_failed.connect(self.errors.show_error)
        self.filter_search.reset()
        self.setWindowTitle(f"Mnemoscope — {store.location}" + (" (read-only)" if store.read_only else ""))
        self.recent.remember(" + ".join(part for part in store.opened_as if part))
        self._populate_sidebar()
        self._sidebar_stale = False  # a change to the store closed before its refresh came back
        self._stale_views.clear()
        for name, view in self.views_by_name.items():
            if view.read_when_shown:  # a costly read (every vector, every memory): made when first shown
                self._stale_views.add(name)
            else:
                view.load()
        self._reload_stale_view()
        self._update_actions()
        self.store_opened.emit(store)

    def _on_session_closed(self) -> None:
        self.table_actions.detach()
        self.filter_search.forget()
        self._detail_generation += 1
        self.sidebar.clear()
        for view in self.views_by_name.values():
            view.clear()
        self.detail.show_nothing()
        self._update_actions()
        self.store_closed.emit()

    def _on_session_changed(self, event: StoreEvent) -> None:
        """Update what the change can touch: rows in place, counts, and the views over them."""
        model = self.model
        if self.store is None or model is None:
            return
        if event.everything:
            self.statusBar().showMessage("The store changed on disk; refreshed.", 5_000)
        if self.filter_search.filters.searching and (event.everything or not event.ids):  # new hits, maybe
            self.filter_search.show_filters()
        else:
            model.refresh(event)
        self._sidebar_stale = True
        structural = event.everything or not event.ids  # sessions, scratchpad, graph or vectors may have changed
        self._stale_views |= {name for name, view in self.views_by_name.items() if view.follows_rows or structural}
        self._reload_stale_view()
        self.store_changed.emit()

    def _reload_stale_view(self) -> None:
        """Read the shown view again if the store changed since it last read: a hidden view waits
        until it is shown, so that a step's reads do not compete with the table's repaint."""
        name = self.view_names[self.views.currentIndex()]
        if name not in self._stale_views or self.store is None:
            return
        self._stale_views.discard(name)
        self.views_by_name[name].load()

    def _on_session_curated(self, outcome: Outcome) -> None:
        for note in outcome.notes:
            self.statusBar().showMessage(note, 10_000)
        self.statusBar().showMessage(f"{outcome.operation} done (journal #{outcome.seq})", 5_000)
        self.curated.emit(outcome)

    def _update_actions(self) -> None:
        self.curation.update_actions()
        has_store = self.store is not None
        self.refresh_action.setEnabled(has_store)
        self.check_action.setEnabled(has_store)

    def _on_model_total_changed(self, total: int) -> None:
        model = self.model
        label = model.label if model is not None and model.label else "memories"
        self.count_label.setText(f"{total:,} {label}")
        self.filter_search.show_empty(total == 0)
        if self._sidebar_stale:  # the store changed: count again once the table has its rows
            self._sidebar_stale = False
            QTimer.singleShot(0, self._populate_sidebar)

    # -- the sidebar and the detail panel ----------------------------------------------------------

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
            self.filter_search.apply_filter(kind, value)

    def _on_table_selection_changed(self) -> None:
        self._update_actions()
        selected = self.table_actions.selected_memories()
        if len(selected) != 1 or self.store is None:
            self._detail_generation += 1
            self.detail.show_nothing()
            return
        self.show_detail(selected[0].id)

    def show_detail(self, memory_id: str) -> None:
        """Read the memory, its journal history and its owner's log on a worker, then show them."""
        self._detail_generation += 1
        generation = self._detail_generation
        self.session.read(detail_of, memory_id, on_result=lambda found: self._on_detail_read(generation, found),
                          priority=ASKED)

    def _on_detail_read(self, generation: int, found: dict[str, Any]) -> None:
        store = self.store
        if generation != self._detail_generation or store is None:
            return
        memory = found["memory"]
        self.detail.show_memory(memory, found["history"], found["promotion"], found["owner_history"])
        salience = self.views_by_name.get("salience")
        if isinstance(salience, SalienceView):
            salience.show_memory(store.settings.salience, memory, store.settings.fact_decay)
        if found["owner_error"] is not None:
            self.errors.show_error(found["owner_error"])

    # -- dialogs -------------------------------------------------------------------------------------

    def show_preferences(self) -> PreferencesDialog:
        """Edit > Preferences…: the theme and the default search mode, applied as they are picked."""
        dialog = PreferencesDialog(self.settings, self.memories.search_mode, self)
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

    def show_check_dialog(self) -> CheckDialog | None:
        """Tools > Check store: the store-wide consistency check, with its repairs as undoable steps."""
        if self.store is None:
            return None
        dialog = CheckDialog(self.session, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.failed.connect(self.errors.show_error)
        self.check_dialog = dialog
        dialog.open()
        return dialog

    def show_store_notes(self) -> None:
        text = ("\n".join(f"• {note}" for note in self.store_notes)
                or "Nothing to note: every part of this store is writable and consistent.")
        box = QMessageBox(QMessageBox.Icon.Information, "Store notes", text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("notes_box")
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.open()

    # -- window state, drag & drop ---------------------------------------------------------------------

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

