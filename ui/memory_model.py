"""The memories table: a windowed model over a store, fetched off the UI thread.

After DB Browser for SQLite's RowCache/RowLoader: the store counts and pages
(SQL, Chroma), the model caches only the chunks it was asked for, rows not yet
loaded show a placeholder, and a generation counter drops results that arrive
after the query changed. The model exposes rows a chunk at a time through
canFetchMore/fetchMore, so it never holds more than the rows looked at.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor

from mnemoscope.storage import Memory, MemoryQuery, MemoryStore, Order, Status

from .workers import start_worker

PLACEHOLDER = "loading…"
COLUMNS: tuple[tuple[str, str], ...] = (
    ("content", "Content"),
    ("layer", "Layer"),
    ("channel", "Channel"),
    ("kind", "Kind"),
    ("created_at", "Created"),
    ("last_accessed", "Last access"),
    ("access_count", "Accesses"),
    ("salience", "Salience"),
    ("status", "Status"),
)
SORTABLE = {"created_at": Order.CREATED, "last_accessed": Order.ACCESSED, "salience": Order.SALIENCE}
MemoryRole = Qt.ItemDataRole.UserRole + 1

Index = QModelIndex | QPersistentModelIndex


class MemoryTableModel(QAbstractTableModel):
    """Signals: total_changed(int), load_failed(object), chunk_loaded(int)."""

    total_changed = Signal(int)
    load_failed = Signal(object)
    chunk_loaded = Signal(int)

    def __init__(self, store: MemoryStore, chunk: int = 200, parent: Any = None) -> None:
        super().__init__(parent)
        self._store = store
        self._chunk = chunk
        self._query = MemoryQuery()
        self._generation = 0
        self._total: int | None = None
        self._rows = 0
        self._cache: dict[int, Memory] = {}
        self._pending: set[int] = set()
        self.label = ""

    # -- the query ----------------------------------------------------------------------

    @property
    def query(self) -> MemoryQuery:
        return self._query

    @property
    def total(self) -> int | None:
        return self._total

    def set_query(self, query: MemoryQuery) -> None:
        """Show another query: counts and pages are fetched again; late results are dropped."""
        self.beginResetModel()
        self._query = query
        self.label = ""
        self._generation += 1
        self._total, self._rows = None, 0
        self._cache.clear()
        self._pending.clear()
        self.endResetModel()
        generation = self._generation
        start_worker(
            self._store.count,
            query,
            on_result=lambda n: self._on_count(generation, n),
            on_error=self.load_failed.emit,
        )

    def show_list(self, memories: list[Memory], label: str) -> None:
        """Show a short ranked list (search results) instead of a query."""
        self.beginResetModel()
        self._generation += 1
        self._pending.clear()
        self._cache = dict(enumerate(memories))
        self._total = self._rows = len(memories)
        self.label = label
        self.endResetModel()
        self.total_changed.emit(len(memories))
        self.chunk_loaded.emit(0)

    def detach(self) -> None:
        """Drop every result still on its way (the store is closing)."""
        self._generation += 1

    def reload(self) -> None:
        """Fetch the same query again (the store changed under us)."""
        self.set_query(self._query)

    def _on_count(self, generation: int, total: int) -> None:
        if generation != self._generation:
            return
        self._total = total
        self.total_changed.emit(total)
        if total:
            self.fetchMore(QModelIndex())
            self._request(0)

    # -- lazy rows ------------------------------------------------------------------------

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:
        return not parent.isValid() and self._total is not None and self._rows < self._total

    def fetchMore(self, parent: Index = QModelIndex()) -> None:
        if not self.canFetchMore(parent):
            return
        assert self._total is not None
        more = min(self._chunk, self._total - self._rows)
        # Rows arrive as placeholders; data() fetches the chunks a view actually shows.
        self.beginInsertRows(QModelIndex(), self._rows, self._rows + more - 1)
        self._rows += more
        self.endInsertRows()

    def _request(self, row: int) -> None:
        start = row - row % self._chunk
        if start in self._pending or start in self._cache:
            return
        self._pending.add(start)
        generation = self._generation
        start_worker(
            self._store.page,
            self._query,
            self._chunk,
            start,
            on_result=lambda page: self._on_page(generation, start, page),
            on_error=self.load_failed.emit,
        )

    def _on_page(self, generation: int, start: int, page: list[Memory]) -> None:
        if generation != self._generation:
            return
        self._pending.discard(start)
        for offset, memory in enumerate(page):
            self._cache[start + offset] = memory
        last = min(start + len(page), self._rows) - 1
        if last >= start:
            self.dataChanged.emit(self.index(start, 0), self.index(last, len(COLUMNS) - 1))
        self.chunk_loaded.emit(start)

    def memory_at(self, row: int) -> Memory | None:
        return self._cache.get(row)

    def row_of(self, memory_id: str) -> int | None:
        for row, memory in self._cache.items():
            if memory.id == memory_id:
                return row
        return None

    # -- Qt model API ---------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1]
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < self._rows:
            return None
        memory = self._cache.get(index.row())
        if memory is None:
            self._request(index.row())
            if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:
                return PLACEHOLDER
            if role == Qt.ItemDataRole.ForegroundRole:
                return QBrush(QColor("gray"))
            return None
        key = COLUMNS[index.column()][0]
        if role == Qt.ItemDataRole.DisplayRole:
            return _display(memory, key)
        if role == Qt.ItemDataRole.ToolTipRole and key == "content":
            return memory.content
        if role == Qt.ItemDataRole.ToolTipRole and key in ("created_at", "last_accessed"):
            return getattr(memory, key).isoformat()
        if role == MemoryRole:
            return memory
        if role == Qt.ItemDataRole.TextAlignmentRole and key in ("access_count", "salience"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and memory.status is not Status.ACTIVE:
            return QBrush(QColor("gray"))
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        key = COLUMNS[column][0]
        wanted = SORTABLE.get(key)
        if wanted is None:
            return
        descending = order == Qt.SortOrder.DescendingOrder
        if (wanted, descending) != (self._query.order, self._query.descending):
            self.set_query(replace(self._query, order=wanted, descending=descending))


def _display(memory: Memory, key: str) -> str:
    if key == "content":
        first = memory.content.strip().splitlines()[0] if memory.content.strip() else ""
        return first if len(first) <= 200 else first[:199] + "…"
    if key == "kind":
        return memory.source.format or memory.source.kind.value
    if key in ("created_at", "last_accessed"):
        return getattr(memory, key).strftime("%Y-%m-%d")
    if key == "salience":
        return f"{memory.salience:.2f}"
    value = getattr(memory, key)
    return value.value if hasattr(value, "value") else str(value)
