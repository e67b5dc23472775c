"""Curation from the window: the Edit menu's steps on the selected memories (edit, promote,
delete, restore, reinforce, undo, redo), the steps the views ask for (a scratchpad key, a
finding, a memory at risk), re-embedding, the promotion candidates, and a conflicting edit's
choice. Every step runs through the session, and so does every read: what the selection
allows (each memory's capabilities, the promotion thresholds it misses) is read on a worker
when the selection changes, the actions disabled and "checking…" until it is in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemoscope.storage import Memory, MemoryStore
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QWidget

from ..dialogs.candidates_dialog import CandidatesDialog
from ..dialogs.conflict_dialog import ConflictDialog
from ..dialogs.edit_dialog import EditDialog
from ..dialogs.progress_dialog import progress_dialog, show_progress
from ..dialogs.scratch_value_dialog import ScratchValueDialog
from ..store_session import Conflict, StoreSession
from ..views.base_view import View
from ..views.findings_view import FindingsView
from ..views.recall_view import RecallView
from ..views.salience_view import SalienceView
from ..views.scratchpad_view import ScratchKey, ScratchpadView
from ..workers import ASKED
from .table_actions import TableActions

CHECKING = "Checking what can be done to the selection…"
Key = tuple[tuple[str, str], ...]  # the selection: each memory's id and the revision it was read at


def selection_key(memories: Sequence[Memory]) -> Key:
    return tuple((m.id, m.revision) for m in memories)


@dataclass(frozen=True)
class SelectionFacts:
    """What can be done to the selected memories, as their sources say (read on a worker)."""

    key: Key
    editable_fields: tuple[str, ...] = ()  # the one selected memory's (none for several)
    writable: bool = False
    can_promote: bool = False
    can_reinforce: bool = False
    read_only_reasons: tuple[str, ...] = ()
    shortfall: dict[str, list[str]] = field(default_factory=dict)  # id -> the promotion thresholds it misses
    failed: str = ""  # why it could not be read (the memory went, a file is locked)


def selection_facts(store: MemoryStore, memories: Sequence[Memory]) -> SelectionFacts:
    """Each memory's capabilities and promotion shortfall (runs on a worker: both may read the store)."""
    caps = [store.capabilities(m.id) for m in memories]
    writable = bool(caps) and all(not c.read_only for c in caps)
    return SelectionFacts(
        key=selection_key(memories),
        editable_fields=caps[0].editable_fields if len(caps) == 1 else (),
        writable=writable,
        can_promote=writable and all(c.can_promote for c in caps),
        can_reinforce=writable and all(c.can_reinforce for c in caps),
        read_only_reasons=tuple(sorted({c.read_only_reason for c in caps if c.read_only and c.read_only_reason})),
        shortfall={m.id: failed for m in memories if (failed := store.promotion_shortfall(m))},
    )


