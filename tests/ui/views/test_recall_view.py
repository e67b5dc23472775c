"""The Recall tab, driven as a person would: ask a question as a channel, read each hit's signals,
curate from the list and see the list follow; a recall the system refuses is said in the view."""

from __future__ import annotations

from formats.test_synthorg import _company, company, data_of  # noqa: F401  (fixtures)
from helpers.sessions import open_session
from mnemoscope.storage.recall import recall
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.views.recall_view import NOT_GIVEN, WHY, RecallView
from mnemoscope.ui.dialogs.edit_dialog import EditDialog
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

QUESTION = "which payment provider do we use"


def _recall_as(qtbot, view: RecallView, question: str, chosen: str | None) -> None:
    """Type question, pick who asks, press Enter; wait for the list."""
    index = view.as_choice.findData(chosen) if chosen is not None else view.as_choice.findText(NOT_GIVEN)
    assert index >= 0, f"{chosen} is no choice of {view.as_label.text()}"
    view.as_choice.setCurrentIndex(index)
    view.question.setText(question)
    with qtbot.waitSignal(view.loaded):
        qtbot.keyClick(view.question, Qt.Key.Key_Return)


def _open_recall(qtbot, win: MainWindow) -> RecallView:
    view = win.view("recall")
    assert isinstance(view, RecallView)
    with qtbot.waitSignal(view.loaded):  # who asks on this store, read when first shown
        win.show_view("recall")
    return view


def _hit_ids(view: RecallView) -> list[str]:
    return [row.memory.id for row in view.listed("hit") if row.memory is not None]


def test_the_list_is_the_one_the_agent_would_be_given(qtbot, demo_window: MainWindow) -> None:
    view = _open_recall(qtbot, demo_window)
    assert view.as_label.text() == "Channel" and view.as_choice.isVisibleTo(view)
    assert view.as_choice.findData("webshop") > 0 and view.as_choice.currentText() == NOT_GIVEN
    _recall_as(qtbot, view, QUESTION, "webshop")
    store = demo_window.store
    assert store is not None
    expected = recall(store, QUESTION, channel="webshop")  # what `mnemoscope recall` lists
    assert _hit_ids(view) == [hit.memory.id for hit in expected.hits] and len(expected.hits) == 10
    hits = {row.memory.id: row for row in view.listed("hit") if row.memory is not None}
    for rank, hit in enumerate(expected.hits, 1):
        row = view.model.row_of(hit.memory.id)
        assert row == rank - 1
        assert view.model.index(row, 0).data() == str(rank)
        assert view.model.index(row, WHY).data() == hit.explanation()
        assert hits[hit.memory.id].scored is not None
    # The rules, then the near misses and the dropped, each under a section row of its own.
    assert "AgentX's retrieval rules" in view.header.text() and "Documented by: seed 002" in view.header.text()
    assert "plain search" not in view.header.text() and "Ranked by: vector" in view.header.text()
    assert [row.memory.id for row in view.listed("near") if row.memory] == [h.memory.id for h in expected.near_misses]
    dropped = view.listed("dropped")
    assert [row.memory.id for row in dropped if row.memory] == [d.memory.id for d in expected.dropped]
    first_dropped = view.model.row_of(expected.dropped[0].memory.id)
    assert first_dropped is not None
    assert view.model.index(first_dropped, WHY).data() == f"Dropped: {expected.dropped[0].reason}"
    assert view.model.index(first_dropped - 1, 0).data().startswith("Dropped by the rules")

    # Selecting a hit says why it ranks there, and shows the memory in the window's detail panel.
    top = expected.hits[0].memory.id
    assert view.select_memory(top)
    assert view.why.text().startswith(f"{top}: recalled at rank 1 of 10")
    assert f"Score: {expected.hits[0].explanation()}" in view.why.text()
    qtbot.waitUntil(lambda: top in demo_window.detail.toPlainText())


