"""The memories table: a windowed model over a store, fetched off the UI thread.

After DB Browser for SQLite's RowCache/RowLoader: the store counts and pages
(SQL, Chroma), the model reports every row once the count is in (one insert, not
thousands of fetchMore calls), caches only the chunks a view asked for, at most
MAX_CHUNKS of them (the least recently loaded go first), rows not yet loaded show
a placeholder, and a generation counter drops results that arrive after the query
changed. A chunk that follows a loaded one is read as the rows after that one's
last row (a seek where the store can), not by offset. Chunks are kept as the store
returned them: a row is decoded into a Memory when the view first shows it.

When the store changes, refresh(event) reads back only what the change can have
touched, off the UI thread (after calibre's refresh_ids): for a step that names its
ids, the cached rows of those ids (one read by id); for another process's write,
which names nothing, the cached rows whose revision the store now tells differs
(MemoryStore.revisions reads no memory). Those rows are swapped in place and only
they repaint. Where a row left the query, came in or changed its sort key, or the
count changed, the chunks from the first row that can have moved on are read
again: where rows moved, a layout change (not a reset) lets the selection and the
scroll position follow their memories, and rows that left the query go. Another
process's write does not say where rows came or went: a changed count reads every
cached chunk again, and one that left the count and every cached row as they were
(as many rows added as removed, all outside the cached chunks) goes unseen until
the query is read again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from mnemoscope.storage import Memory, MemoryQuery, MemoryStore, Order, Status, StoreEvent, shown
from mnemoscope.storage.findings import Finding
from mnemoscope.storage.lazy_page import changed_positions, page_ids, page_revisions
from mnemoscope.storage.query import sort_key
from mnemoscope.storage.salience import salience_kept
from mnemoscope.storage.timeutil import utcnow
from mnemoscope.storage.views.relevance import strength
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QBrush, QColor

from ..store_session import StoreSession
from ..workers import AT_ONCE
from .findings_flags import FindingsFlags

PLACEHOLDER = "loading…"
MAX_CHUNKS = 80
COLUMNS: tuple[tuple[str, str], ...] = (
    ("content", "Content"),
    ("layer", "Layer"),
    ("channel", "Channel"),
    ("kind", "Kind"),
    ("created_at", "Created"),
    ("last_accessed", "Last access"),
    ("access_count", "Accesses"),
    ("salience", "Salience now"),  # effective; the detail panel shows the stored value beside it
    ("status", "Status"),
    ("score", "Score"),  # a search hit's score (shown while search results are)
    ("findings", "Findings"),  # the worst open finding of the memory (storage.findings), e.g. "⚑ secret"
)
# Salience shows and sorts by effective (decayed) salience, as the salience view does.
SORTABLE = {"created_at": Order.CREATED, "last_accessed": Order.ACCESSED, "salience": Order.EFFECTIVE_SALIENCE}
COLUMN_KEYS = tuple(key for key, _title in COLUMNS)
HEADER_TIPS = {
    "salience": "Effective salience now: the stored value decayed by its owner's formula (the stored value is in "
                "the detail panel); as the owner keeps it where the owner decays it itself; — where it keeps none",
}
MemoryRole = Qt.ItemDataRole.UserRole + 1
_DISPLAY = int(Qt.ItemDataRole.DisplayRole.value)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole.value)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole.value)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole.value)
_MEMORY = int(MemoryRole)
_ROLES = frozenset((_DISPLAY, _TOOLTIP, _ALIGNMENT, _FOREGROUND, _MEMORY))
_GRAY = QBrush(QColor("gray"))
_RIGHT = int((Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter).value)
_ALIGNMENTS = tuple(_RIGHT if key in ("access_count", "salience", "score") else None for key, _title in COLUMNS)

Index = QModelIndex | QPersistentModelIndex
ALL = StoreEvent(everything=True)  # what refresh() without an event reads back: every cached row


class MemoryTableModel(QAbstractTableModel):
    """Signals: total_changed(int), load_failed(object), chunk_loaded(int), refreshed()."""

    total_changed = Signal(int)
    load_failed = Signal(object)
    chunk_loaded = Signal(int)
    refreshed = Signal()

    def __init__(self, session: StoreSession, chunk: int = 100, parent: Any = None) -> None:
        """A model over the store open in session (every read goes through it)."""
        super().__init__(parent)
        store = session.store
        if store is None:
            raise ValueError("no store is open in this session")
        self._session = session
        self._chunk = chunk
        self._query = MemoryQuery()
        self._generation = 0
        self._total: int | None = None
        self._rows = 0
        self._pages: dict[int, Sequence[Memory]] = {}  # the chunks cached, by first row, oldest first
        self._cells: dict[int, _Cells] = {}  # a shown row's memory and formatted cells
        self._pending: set[int] = set()
        # The change whose rows are being read back; ALL: every cached row is. The changes that came
        # meanwhile (None: every cached row), read back together once that read is in: changes an
        # agent makes faster than a read takes queue up, they do not restart it. Chunks whose read
        # a refresh dropped, asked for again when it is done.
        self._unread: StoreEvent | None = None
        self._again: list[StoreEvent | None] = []
        self._dropped: set[int] = set()
        self._counting = False
        self.label = ""
        self.scores: dict[str, float] = {}  # search hits' scores, by memory id
        self.score_meaning = ""
        self.wrap = False  # whole content, several lines, instead of the first line
        self._decay = store.settings.salience
        self._now = utcnow()  # the moment effective salience is shown at
        # Chunks are read in order on one thread of their own, which keeps its connection (and
        # that connection's cache of the index being paged) warm from one chunk to the next.
        self._reader = QThreadPool(self)
        self._reader.setMaxThreadCount(1)
        self._reader.setExpiryTimeout(-1)
        # The findings flag: the store's baseline and link allow-list are read on a worker (now and
        # at each refresh); a shown row's content is scanned on a worker, once per revision.
        self._flags = FindingsFlags(session, self)
        self._flags.state_changed.connect(self._on_flags_state_changed)
        self._flags.scanned.connect(self._on_flags_scanned)
        self._flags.failed.connect(self.load_failed.emit)
        self._flags.load_state()

    # -- the query ----------------------------------------------------------------------

    @property
    def query(self) -> MemoryQuery:
        return self._query

    @property
    def chunk(self) -> int:
        """How many rows are read at a time."""
        return self._chunk

    @property
    def total(self) -> int | None:
        return self._total

    def set_query(self, query: MemoryQuery) -> None:
        """Show another query: counts and pages are fetched again; late results are dropped."""
        self.beginResetModel()
        self._query = query
        self.label = ""
        self.scores, self.score_meaning = {}, ""
        self._now = utcnow()
        self._generation += 1
        self._total, self._rows = None, 0
        self._pages.clear()
        self._cells.clear()
        self._pending.clear()
        self._unread, self._again, self._dropped = None, [], set()
        self.endResetModel()
        self._counting = False
        # The first rows go first, alone, on a worker; the count follows them (see _on_page).
        self._request(0)

    def _count(self) -> None:
        """Count the query's rows (a scan on a big store: it starts once the first rows are in,
        so that it does not compete with them for the two cores this machine may have). It goes
        ahead of the other views' aggregates waiting for a thread: the table's extent depends on
        it, and each change of that extent repaints the table."""
        if self._counting:
            return
        self._counting = True
        generation = self._generation
        self._session.read(
            MemoryStore.count,
            self._query,
            on_result=lambda n: self._on_count(generation, n),
            on_error=self.load_failed.emit,
            priority=AT_ONCE,
        )

    def show_list(self, memories: list[Memory], label: str, scores: dict[str, float] | None = None,
                  score_meaning: str = "") -> None:
        """Show a short ranked list (search results, with their scores) instead of a query."""
        self.beginResetModel()
        self.scores, self.score_meaning = dict(scores or {}), score_meaning
        self._now = utcnow()
        self._generation += 1
        self._pending.clear()
        self._unread, self._again, self._dropped = None, [], set()
        self._pages = {start: memories[start : start + self._chunk] for start in range(0, len(memories), self._chunk)}
        self._cells.clear()
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

    def refresh(self, event: StoreEvent | None = None) -> None:
        """Read back what a change of the store can have touched and swap it in place: with an
        event naming ids, the cached rows of those ids; with an event for everything (another
        process wrote), the cached rows whose revision changed; without an event, every cached row.
        Rows from the first that can have moved on are read again where any can have."""
        self._flags.load_state()
        if event is not None and not event.everything and not event.ids:  # sessions, scratchpad or graph
            if self._unread is None:
                self.refreshed.emit()  # no memory changed
            return
        if self._unread is not None:  # the read for the change before is on its way: this one after it
            self._again.append(event)
            return
        if event is None or self._total is None or (self.label and event.everything):
            self._refresh_all()
            return
        self._unread = event
        self._generation += 1
        generation = self._generation
        self._dropped |= self._pending  # chunks on their way from before the change: asked for again
        self._pending.clear()
        snapshot = sorted(self._pages.items())
        named = None if event.everything else event.ids
        if self.label:
            self._session.read(
                _read_listed, snapshot, event.ids,
                on_result=lambda found: self._on_listed_read(generation, dict(snapshot), found),
                on_error=self._on_refresh_failed,
            )
            return
        self._session.read(
            _read_changes, self._query, self._chunk, snapshot, self._total, named,
            on_result=lambda changes: self._on_changes_read(generation, dict(snapshot), changes),
            on_error=self._on_refresh_failed,
        )

    def _on_refresh_failed(self, exc: BaseException) -> None:
        self._unread = None
        self.load_failed.emit(exc)
        self._refresh_again()

    def _refresh_again(self) -> None:
        """Read back the changes that came while the last read back was on its way, as one."""
        if self._unread is not None or not self._again:
            return
        events, self._again = self._again, []
        if any(event is None for event in events):
            self.refresh()
            return
        named = [event for event in events if event is not None]
        self.refresh(StoreEvent(tuple(dict.fromkeys(i for event in named for i in event.ids)),
                                everything=any(event.everything for event in named)))

    def _on_changes_read(self, generation: int, snapshot: dict[int, Sequence[Memory]], changes: _Changes) -> None:
        if generation != self._generation:
            return
        self._unread = None
        self._patch(snapshot, changes.patched)
        if changes.moved_from is None:
            self.refreshed.emit()
        else:
            kept = {start: page for start, page in self._pages.items() if start + self._chunk <= changes.moved_from}
            self._on_refresh_read(generation, changes.total, {**kept, **changes.pages})
        self._ask_again()
        self._refresh_again()

    def _on_listed_read(self, generation: int, snapshot: dict[int, Sequence[Memory]],
                        found: dict[int, Sequence[Memory]] | None) -> None:
        if generation != self._generation:
            return
        self._unread = None
        if found is None:  # a listed memory is gone: the list is read again
            self._refresh_all()
            return
        self._patch(snapshot, found)
        self.refreshed.emit()
        self._refresh_again()

    def _patch(self, snapshot: dict[int, Sequence[Memory]], patched: dict[int, Sequence[Memory]]) -> None:
        """Swap in chunks read again in place (the same memories on the same rows), unless the
        chunk was read again or dropped since; repaint only the rows that changed."""
        last = len(COLUMNS) - 1
        for start, page in patched.items():
            old = self._pages.get(start)
            if old is None or old is not snapshot.get(start):
                continue
            self._pages[start] = page
            for n in changed_positions(old, page):
                row = start + n
                self._cells.pop(row, None)
                if row < self._rows:
                    self.dataChanged.emit(self.index(row, 0), self.index(row, last))

    def _ask_again(self) -> None:
        """Repaint chunks whose read was dropped by a refresh, so that a view asks for them again."""
        starts, self._dropped = self._dropped, set()
        for start in sorted(starts):
            last = min(start + self._chunk, self._rows) - 1
            if start not in self._pages and start not in self._pending and last >= start:
                self.dataChanged.emit(self.index(start, 0), self.index(last, len(COLUMNS) - 1))

    def _refresh_all(self) -> None:
        """Read every cached row again, and the count (the store changed in ways not named)."""
        self._unread = ALL
        self._generation += 1
        generation = self._generation
        self._dropped |= self._pending
        self._pending.clear()
        query, chunk = self._query, self._chunk
        if self.label:  # a ranked list (search results): each listed memory again, same order
            ids = [i for _start, page in sorted(self._pages.items()) for i in page_ids(page)]

            def read_list(store: MemoryStore) -> tuple[int, dict[int, list[Memory]]]:
                found = [m for m in (store.find(i) for i in ids) if m is not None]
                return len(found), {start: found[start : start + chunk] for start in range(0, len(found), chunk)}

            reader = read_list
        else:
            starts = sorted(self._pages)

            def read_query(store: MemoryStore) -> tuple[int, dict[int, list[Memory]]]:
                total = store.count(query)
                return total, {start: store.page(query, chunk, start) for start in starts if start < total}

            reader = read_query
        self._session.read(
            reader,
            on_result=lambda result: self._on_all_read(generation, *result),
            on_error=self._on_refresh_failed,
        )

    def _on_all_read(self, generation: int, total: int, pages: dict[int, Sequence[Memory]]) -> None:
        if generation != self._generation:
            return
        self._unread = None
        self._on_refresh_read(generation, total, pages)
        self._ask_again()
        self._refresh_again()

    def _on_refresh_read(self, generation: int, total: int, pages: dict[int, Sequence[Memory]]) -> None:
        if generation != self._generation:
            return
        old_rows = self._rows
        new_rows = total
        pages = {start: page for start, page in pages.items() if start < new_rows}
        if self._update_in_place(new_rows, pages):
            self._total = total
            self.total_changed.emit(total)
            self.refreshed.emit()
            return
        # Same row count first: persistent indexes (the selection) follow their memories by id.
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        was = [self._memory(index.row()) for index in persistent]
        row_of = {i: start + n for start, page in pages.items() for n, i in enumerate(page_ids(page))}
        moved = []
        for index, memory in zip(persistent, was, strict=True):
            row = row_of.get(memory.id) if memory is not None else index.row()
            moved.append(self.index(row, index.column()) if row is not None and row < min(old_rows, new_rows)
                         else QModelIndex())
        self._pages = pages
        self._cells.clear()
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()
        if new_rows < old_rows:
            self.beginRemoveRows(QModelIndex(), new_rows, old_rows - 1)
            self._rows = new_rows
            self.endRemoveRows()
        elif new_rows > old_rows:
            self.beginInsertRows(QModelIndex(), old_rows, new_rows - 1)
            self._rows = new_rows
            self.endInsertRows()
        if self.label:
            self._total = new_rows
        else:
            self._total = total
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, len(COLUMNS) - 1))
        self.total_changed.emit(self._total)
        self.refreshed.emit()

    def _update_in_place(self, rows: int, pages: dict[int, Sequence[Memory]]) -> bool:
        """Swap in pages that hold the same memories on the same rows, and repaint only the rows
        that changed (an edit repaints one row, not the window). False if any row moved."""
        if rows != self._rows or pages.keys() != self._pages.keys():
            return False
        changed: dict[int, list[int]] = {}
        for start, page in pages.items():
            old = self._pages[start]
            if len(old) != len(page) or page_ids(old) != page_ids(page):
                return False
            changed[start] = changed_positions(old, page)
        for start, positions in changed.items():
            if positions:
                self._pages[start] = pages[start]
            for n in positions:
                self._cells.pop(start + n, None)
                self.dataChanged.emit(self.index(start + n, 0), self.index(start + n, len(COLUMNS) - 1))
        return True

    def _on_count(self, generation: int, total: int) -> None:
        if generation != self._generation:
            return
        self._total = total
        self._show_rows(total)
        self.total_changed.emit(total)

    def _show_rows(self, rows: int) -> None:
        """Make the table rows long (before the count is in: as long as the first chunk read)."""
        if rows > self._rows:
            self.beginInsertRows(QModelIndex(), self._rows, rows - 1)
            self._rows = rows
            self.endInsertRows()
        elif rows < self._rows:
            self.beginRemoveRows(QModelIndex(), rows, self._rows - 1)
            self._rows = rows
            for start in [s for s in self._pages if s >= rows]:
                del self._pages[start]
            for row in [r for r in self._cells if r >= rows]:
                del self._cells[row]
            self.endRemoveRows()

    # -- lazy rows ------------------------------------------------------------------------

    def _request(self, row: int) -> None:
        start = row - row % self._chunk
        if start in self._pending or start in self._pages:
            return
        self._pending.add(start)
        generation = self._generation
        before = self._memory(start - 1) if start else None
        offset, after = (0, before) if before is not None else (start, None)
        self._session.read(
            MemoryStore.page,
            self._query,
            self._chunk,
            offset,
            after,
            on_result=lambda page: self._on_page(generation, start, page),
            on_error=self.load_failed.emit,
            pool=self._reader,
        )

    def _on_page(self, generation: int, start: int, page: Sequence[Memory]) -> None:
        if generation != self._generation:
            return
        self._pending.discard(start)
        first = self._total is None  # the first rows, before the count
        if first:
            self._show_rows(len(page))
        self._pages[start] = page
        while len(self._pages) > MAX_CHUNKS:
            self._forget(next(iter(self._pages)))
        last = min(start + len(page), self._rows) - 1
        if last >= start:
            self.dataChanged.emit(self.index(start, 0), self.index(last, len(COLUMNS) - 1))
        self.chunk_loaded.emit(start)
        if first:
            # After the view has had its turn to paint them: a count thread started now would
            # compete with that paint for the interpreter.
            QTimer.singleShot(0, self, lambda: self._count_if_current(generation))

    def _count_if_current(self, generation: int) -> None:
        if generation == self._generation:
            self._count()

    def _forget(self, start: int) -> None:
        """Drop a chunk from the cache (its rows show placeholders, and are read again if shown)."""
        del self._pages[start]
        for row in range(start, start + self._chunk):
            self._cells.pop(row, None)

    def _memory(self, row: int) -> Memory | None:
        """The memory at row if its chunk is cached (decoded now if it was not yet)."""
        if not 0 <= row < self._rows:
            return None
        start = row - row % self._chunk
        page = self._pages.get(start)
        if page is None or row - start >= len(page):
            return None
        return page[row - start]

    def cached_rows(self) -> int:
        return sum(min(len(page), max(self._rows - start, 0)) for start, page in self._pages.items())

    def memory_at(self, row: int) -> Memory | None:
        return self._memory(row)

    def row_of(self, memory_id: str) -> int | None:
        for start, page in self._pages.items():
            for n, found in enumerate(page_ids(page)):
                if found == memory_id and start + n < self._rows:
                    return start + n
        return None

    # -- Qt model API ---------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._rows

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section][1]
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(COLUMN_KEYS[section])
        return None

    def data(self, index: Index, role: int = _DISPLAY) -> Any:
        # A view asks for seven roles of every visible cell at each repaint, each through its own
        # call into Python (a third of a repaint's time): answer the roles we never use first,
        # and the others from the row's cells, formatted once when the row is first shown.
        if role not in _ROLES:
            return None
        row = index.row()
        cells = self._cells.get(row)
        if cells is None:
            if not 0 <= row < self._rows:
                return None
            cells = self._row_cells(row)
            if cells is None:  # not read yet: its chunk is on its way
                if role == _DISPLAY and index.column() == 0:
                    return PLACEHOLDER
                return _GRAY if role == _FOREGROUND else None
        if role == _DISPLAY:
            return cells.texts[index.column()]
        if role == _FOREGROUND:
            return cells.foreground
        if role == _ALIGNMENT:
            return _ALIGNMENTS[index.column()]
        if role == _MEMORY:
            return cells.memory
        key = COLUMNS[index.column()][0]
        if key == "salience":
            return self.salience_tooltip(cells.memory)
        if key == "score" and self.score_meaning:
            return self.score_meaning
        if key == "findings":
            return "\n".join(f"{f.severity}: {f.title}" for f in self.open_findings(cells.memory)) or None
        return _tooltip(cells.memory, key)

    def _on_flags_state_changed(self) -> None:
        """Another baseline or allow-list: every flag is scanned again as its row is shown."""
        column = COLUMN_KEYS.index("findings")
        self._cells.clear()  # formatted again as they are shown
        if self._rows:
            self.dataChanged.emit(self.index(0, column), self.index(self._rows - 1, column))

    def _on_flags_scanned(self, ids: set[str]) -> None:
        """The flags of shown rows are in: their Findings cells only."""
        column = COLUMN_KEYS.index("findings")
        rows = [row for row, cells in self._cells.items() if cells.memory.id in ids and row < self._rows]
        for row in rows:
            cells = self._cells[row]
            texts = list(cells.texts)
            texts[column] = self._flag(cells.memory)
            self._cells[row] = cells._replace(texts=tuple(texts))
        if rows:
            self.dataChanged.emit(self.index(min(rows), column), self.index(max(rows), column))

    def open_findings(self, memory: Memory) -> list[Finding]:
        """The memory's findings not accepted into the baseline, as scanned on a worker (none while
        its scan is on its way: it is asked for now if it was not)."""
        return list(self._flags.known(memory) or ())

    def flag_known(self, memory: Memory) -> bool:
        """Whether the memory's flag is scanned (at its revision, under the store's baseline)."""
        return self._flags.known(memory) is not None

    def _flag(self, memory: Memory) -> str:
        found = self._flags.known(memory)
        return f"⚑ {found[0].category}" if found else ""

    def effective_salience(self, memory: Memory) -> float | None:
        """The memory's salience now: decayed where it is Mnemoscope's to decay, as its owner keeps
        it where the owner decays it itself, None where the owner keeps none."""
        return self._decay.effective_shown(memory, self._now)

    def salience_tooltip(self, memory: Memory) -> str:
        effective = self.effective_salience(memory)
        if effective is None or not salience_kept(memory).decayed_here:
            return self._decay.formula_of(memory)
        return f"Effective salience now {effective:.3f} (stored {shown(memory.salience, '.2f')}; {self._decay.formula()})"

    def _text(self, memory: Memory, key: str) -> str:
        if key == "findings":
            return self._flag(memory)
        if key == "salience":
            return shown(self.effective_salience(memory), ".2f")
        if key == "score":
            score = self.scores.get(memory.id)
            return "" if score is None else f"{score:.2f} {strength(score)}"
        if key == "content" and self.wrap:
            return memory.content if len(memory.content) <= 2000 else memory.content[:1999] + "…"
        return _display(memory, key)

    def set_wrap(self, wrap: bool) -> None:
        """Whole content on several lines (True) or its first line (False)."""
        if wrap != self.wrap:
            self.wrap = wrap
            self._cells.clear()
            if self._rows:
                self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, 0))

    def _row_cells(self, row: int) -> _Cells | None:
        """The row's cells if its chunk is cached (else the chunk is requested)."""
        memory = self._memory(row)
        if memory is None:
            self._request(row)
            return None
        cells = self._cells[row] = _Cells(
            memory,
            tuple(self._text(memory, key) for key, _title in COLUMNS),
            None if memory.status is Status.ACTIVE else _GRAY,
        )
        return cells

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        key = COLUMNS[column][0]
        wanted = SORTABLE.get(key)
        if wanted is None:
            return
        descending = order == Qt.SortOrder.DescendingOrder
        if (wanted, descending) != (self._query.order, self._query.descending):
            self.set_query(replace(self._query, order=wanted, descending=descending, decay=self._decay))


