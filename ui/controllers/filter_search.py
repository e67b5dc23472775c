"""The active filters and the search: the sidebar's entries, the timeline's bins, the map's
selection and the search box all become one ActiveFilters, shown as chips and loaded into the
table (a query, or the search over it, run through the session)."""

from __future__ import annotations

from typing import Any

from mnemoscope.storage import MemoryQuery, Order
from mnemoscope.storage.views.search import SearchResult, counted, search
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QStatusBar

from ..models.memory_table_model import COLUMN_KEYS
from ..store_session import StoreSession
from ..views.base_view import View
from ..views.embedding_map_view import EmbeddingMapView
from ..views.scratchpad_view import ScratchpadView
from ..views.timeline_view import TimelineView
from ..widgets.filter_chips import ActiveFilters
from ..widgets.memories_pane import MemoriesPane
from ..workers import ASKED
from .table_actions import TableActions

SEARCH_K = 100  # hits a window search shows ('mnemoscope search --k 100' lists the same)


class FilterSearch(QObject):
    """The active filters and the search over them.

    Signals: searched(object SearchResult) once the table shows a search's hits,
    view_requested(str) with the name of the view to show."""

    searched = Signal(object)
    view_requested = Signal(str)

    def __init__(self, session: StoreSession, pane: MemoriesPane, table_actions: TableActions, views: dict[str, View],
                 count_label: QLabel, status: QStatusBar, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session, self.pane, self.table_actions, self.views = session, pane, table_actions, views
        self.count_label, self.status = count_label, status
        self.filters = ActiveFilters()
        self._generation = 0
        pane.search_box.returnPressed.connect(self._on_search_box_return_pressed)
        pane.search_box.textChanged.connect(self._on_search_box_text_changed)
        pane.search_mode.currentTextChanged.connect(self._on_search_mode_changed)
        pane.filter_chips.removed.connect(self.remove_filter)
        pane.filter_chips.cleared.connect(self.clear_filters)
        pane.table.horizontalHeader().sortIndicatorChanged.connect(self._on_header_sort_indicator_changed)
        for view in views.values():
            if isinstance(view, TimelineView):
                view.range_chosen.connect(self._on_timeline_range_chosen)
            if isinstance(view, EmbeddingMapView):
                view.selection_changed.connect(self._on_map_selection_changed)
                view.show_in_table_requested.connect(lambda: self.view_requested.emit("memories"))
                # The table's "N selected on the map" chip closed: the map's selection ends with it.
                pane.filter_chips.removed.connect(
                    lambda key, v=view: v.forget_selection() if key == "ids" else None)
                pane.filter_chips.cleared.connect(view.forget_selection)

    # -- the filters -----------------------------------------------------------------------------

    def reset(self) -> None:
        """A store opened: no search, no filter; the mode chosen stays."""
        self.pane.search_box.clear()
        self.filters = ActiveFilters(search_mode=self.pane.search_mode.currentText())
        self.show_filters()

    def forget(self) -> None:
        """The store closed: no filter, nothing empty to explain."""
        self.filters = ActiveFilters(search_mode=self.filters.search_mode)
        self.pane.filter_chips.show_filters(self.filters)
        self.pane.empty_label.hide()

    def apply_filter(self, kind: str, value: Any) -> None:
        """Add a filter to the active ones: a sidebar entry (kind, channel, layer or status: it
        replaces that axis's earlier one; "all" clears the sidebar's), "tag" (a tag and its
        memories' ids) or "ids" (the memories selected on the embedding map). A session entry
        opens its scratchpad instead."""
        if self.table_actions.model is None or self.session.store is None:
            return
        scratchpad = self.views.get("scratchpad")
        if kind == "session":
            if isinstance(scratchpad, ScratchpadView):
                scratchpad.show_session(value)
                self.view_requested.emit("scratchpad")
            return
        if kind == "all" and isinstance(scratchpad, ScratchpadView):
            scratchpad.show_session(None)
        if kind == "tag":  # (tag, the ids of its memories)
            self.set_filters(self.filters.with_tag(*value))
            return
        self.set_filters(self.filters.with_ids(value) if kind == "ids" else self.filters.with_sidebar(kind, value))

    def remove_filter(self, key: str) -> None:
        """A chip's close button: the table shows the other filters' memories."""
        self.set_filters(self.filters.without(key))

    def clear_filters(self) -> None:
        self.set_filters(ActiveFilters(search_mode=self.filters.search_mode))

    def set_filters(self, filters: ActiveFilters, order: tuple[Order, bool] | None = None) -> None:
        """Make filters the active ones (order: the table's order and direction, else kept)."""
        self.filters = filters
        self.show_filters(order)

    def show_filters(self, order: tuple[Order, bool] | None = None) -> None:
        """Show the active filters as chips, point the other views at their channels, and load the
        table: the store's memories they keep, or the search over those."""
        filters, pane = self.filters, self.pane
        pane.filter_chips.show_filters(filters)
        if pane.search_box.text().strip() != filters.search_text:
            blocked = pane.search_box.blockSignals(True)
            pane.search_box.setText(filters.search_text)
            pane.search_box.blockSignals(blocked)
        channels = filters.channels()  # the timeline and the graph show the channels too
        for view in self.views.values():
            view.set_channels(channels)
        model, store = self.table_actions.model, self.session.store
        if model is None or store is None:
            return
        current = model.query
        wanted, descending = order or (current.order, current.descending)
        query = filters.query(wanted, descending, store.settings.salience)
        pane.empty_label.hide()
        pane.search_summary.hide()
        pane.table.setColumnHidden(COLUMN_KEYS.index("score"), not filters.searching)
        self._generation += 1
        if not filters.searching:
            model.set_query(query)
            return
        generation = self._generation
        self.count_label.setText(f"Searching “{filters.search_text}”…")
        self.session.read(search, filters.search_text, mode=filters.search_mode, k=SEARCH_K, query=query,
                          on_result=lambda result: self._on_search_result(generation, query, result),
                          priority=ASKED)

    def show_empty(self, empty: bool) -> None:
        """An empty table says so, and names the filters that left it empty."""
        label, filters = self.pane.empty_label, self.filters
        if empty:
            what = "No memories match " + (f"“{filters.search_text}”" if filters.searching else "these filters")
            label.setText(f"{what}. Active filters: {filters.describe()}. Remove a filter above, or Clear all."
                          if filters.chips() else f"{what}: the store holds no active memories.")
        label.setVisible(empty)

    # -- what sets them ------------------------------------------------------------------------------

    def _on_map_selection_changed(self, ids: list[str]) -> None:
        """The map stays in view (to refine the selection); the table lists what it selects."""
        if self.table_actions.model is None:
            return
        self.apply_filter("ids", ids)
        if ids:
            self.status.showMessage(
                f"{len(ids):,} selected on the map: the Memories table lists them (Show in table).", 10_000)

    def _on_timeline_range_chosen(self, start: Any, end: Any) -> None:
        """A click on a timeline bin adds its dates to the active filters; its memories list
        oldest first."""
        if self.table_actions.model is None:
            return
        self.set_filters(self.filters.with_dates(start, end), order=(Order.CREATED, False))
        self.view_requested.emit("memories")

    def focus_search(self) -> None:
        self.pane.search_box.setFocus()
        self.pane.search_box.selectAll()

    def _on_search_box_text_changed(self, text: str) -> None:
        if not text.strip() and self.filters.searching:
            self.set_filters(self.filters.with_search("", self.pane.search_mode.currentText()))

    def _on_search_box_return_pressed(self) -> None:
        if self.session.store is None or self.table_actions.model is None:
            return
        self.set_filters(self.filters.with_search(self.pane.search_box.text(), self.pane.search_mode.currentText()))

    def _on_search_mode_changed(self, mode: str) -> None:
        """Another mode runs the shown search again in it."""
        if self.filters.searching and self.table_actions.model is not None:
            self.set_filters(self.filters.with_search(self.filters.search_text, mode))
        else:
            self.filters = self.filters.with_search(self.filters.search_text, mode)

    def _on_search_result(self, generation: int, query: MemoryQuery, result: SearchResult) -> None:
        model = self.table_actions.model
        if model is None or generation != self._generation:
            return
        for notice in result.notices:
            self.status.showMessage(notice, 10_000)
        scores = {hit.memory.id: hit.score for hit in result.hits}
        meaning = f"Score: {result.score_meaning}"
        selected = [m.id for m in self.table_actions.selected_memories()]
        label = f"hits of a {result.mode} search ({counted(result.matched)}, {result.weak} weak)"
        model.show_list([hit.memory for hit in result.hits], label, scores, meaning)
        self.count_label.setText(f"{len(result.hits):,} {label}")  # (also when as many rows as before came)
        self.pane.search_summary.setText(search_summary(result, self.filters.search_text))
        self.pane.search_summary.show()
        self.table_actions.select_ids(selected)
        model.setHeaderData(COLUMN_KEYS.index("score"), Qt.Orientation.Horizontal, meaning,
                            Qt.ItemDataRole.ToolTipRole)
        self.searched.emit(result)

    def _on_header_sort_indicator_changed(self, column: int, order: Qt.SortOrder) -> None:
        model = self.table_actions.model
        if model is None:
            return
        if self.filters.searching:  # search hits stay in score order, as the CLI lists them
            self.status.showMessage("Search results are listed by score; remove the search to sort.", 5_000)
            return
        model.sort(column, order)


def search_summary(result: SearchResult, text: str) -> str:
    """What the line above the table says of a search: its matches, or that nothing matches, the
    weak matches shown, what ranked the list, and anything the search fell back on."""
    weak = counted(result.weak, "weak match")
    if result.matched:
        found = f"{counted(result.matched)} for “{text}”" + (f"; {weak} under them" if result.weak else "")
    else:
        found = f"No memories match “{text}”" + (f"; {weak} shown below" if result.weak else "")
    ranked = f"{result.mode} search" + (f", ranked by {result.embedder}" if result.embedder else "")
    notices = [n for n in result.notices if not n.startswith("No memories match")]
    return f"{found}. ({ranked}.)" + "".join(f" {n}" for n in notices)