def test_a_memory_deleted_from_the_list_leaves_it_and_undo_brings_it_back(qtbot, demo_window: MainWindow) -> None:
    view = _open_recall(qtbot, demo_window)
    _recall_as(qtbot, view, QUESTION, "webshop")
    before = _hit_ids(view)

    # Reinforce the second hit: the list is recalled once the step lands, the memory one access up
    # (AgentX's recency counts from creation: its score stays) and still selected.
    second = view.listed("hit")[1].memory
    assert second is not None and view.select_memory(second.id)
    qtbot.waitUntil(view.reinforce_button.isEnabled)  # what it allows, read on a worker
    view.reinforce_button.click()
    qtbot.waitUntil(lambda: _accesses(view, second.id) == (second.access_count or 0) + 1)
    assert view.selected_memory() is not None and view.selected_memory().id == second.id
    assert _hit_ids(view) == before

    # Delete the top hit: it leaves the hits for the dropped (AgentX recalls active memories only).
    top = before[0]
    assert view.select_memory(top)
    qtbot.waitUntil(view.delete_button.isEnabled)
    view.delete_button.click()  # one memory: no question asked, as the window's Delete
    qtbot.waitUntil(lambda: top not in _hit_ids(view))
    assert [row.reason for row in view.listed("dropped") if row.memory and row.memory.id == top] == [
        "deleted: AgentX retrieves active memories only"]
    assert view.why.text().startswith(f"{top}: dropped: deleted")  # still selected
    demo_window.curation.undo_action.trigger()  # Edit > Undo delete
    qtbot.waitUntil(lambda: _hit_ids(view) == before)


def test_an_edit_and_a_promotion_from_the_list_change_what_the_agent_would_be_told(
        qtbot, demo_window: MainWindow) -> None:
    view = _open_recall(qtbot, demo_window)
    _recall_as(qtbot, view, QUESTION, "webshop")
    stripe = next(row.memory for row in view.listed("hit") if row.memory and "Stripe" in row.memory.content)

    # Edit through the window's own dialog: the list is recalled with the new text.
    assert view.select_memory(stripe.id)
    qtbot.waitUntil(view.edit_button.isEnabled)
    view.edit_button.click()  # the window reads what the memory allows on a worker, then opens its dialog
    qtbot.waitUntil(lambda: demo_window.findChild(EditDialog, "edit_dialog") is not None)
    dialog = demo_window.findChild(EditDialog, "edit_dialog")
    assert dialog.isVisible() and dialog.content.toPlainText() == stripe.content
    dialog.content.setPlainText("webshop payments go through Stripe, live since launch")
    with qtbot.waitSignal(view.recalled):
        dialog.accept()
    row = view.model.row_of(stripe.id)
    assert row is not None and view.model.rows[row].memory.content == "webshop payments go through Stripe, live since launch"

    # Promote it to _global, which AgentX merges into every channel's recall: the copy is listed too.
    assert view.select_memory(stripe.id)
    qtbot.waitUntil(view.promote_button.isEnabled)
    view.promote_button.click()  # below the store's thresholds: the window asks, as its own Promote does
    qtbot.waitUntil(lambda: demo_window.findChild(QMessageBox, "confirm_promote_box") is not None)
    box = demo_window.findChild(QMessageBox, "confirm_promote_box")
    with qtbot.waitSignal(view.recalled):
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Yes), Qt.MouseButton.LeftButton)
    copies = [r.memory for r in view.listed("hit") + view.listed("near")
              if r.memory and r.memory.channel == "_global" and "Stripe, live" in r.memory.content]
    assert len(copies) == 1 and copies[0].provenance.promoted_from == stripe.id


def _accesses(view: RecallView, memory_id: str) -> int | None:
    row = view.model.row_of(memory_id)
    memory = view.model.rows[row].memory if row is not None else None
    return memory.access_count if memory is not None else None


def test_a_recall_the_system_refuses_is_said_in_the_view(qtbot, company) -> None:  # noqa: F811
    project, _ids = company
    with open_session(qtbot, data_of(project)) as session:
        view = RecallView(session)
        qtbot.addWidget(view)
        view.show()
        with qtbot.waitSignal(view.loaded):
            view.load()
        assert view.as_label.text() == "Agent"
        assert [view.as_choice.itemText(i) for i in range(view.as_choice.count())] == [NOT_GIVEN, "ceo", "qa-lead"]
        assert view.as_choice.currentText() == "ceo"  # a SynthOrg recall is one agent's: the first, to start
        _recall_as(qtbot, view, "what should run before the tests", None)  # several agents, none named
        assert "SynthOrg retrieves for one agent" in view.message.text()
        assert view.model.rowCount() == 0 and view.result is None
        _recall_as(qtbot, view, "what should run before the tests", "ceo")
        assert view.result is not None and view.result.system.startswith("SynthOrg") and view.model.rowCount() > 0