class CurationActions(QObject):
    """The curation actions and what they ask before a step.

    Signals: conflict_shown(object ConflictDialog) when an edit met a change made since its
    memory was read, error_raised(object) with an exception for the person (a candidates list
    that could not be read), selection_checked(object SelectionFacts) once what the selection
    allows is read and the actions follow it."""

    conflict_shown = Signal(object)
    error_raised = Signal(object)
    selection_checked = Signal(object)

    def __init__(self, session: StoreSession, table_actions: TableActions, views: dict[str, View],
                 parent: QWidget) -> None:
        super().__init__(parent)
        self.session, self.table_actions = session, table_actions
        self._widget = parent  # the dialogs' parent
        self._facts: SelectionFacts | None = None  # what the selection allows, as last read
        self._asked: Key | None = None  # the selection whose facts are being read
        self._facts_store: MemoryStore | None = None  # the store they are of
        self.undo_action = self._action("&Undo", lambda: self.session.curate("undo"), QKeySequence.StandardKey.Undo)
        self.redo_action = self._action("&Redo", lambda: self.session.curate("redo"), QKeySequence.StandardKey.Redo)
        self.edit_action = self._action("&Edit memory…", self.edit_selected, "F2")
        self.promote_action = self._action("&Promote to _global", self.promote_selected, "Ctrl+Shift+P")
        self.delete_action = self._action("&Delete", self.delete_selected, QKeySequence.StandardKey.Delete)
        self.restore_action = self._action("Re&store", self.restore_selected, "Ctrl+Shift+R")
        self.reinforce_action = self._action("Re&inforce", self.reinforce_selected, "Ctrl+Shift+I",
                                             "One more access now: pin against decay")
        self.reembed_action = self._action("Re-&embed stale vectors", self.reembed_stale, None,
                                           "Recompute vectors whose memory was edited without an embedder")
        self.candidates_action = self._action("Promotion &candidates…", self.show_promotion_candidates, None,
                                              "Project facts that meet the promotion thresholds")
        self.selection_actions = [self.edit_action, self.promote_action, self.delete_action, self.restore_action,
                                  self.reinforce_action]
        session.conflicted.connect(self._on_session_conflicted)
        for view in views.values():
            if isinstance(view, ScratchpadView):
                view.edit_requested.connect(self.edit_scratch_key)
                view.delete_requested.connect(self.delete_scratch_key)
            elif isinstance(view, RecallView):
                view.curation_requested.connect(self.curate_memory)
            elif isinstance(view, SalienceView):
                view.reinforce_requested.connect(lambda memory_id: self.session.curate("reinforce", memory_id))
            elif isinstance(view, FindingsView):
                view.redact_requested.connect(
                    lambda f: self.session.curate("redact", f.memory_id, f.start, f.end, finding=f.fingerprint))
                view.delete_requested.connect(lambda ids: self.session.curate("delete", ids))
                view.accept_requested.connect(lambda found: self.session.curate("accept_findings", found))

    def _action(self, text: str, slot: Callable[[], Any], shortcut: Any = None, tip: str = "") -> QAction:
        action = QAction(text, self._widget)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    # -- the selection's steps ---------------------------------------------------------------------

    def _selection(self, memories: Sequence[Memory] | None = None) -> tuple[list[str], dict[str, str]]:
        """The ids of memories (default: the table's selection) and the revisions they were read at."""
        selected = self._chosen(memories)
        return [m.id for m in selected], {m.id: m.revision for m in selected}

    def _chosen(self, memories: Sequence[Memory] | None) -> list[Memory]:
        return list(memories) if memories is not None else self.table_actions.selected_memories()

    def curate_memory(self, operation: str, memory: Memory) -> None:
        """A step on one memory another view lists (Recall), asked and run as on the table's selection."""
        steps = {"edit": self.edit_selected, "promote": self.promote_selected, "delete": self.delete_selected,
                 "reinforce": self.reinforce_selected}
        steps[operation]([memory])

    def _with_facts(self, memories: list[Memory], then: Callable[[SelectionFacts], None]) -> None:
        """then(what memories allow): as already read, else read on a worker first."""
        facts = self._facts
        if facts is not None and facts.key == selection_key(memories) and not facts.failed:
            then(facts)
            return
        self.session.read(selection_facts, memories, on_result=then, on_error=self.error_raised.emit, priority=ASKED)

    def edit_selected(self, memories: Sequence[Memory] | None = None) -> None:
        selected = self._chosen(memories)
        if len(selected) != 1 or self.session.store is None:
            return
        memory = selected[0]

        def edit(facts: SelectionFacts) -> None:
            if not facts.editable_fields:
                return
            dialog = EditDialog(memory, facts.editable_fields, self._widget)
            dialog.setObjectName("edit_dialog")
            dialog.accepted.connect(lambda: self.session.edit(memory, dialog.changes()))
            dialog.open()

        self._with_facts(selected, edit)

    def _on_session_conflicted(self, conflict: Conflict) -> None:
        """The store changed under an edit: show what changed and let the person choose."""
        box = ConflictDialog(conflict, self._widget)
        box.apply_chosen.connect(lambda c: self.session.edit(c.now, c.changes))
        box.keep_chosen.connect(lambda _c: self.session.refresh())
        box.open()
        self.conflict_shown.emit(box)

    def promote_selected(self, memories: Sequence[Memory] | None = None) -> None:
        """Promote the selection (or memories) as one step; memories below the store's promotion
        thresholds are named first and promoted only when the person says so (forced, and journaled so)."""
        selected = self._chosen(memories)
        if selected and self.session.store is not None:
            self._with_facts(selected, lambda facts: self._promote(selected, facts))

    def _promote(self, selected: list[Memory], facts: SelectionFacts) -> None:
        store = self.session.store
        if store is None or not facts.can_promote:
            return
        ids, revisions = [m.id for m in selected], {m.id: m.revision for m in selected}
        thresholds = store.settings.promotion  # read when the store opened
        unmet = facts.shortfall
        if not unmet:
            self.session.curate("promote", ids, expected_revision=revisions)
            return
        listed = "\n".join(f"{memory_id}: {', '.join(failed)}" for memory_id, failed in list(unmet.items())[:10])
        more = f"\n... and {len(unmet) - 10} more" if len(unmet) > 10 else ""
        self.ask(
            "confirm_promote_box", "Promote below the thresholds",
            f"{len(unmet)} of the {len(ids)} selected memories do not meet this store's promotion thresholds "
            f"(confidence >= {thresholds.confidence:g}, accesses >= {thresholds.access_count}, "
            f"conversations >= {thresholds.conversations}):\n\n{listed}{more}\n\n"
            "Promote anyway? The journal records which thresholds were missed; you can undo it.",
            lambda: self.session.curate("promote", ids, expected_revision=revisions, force=True),
        )

    def delete_selected(self, memories: Sequence[Memory] | None = None) -> None:
        """Delete the selection (or memories) as one step; several are confirmed first (no nested loop)."""
        ids, revisions = self._selection(memories)
        if not ids:
            return
        if len(ids) == 1:
            self.session.curate("delete", ids, expected_revision=revisions)
            return
        self.ask("confirm_delete_box", "Delete memories", f"Delete {len(ids)} memories? You can undo this.",
                 lambda: self.session.curate("delete", ids, expected_revision=revisions))

    def reinforce_selected(self, memories: Sequence[Memory] | None = None) -> None:
        ids, revisions = self._selection(memories)
        if ids:
            self.session.curate("reinforce", ids, expected_revision=revisions)

    def restore_selected(self) -> None:
        ids, _ = self._selection()
        if ids:
            self.session.curate("restore", ids)

    def ask(self, name: str, title: str, text: str, on_yes: Callable[[], object]) -> None:
        """A window-modal Yes/No question (no nested event loop); on_yes runs on Yes."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self._widget)
        box.setObjectName(name)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def answered(_result: int) -> None:
            if box.clickedButton() is box.button(QMessageBox.StandardButton.Yes):
                on_yes()

        box.finished.connect(answered)
        box.open()

    # -- the views' steps ----------------------------------------------------------------------------

    def edit_scratch_key(self, entry: ScratchKey) -> None:
        """The value of one scratchpad key in a dialog; Save sets it as one step, checked against
        the value the view read."""
        dialog = ScratchValueDialog(entry, self._widget)
        dialog.setObjectName("scratch_value_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

        def saved() -> None:
            if dialog.changed():
                self.session.curate("set_scratch", entry.session_id, entry.key, dialog.value(), expected=entry.value)

        dialog.accepted.connect(saved)
        dialog.open()

    def delete_scratch_key(self, entry: ScratchKey) -> None:
        self.ask("confirm_delete_scratch_box", "Delete scratchpad key",
                 f"Delete {entry.key} from the scratchpad of session {entry.session_id}? You can undo this.",
                 lambda: self.session.curate("delete_scratch", entry.session_id, entry.key, expected=entry.value))

    # -- store-wide steps ------------------------------------------------------------------------------

    def reembed_stale(self) -> None:
        """Re-embed stale vectors on the session's write worker, with progress and cancel."""
        if self.session.store is None:
            return
        label = "Re-embedding stale vectors:"
        dialog = progress_dialog(label, self._widget)
        worker = self.session.curate("reembed", on_progress=lambda tick: show_progress(dialog, label, tick),
                                     on_finished=dialog.close)
        if worker is not None:
            dialog.canceled.connect(worker.cancel)
            dialog.open()

    def show_promotion_candidates(self) -> CandidatesDialog | None:
        """Tools > Promotion candidates: the qualifying facts (read on a worker), promoted as one step."""
        if self.session.store is None:
            return None
        dialog = CandidatesDialog(self.session, self._widget)
        dialog.setObjectName("candidates_dialog")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.load_failed.connect(self.error_raised.emit)
        dialog.promote_requested.connect(lambda ids: self.session.curate("promote", ids))
        dialog.open()
        return dialog

    # -- what is enabled -------------------------------------------------------------------------------

    def update_actions(self) -> None:
        """Enable and name the actions for the open store, its journal and the selection."""
        store = self.session.store
        selected = self.table_actions.selected_memories() if store is not None else []
        next_undo, next_redo = self.session.steps  # as the session last read the journal
        if store is not None and store.read_only:
            next_undo = next_redo = None
        self.undo_action.setEnabled(next_undo is not None)
        self.undo_action.setText(f"&Undo {next_undo.operation}" if next_undo else "&Undo")
        self.redo_action.setEnabled(next_redo is not None)
        self.redo_action.setText(f"&Redo {next_redo.operation}" if next_redo else "&Redo")
        self._update_selection_actions(store, selected)
        self.reembed_action.setEnabled(store is not None and not store.read_only)
        self.candidates_action.setEnabled(store is not None)

    def _update_selection_actions(self, store: MemoryStore | None, selected: list[Memory]) -> None:
        """The selection's actions as its facts allow; while they are read (on a worker, asked
        here when the selection is new), disabled and "checking…"."""
        if store is not self._facts_store:  # another store (or none): nothing read of it yet
            self._facts_store, self._facts, self._asked = store, None, None
        key = selection_key(selected)
        facts = self._facts if self._facts is not None and self._facts.key == key else None
        if store is not None and selected and facts is None and self._asked != key:
            self._asked = key
            self.session.read(selection_facts, selected, on_result=self._on_facts_read,
                              on_error=lambda exc: self._on_facts_read(SelectionFacts(key, failed=str(exc))),
                              priority=ASKED)
        checking = store is not None and bool(selected) and facts is None
        facts = facts or SelectionFacts(key)
        self.edit_action.setEnabled(len(selected) == 1 and bool(facts.editable_fields))
        self.promote_action.setEnabled(facts.can_promote)
        self.delete_action.setEnabled(facts.writable)
        self.restore_action.setEnabled(facts.writable)
        self.reinforce_action.setEnabled(facts.can_reinforce)
        for action in self.selection_actions:
            if checking:
                tip = CHECKING
            elif facts.failed:
                tip = f"Could not check the selection: {facts.failed}"
            elif facts.read_only_reasons and action in (self.edit_action, self.delete_action, self.restore_action):
                tip = f"Read-only: {'; '.join(facts.read_only_reasons)}"
            else:
                tip = action.text().replace("&", "")
            action.setToolTip(tip)

    def _on_facts_read(self, facts: SelectionFacts) -> None:
        """What the selection allows is in; dropped if the selection moved on meanwhile."""
        if facts.key == self._asked:
            self._asked = None
        if facts.key != selection_key(self.table_actions.selected_memories()):
            return
        self._facts = facts
        self.update_actions()
        self.selection_checked.emit(facts)

