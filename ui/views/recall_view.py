"""The Recall view: what the agent that owns the store would be given for a question, by that
system's own retrieval rules (storage.recall, as ``mnemoscope recall`` shows it), each hit with the
signals and weights its score is made of, then the near misses under the cut and what the rules
dropped. The selected memory is curated from the list (reinforce, edit, delete, promote): the view
asks the window's curation (curation_requested), which runs each as its own actions do (the same
dialogs and questions, one journaled step Undo undoes), and the list is recalled again once a step
lands: the window reads a shown view again when the store changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mnemoscope.storage import Memory, MemoryStore
from mnemoscope.storage.errors import UnsupportedError
from mnemoscope.storage.recall import RecallResult, Scored, recall, who_asks
from PySide6.QtCore import (
    QItemSelectionModel,
    QPoint,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from ..models.rows_model import Index, RowsModel
from ..store_session import StoreSession
from ..workers import ASKED
from .base_view import View

HEADERS = ("Rank", "Score", "Channel", "Content", "Why")
RANK, SCORE, CHANNEL, CONTENT, WHY = range(len(HEADERS))
ASKED_AS = {"channel": "Channel", "agent": "Agent", "scope": "Scope"}
NOT_GIVEN = "(not given)"
PROMPT = "Type a question and press Enter: the list is what the store's agent would be given for it."
CLIPPED = 280  # a memory's content in the list at most (its tooltip and the detail panel show it whole)


@dataclass(frozen=True)
class Row:
    """One line of the list: a hit ("hit"), a near miss ("near"), a memory the rules dropped
    ("dropped"), one of the lists the system adds besides the hits ("extra"), or a section's title
    ("section", its text in title)."""

    kind: str
    memory: Memory | None = None
    scored: Scored | None = None
    rank: int | None = None
    title: str = ""  # a section's
    reason: str = ""  # why the rules dropped the memory


def rows_of(result: RecallResult) -> list[Row]:
    """The hits in rank order, then each other part under a section row of its own."""
    rows = [Row("hit", h.memory, h, rank) for rank, h in enumerate(result.hits, 1)]
    if result.near_misses:
        rows.append(Row("section", title=f"Near misses: just under the cut ({len(result.near_misses)})"))
        rows += [Row("near", h.memory, h, rank) for rank, h in enumerate(result.near_misses, len(result.hits) + 1)]
    if result.dropped:
        rows.append(Row("section", title=f"Dropped by the rules ({len(result.dropped)})"))
        rows += [Row("dropped", d.memory, d.scored, reason=d.reason) for d in result.dropped]
    for title, hits in result.extra.items():
        if hits:
            rows.append(Row("section", title=f"{title} ({len(hits)})"))
            rows += [Row("extra", h.memory, h) for h in hits]
    return rows


def header_of(result: RecallResult) -> str:
    """Whose rules ranked the list, where they are written down, and what measured relevance."""
    scope = ", ".join(f"{name} {value}" for name, value in result.scope.items())
    system = f"System: {result.system}" + (f" (asked as {scope})" if scope else "")
    lines = [system if result.documented else f"{system}: not documented: plain search",
             f"Rules: {result.rules}", f"Documented by: {result.documented_by}"]
    ranked = f"Ranked by: {result.signal}"
    lines.append(f"{ranked} ({result.embedder})" if result.embedder else ranked)
    return "\n".join(lines)


def explanation_of(result: RecallResult, memory_id: str) -> str:
    """result.explain(memory_id) in a few lines: where it stands, its score's terms, its signals."""
    why = result.explain(memory_id)
    lines = [f"{memory_id}: {why['status']}"]
    if why.get("explanation"):
        lines.append(f"Score: {why['explanation']}")
    if why.get("signals"):
        lines.append("Signals: " + ", ".join(f"{name} {value:g}" for name, value in why["signals"].items()))
    if why.get("found_by"):
        lines.append(f"Found by: {why['found_by']}")
    return "\n".join(lines)