class _Changes(NamedTuple):
    """What a change did to the cached rows: the chunks whose changed memories stay on their rows,
    patched (patched); the row from which rows can have moved (moved_from: None if none can), the
    count then and the cached chunks from that row on, read again."""

    patched: dict[int, Sequence[Memory]]
    moved_from: int | None
    total: int
    pages: dict[int, Sequence[Memory]]


def _read_changes(store: MemoryStore, query: MemoryQuery, chunk: int, cached: list[tuple[int, Sequence[Memory]]],
                  total: int, named: tuple[str, ...] | None) -> _Changes:
    """On a worker: what changed among the cached chunks (first row, page) of query, counted total.
    named: the ids a step changed; None: another process wrote, and the store cannot say what."""
    row_of = {memory_id: start + n for start, page in cached for n, memory_id in enumerate(page_ids(page))}
    counted: int | None = None
    moved_from: int | None = None
    if named is None:
        # Each cached row's revision against the store's now (no memory is read); a row whose page
        # did not carry its revision is read back. Rows that came or went where none is cached
        # change the count, and where they did is not known.
        shown = {i: r for _start, page in cached for i, r in zip(page_ids(page), page_revisions(page), strict=True)}
        now = store.revisions([i for i, revision in shown.items() if revision])
        changed = [i for i, revision in shown.items() if not revision or now.get(i) != revision]
        elsewhere: list[str] = []
        counted = store.count(query)
        if counted != total:
            moved_from = 0
    else:
        ids = list(dict.fromkeys(store.canonical_id(i) for i in named))  # a copy's id names its memory
        changed = [i for i in ids if i in row_of]
        elsewhere = [i for i in ids if i not in row_of]
    wanted = tuple(changed + elsewhere)
    fresh = {m.id: m for m in store.page(replace(query, ids=wanted), len(wanted))} if wanted and moved_from != 0 else {}
    if elsewhere and moved_from is None:
        # A named memory not cached: in the query now, it may have come in or moved from anywhere;
        # out of it, it may have left from anywhere, which the count tells (beyond the cached
        # named memories that left it, each one fewer).
        counted = store.count(query)
        left = sum(1 for i in changed if i not in fresh)
        if counted != total - left or any(i in fresh for i in elsewhere):
            moved_from = 0
    key = sort_key(query.order, query.decay)
    pages = dict(cached)
    patched: dict[int, list[Memory]] = {}
    for memory_id in changed if moved_from != 0 else ():
        row = row_of[memory_id]
        start = row - row % chunk
        was = pages[start][row - start]
        memory = fresh.get(memory_id)
        if memory is None or key(memory) != key(was):  # left the query, or its place may have changed
            moved_from = min(row, row if moved_from is None else moved_from)
            if memory is not None:
                moved_from = min(moved_from, _first_chunk_reaching(memory, cached, key, query.descending))
            continue
        patched.setdefault(start, list(pages[start]))[row - start] = memory
    if moved_from is None:
        return _Changes(dict(patched), None, total, {})
    counted = store.count(query) if counted is None else counted
    again = {start: store.page(query, chunk, start) for start, _page in cached
             if start + chunk > moved_from and start < counted}
    return _Changes({s: p for s, p in patched.items() if s + chunk <= moved_from}, moved_from, counted, again)