class RecallModel(RowsModel):
    """The rows of one recall; near misses, dropped and extra rows in the muted text colour, the
    section rows in bold and not selectable."""

    headers = HEADERS

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows: list[Row] = []

    def shown_rows(self) -> list[Row]:
        return self.rows

    def flags(self, index: Index) -> Qt.ItemFlag:
        if index.isValid() and self.rows[index.row()].kind == "section":
            return Qt.ItemFlag.ItemIsEnabled
        return super().flags(index)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.title if row.kind == "section" and index.column() == 0 else _cell(row, index.column())
        if role == Qt.ItemDataRole.ToolTipRole and row.memory is not None:
            if index.column() == CONTENT:
                return row.memory.content
            if index.column() == WHY:
                return row.scored.explanation() if row.scored is not None else row.reason
        if role == Qt.ItemDataRole.FontRole and row.kind == "section":
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and row.kind in ("near", "dropped", "extra"):
            return QGuiApplication.palette().brush(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in (RANK, SCORE) and row.kind != "section":
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def set_rows(self, rows: list[Row]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def row_of(self, memory_id: str) -> int | None:
        return next((r for r, row in enumerate(self.rows) if row.memory is not None and row.memory.id == memory_id),
                    None)


def _cell(row: Row, column: int) -> str:
    memory, scored = row.memory, row.scored
    if memory is None:
        return ""
    if column == RANK:
        return str(row.rank) if row.rank is not None else ""
    if column == SCORE:
        return f"{scored.score:.3f}" if scored is not None else ""
    if column == CHANNEL:
        return memory.channel
    if column == CONTENT:
        text = " ".join(memory.content.split())
        return text if len(text) <= CLIPPED else text[:CLIPPED - 1] + "…"
    if row.kind == "dropped":
        return f"Dropped: {row.reason}"
    return scored.explanation() if scored is not None else ""


@dataclass(frozen=True)
class Preview:
    """What one read found: who a recall is asked as on this store (kind and choices, as who_asks
    says), and the recall (None: no question yet) or why the system refused it."""

    kind: str
    choices: tuple[str, ...]
    result: RecallResult | None = None
    refused: str = ""


def preview(store: MemoryStore, question: str, chosen: str | None) -> Preview:
    """Who asks, and the recall of question asked as chosen (runs on a worker)."""
    kind, choices = who_asks(store)
    if not question:
        return Preview(kind, tuple(choices))
    asked = {"channel": chosen} if kind == "channel" else {"as_agent": chosen}
    try:
        return Preview(kind, tuple(choices), recall(store, question, **asked))
    except UnsupportedError as exc:  # an agent or scope to name first: the person picks one
        return Preview(kind, tuple(choices), refused=str(exc))


@dataclass(frozen=True)
class Allowed:
    """What can be done to the selected memory, as its source says (read on a worker)."""

    memory: Memory
    editable_fields: tuple[str, ...] = ()
    writable: bool = False
    can_promote: bool = False
    can_reinforce: bool = False
    read_only_reason: str = ""


def allowed_for(store: MemoryStore, memory: Memory) -> Allowed:
    caps = store.capabilities(memory.id)
    if caps.read_only:
        return Allowed(memory, read_only_reason=caps.read_only_reason)
    return Allowed(memory, caps.editable_fields, True, caps.can_promote, caps.can_reinforce)


class RecallView(View):
    """Signals: loaded(int) with the number of hits listed once a read is in (0: no question yet,
    or the recall was refused), recalled(object RecallResult) once a recall's list is shown,
    memory_chosen(str) with the id of the memory selected in the list, failed(object)."""

    name, title, order, read_when_shown, follows_rows = "recall", "Recall", 80, True, True
    recalled = Signal(object)
    curation_requested = Signal(str, object)  # (operation, Memory): the window's curation runs it

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.result: RecallResult | None = None
        self.allowed: Allowed | None = None  # what the selected memory allows, once read
        self._asked = ""  # the question last asked: a read of the store asks it again
        self._who: tuple[str, tuple[str, ...]] | None = None  # who asks, as the combo box lists it
        self._generation = 0

        self.question = QLineEdit()
        self.question.setObjectName("recall_question")
        self.question.setAccessibleName("Question")
        self.question.setPlaceholderText("A question, as the agent would be asked it")
        self.question.setClearButtonEnabled(True)
        self.question.returnPressed.connect(self.ask)
        self.as_label = QLabel("")
        self.as_choice = QComboBox()
        self.as_choice.setObjectName("recall_as")
        self.as_choice.setAccessibleName("Asked as")
        self.as_choice.setMinimumContentsLength(14)
        self.as_choice.activated.connect(lambda _index: self.ask() if self._asked else None)
        self.as_label.setBuddy(self.as_choice)
        self.recall_button = self._button("Recall", "recall_button", "Recall the question", self.ask)

        self.header = self._label("recall_header", "Retrieval rules")
        self.notices = self._label("recall_notices", "Notices")
        self.message = self._label("recall_message", "Recall status")
        self.message.setText(PROMPT)
        self.header.hide()
        self.notices.hide()

        self.model = RecallModel(self)
        self.table = QTableView()
        self.table.setObjectName("recall_table")
        self.table.setAccessibleName("Recalled memories")
        self.table.setModel(self.model)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(True)  # the content and the score's terms in full, each row as tall as it needs
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for column in (CONTENT, WHY):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
        for column, width in ((RANK, 48), (SCORE, 60), (CHANNEL, 96)):
            self.table.setColumnWidth(column, width)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_table_context_menu)
        self.table.selectionModel().selectionChanged.connect(lambda *_args: self._on_selection_changed())

        self.why = self._label("recall_why", "Why the selected memory ranks where it does")
        self.why.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.reinforce_button = self._button("Reinforce", "recall_reinforce", "Reinforce the selected memory",
                                             self.reinforce_selected)
        self.edit_button = self._button("Edit…", "recall_edit", "Edit the selected memory", self.edit_selected)
        self.delete_button = self._button("Delete", "recall_delete", "Delete the selected memory", self.delete_selected)
        self.promote_button = self._button("Promote", "recall_promote", "Promote the selected memory to _global",
                                           self.promote_selected)
        self.curation_buttons = (self.reinforce_button, self.edit_button, self.delete_button, self.promote_button)
        self._lay_out()
        self._show_choices("", ())
        self._update_buttons()

    def _lay_out(self) -> None:
        ask_row = QHBoxLayout()
        ask_row.addWidget(self.question, 1)
        ask_row.addWidget(self.as_label)
        ask_row.addWidget(self.as_choice)
        ask_row.addWidget(self.recall_button)
        top = QVBoxLayout()
        top.addLayout(ask_row)
        top.addWidget(self.header)
        top.addWidget(self.notices)
        top.addWidget(self.message)
        actions = QHBoxLayout()
        for button in self.curation_buttons:
            actions.addWidget(button)
        actions.addStretch(1)
        below = QWidget()
        below_layout = QVBoxLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.addWidget(self.why, 1)
        below_layout.addLayout(actions)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.table)
        splitter.addWidget(below)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)

    def _button(self, text: str, name: str, accessible: str, slot: Any) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAccessibleName(accessible)
        button.clicked.connect(lambda _checked=False: slot())
        return button

    def _label(self, name: str, accessible: str) -> QLabel:
        label = QLabel("")
        label.setObjectName(name)
        label.setAccessibleName(accessible)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.PlainText)  # the store's words are shown, never interpreted
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    # -- asking and reading ----------------------------------------------------------------------

    def ask(self) -> None:
        """Recall the question in the line edit, asked as the combo box says."""
        if self.session.store is None:
            return
        self._asked = self.question.text().strip()
        self.load()

    def asked_as(self) -> str | None:
        """The channel, agent or scope chosen (None: not given; the system's default)."""
        chosen = self.as_choice.currentData()
        return chosen if isinstance(chosen, str) else None

    def read_store(self) -> None:
        """Who asks on this store and, once a question was asked, its recall, on a worker; a read
        overtaken by a newer one is dropped."""
        self._generation += 1
        generation = self._generation
        if self._asked:
            self.message.setText(f"Recalling “{self._asked}”…")
        self.session.read(preview, self._asked, self.asked_as(), priority=ASKED,
                          on_result=lambda found: self._on_preview(generation, found),
                          on_error=lambda exc: self._on_failed(generation, exc))

    def forget(self) -> None:
        self._generation += 1
        self._asked = ""
        self.result = None
        self.allowed = None
        self.model.set_rows([])
        self._show_choices("", ())
        for label in (self.header, self.notices, self.why):
            label.setText("")
        self.header.hide()
        self.notices.hide()
        self.message.setText(PROMPT)
        self._update_buttons()

    def _on_preview(self, generation: int, found: Preview) -> None:
        if generation != self._generation:
            return
        self._show_choices(found.kind, found.choices)
        if found.result is None:
            self._show_result(None, found.refused or PROMPT)
            self.loaded.emit(0)
            return
        result = found.result
        hits = f"{len(result.hits)} hit{'s' if len(result.hits) != 1 else ''}"
        said = (f"{hits}, {len(result.near_misses)} near misses, {len(result.dropped)} dropped for “{result.question}”."
                if result.hits else "The agent would be given nothing for this question.")
        self._show_result(result, said)
        self.recalled.emit(result)
        self.loaded.emit(len(result.hits))

    def _on_failed(self, generation: int, exc: BaseException) -> None:
        if generation != self._generation:
            return
        self._show_result(None, f"The recall failed: {exc}")
        self.loaded.emit(0)
        self.failed.emit(exc)

    def _show_result(self, result: RecallResult | None, message: str) -> None:
        """The list of result (None: an empty one), the selection kept on its memory when it is
        still listed."""
        kept = self.selected_memory()
        self.result = result
        self.message.setText(message)
        self.header.setText(header_of(result) if result is not None else "")
        self.header.setVisible(result is not None)
        notices = result.notices if result is not None else []
        self.notices.setText("\n".join(f"• {notice}" for notice in notices))
        self.notices.setVisible(bool(notices))
        self.model.set_rows(rows_of(result) if result is not None else [])
        self.table.clearSpans()
        for row, line in enumerate(self.model.rows):
            if line.kind == "section":
                self.table.setSpan(row, 0, 1, len(HEADERS))
        if kept is not None and not self.select_memory(kept.id):
            self._on_selection_changed()

    def _show_choices(self, kind: str, choices: tuple[str, ...]) -> None:
        """The combo box of who asks, its choice kept where it still is one; an agent or a scope
        is chosen from the first (a recall there needs one), a channel is not (the system's own)."""
        if self._who == (kind, choices):
            return
        self._who = (kind, choices)
        before = self.asked_as()
        self.as_choice.clear()
        self.as_choice.addItem(NOT_GIVEN, None)
        for choice in choices:
            self.as_choice.addItem(choice, choice)
        kept = self.as_choice.findData(before) if before is not None else -1
        self.as_choice.setCurrentIndex(kept if kept >= 0 else 1 if kind in ("agent", "scope") and choices else 0)
        self.as_label.setText(ASKED_AS.get(kind, ""))
        self.as_label.setVisible(bool(kind))
        self.as_choice.setVisible(bool(kind))

    # -- the list and its selection --------------------------------------------------------------

    def listed(self, kind: str = "hit") -> list[Row]:
        """The rows of one kind ("hit", "near", "dropped", "extra"), in their order."""
        return [row for row in self.model.rows if row.kind == kind]

    def selected_memory(self) -> Memory | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.rows[rows[0].row()].memory if rows and rows[0].row() < len(self.model.rows) else None

    def select_memory(self, memory_id: str) -> bool:
        """Select the row of memory_id (False: it is not listed)."""
        row = self.model.row_of(memory_id)
        if row is None:
            return False
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        self.table.selectionModel().setCurrentIndex(self.model.index(row, 0), flags)
        return True

    def _on_selection_changed(self) -> None:
        memory, result = self.selected_memory(), self.result
        self.allowed = None
        self._update_buttons()
        if memory is None or result is None:
            self.why.setText("")
            return
        self.why.setText(explanation_of(result, memory.id))
        self.memory_chosen.emit(memory.id)
        self.session.read(allowed_for, memory, priority=ASKED, on_result=self._on_allowed_read,
                          on_error=lambda exc: self.why.setText(f"{self.why.text()}\nCould not check it: {exc}"))

    def _on_allowed_read(self, found: Allowed) -> None:
        memory = self.selected_memory()
        if memory is not None and (memory.id, memory.revision) == (found.memory.id, found.memory.revision):
            self.allowed = found
            self._update_buttons()

    def _update_buttons(self) -> None:
        facts = self.allowed
        self.reinforce_button.setEnabled(facts is not None and facts.can_reinforce)
        self.edit_button.setEnabled(facts is not None and bool(facts.editable_fields))
        self.delete_button.setEnabled(facts is not None and facts.writable)
        self.promote_button.setEnabled(facts is not None and facts.can_promote)
        tip = f"Read-only: {facts.read_only_reason}" if facts is not None and facts.read_only_reason else ""
        for button in self.curation_buttons:
            button.setToolTip(tip or button.accessibleName())

    def _on_table_context_menu(self, position: QPoint) -> None:
        menu = QMenu(self)
        menu.setObjectName("recall_menu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        for button in self.curation_buttons:
            action = menu.addAction(button.text())
            action.setEnabled(button.isEnabled())
            action.triggered.connect(button.click)
        menu.popup(self.table.viewport().mapToGlobal(position))

    # -- curation: asked of the window's own ---------------------------------------------------------

    def _chosen(self) -> Allowed | None:
        """What the selected memory allows, if it is what is selected now."""
        memory, facts = self.selected_memory(), self.allowed
        return facts if memory is not None and facts is not None and facts.memory.id == memory.id else None

    def _request(self, operation: str, allowed: Callable[[Allowed], bool]) -> None:
        """Ask the window to run operation on the selected memory, as its own actions run it."""
        facts = self._chosen()
        if facts is not None and allowed(facts):
            self.curation_requested.emit(operation, facts.memory)

    def reinforce_selected(self) -> None:
        self._request("reinforce", lambda facts: facts.can_reinforce)

    def delete_selected(self) -> None:
        self._request("delete", lambda facts: facts.writable)

    def edit_selected(self) -> None:
        self._request("edit", lambda facts: bool(facts.editable_fields))

    def promote_selected(self) -> None:
        self._request("promote", lambda facts: facts.can_promote)

VIEW = RecallView