def _first_chunk_reaching(memory: Memory, cached: list[tuple[int, Sequence[Memory]]], key: Any,
                          descending: bool) -> int:
    """The first row of the first cached chunk whose last row does not come before memory in the
    query's order (memory's new place is in that chunk or before it); past every chunk if none."""
    mine = key(memory)
    for start, page in cached:
        if not page:
            continue
        last = key(page[len(page) - 1])
        if (last <= mine) if descending else (last >= mine):
            return start
    return cached[-1][0] + len(cached[-1][1]) if cached else 0


def _read_listed(store: MemoryStore, cached: list[tuple[int, Sequence[Memory]]],
                 named: tuple[str, ...]) -> dict[int, Sequence[Memory]] | None:
    """On a worker: the chunks of a ranked list that hold memories a step changed, with those
    memories read again in place; None if any of them is gone."""
    row_of = {memory_id: start + n for start, page in cached for n, memory_id in enumerate(page_ids(page))}
    pages = dict(cached)
    chunk_of = {start + n: start for start, page in cached for n in range(len(page))}
    patched: dict[int, list[Memory]] = {}
    for memory_id in dict.fromkeys(store.canonical_id(i) for i in named):
        row = row_of.get(memory_id)
        if row is None:
            continue
        memory = store.find(memory_id)
        if memory is None:
            return None
        start = chunk_of[row]
        patched.setdefault(start, list(pages[start]))[row - start] = memory
    return dict(patched)


class _Cells(NamedTuple):
    memory: Memory
    texts: tuple[str, ...]
    foreground: QBrush | None


def _tooltip(memory: Memory, key: str) -> str | None:
    if key == "content":
        return memory.content
    if key in ("created_at", "last_accessed"):
        return getattr(memory, key).isoformat()
    return None


def _display(memory: Memory, key: str) -> str:
    if key == "content":
        first = memory.content.strip().splitlines()[0] if memory.content.strip() else ""
        return first if len(first) <= 200 else first[:199] + "…"
    if key == "kind":
        return memory.source.format or memory.source.kind.value
    if key in ("created_at", "last_accessed"):
        return getattr(memory, key).strftime("%Y-%m-%d")
    if key == "salience":
        return shown(memory.salience, ".2f")
    value = getattr(memory, key)
    return value.value if hasattr(value, "value") else shown(value)
