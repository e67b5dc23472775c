"""The main window driven as a person would: open, filter, search, curate, undo."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.store_state import state_of
from helpers.table_rows import read_every_row
from helpers.windows import open_window, sidebar_counts
from mnemoscope.storage import Kind, MemoryQuery, Status
from mnemoscope.storage.salience import salience_kept
from mnemoscope.ui.controllers.curation_actions import CHECKING
from mnemoscope.ui.dialogs.edit_dialog import EditDialog
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import running_workers
from PySide6.QtCore import QEvent, QObject, QSettings, Qt
from PySide6.QtGui import QRegion
from PySide6.QtWidgets import QApplication, QMessageBox, QTreeWidgetItem, QWidget


@pytest.fixture
def window(qtbot, demo_path: Path, tmp_path: Path):
    win = open_window(qtbot, demo_path, tmp_path)
    _wait_rows(qtbot, win)
    yield win
    win.close_store()


def _wait_rows(qtbot, win: MainWindow) -> None:
    qtbot.waitUntil(lambda: win.model is not None and win.model.total is not None and win.model.rowCount() > 0
                    and win.model.memory_at(0) is not None)


def _dismiss_errors(qtbot, win: MainWindow) -> None:
    """Close the (window-modal) error boxes, as a person clicking OK would."""
    for box in win.findChildren(QMessageBox, "error_box"):
        qtbot.mouseClick(box.button(QMessageBox.StandardButton.Ok), Qt.MouseButton.LeftButton)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win)


def _sidebar_item(win: MainWindow, group: str, label: str) -> QTreeWidgetItem:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == group:
            for j in range(top.childCount()):
                if top.child(j).text(0) == label:
                    return top.child(j)
    raise AssertionError(f"no {group}/{label} in the sidebar")


def _click(qtbot, win: MainWindow, item: QTreeWidgetItem) -> None:
    rect = win.sidebar.visualItemRect(item)
    qtbot.mouseClick(win.sidebar.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_opening_shows_the_store_in_sidebar_and_table(qtbot, window: MainWindow) -> None:
    store = window.store
    qtbot.waitUntil(lambda: window.sidebar.topLevelItemCount() > 0)
    assert _sidebar_item(window, "Channels", "rust-cli").text(1) == str(store.counts(MemoryQuery())["channels"]["rust-cli"])
    qtbot.waitUntil(lambda: window.count_label.text() == f"{store.count():,} memories")
    assert window.model.rowCount() == store.count()
    assert "Mnemoscope" in window.windowTitle() and str(store.root) in window.windowTitle()


def test_picking_a_channel_filters_the_table(qtbot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.sidebar.topLevelItemCount() > 0)
    with qtbot.waitSignal(window.model.total_changed) as total:
        _click(qtbot, window, _sidebar_item(window, "Channels", "webshop"))
    assert total.args == [window.store.counts(MemoryQuery())["channels"]["webshop"]]
    _wait_rows(qtbot, window)
    assert {m.channel for m in read_every_row(qtbot, window.model)} == {"webshop"}
    # ...and every other view follows the channel.
    qtbot.waitUntil(lambda: sum(b["memories"] for b in window.view("timeline").chart.data["bins"]) == total.args[0])
    assert window.view("graph").channel_box.currentText() == "webshop"
    qtbot.waitUntil(lambda: bool(window.view("graph").nodes))
    session = window.store._workspace.db.sessions()[0]
    group = next(window.sidebar.topLevelItem(i) for i in range(window.sidebar.topLevelItemCount())
                 if window.sidebar.topLevelItem(i).text(0) == "Sessions")
    group.setExpanded(True)
    with qtbot.waitSignal(window.view("scratchpad").loaded) as shown:
        _click(qtbot, window, next(group.child(j) for j in range(group.childCount())
                                   if group.child(j).toolTip(0).startswith(session.id)))
    assert shown.args == [1] and window.views.currentWidget() is window.view("scratchpad")


def test_keyword_and_hybrid_search_from_the_search_box(qtbot, window: MainWindow) -> None:
    window.memories.search_mode.setCurrentText("keyword")
    qtbot.keyClicks(window.memories.search_box, "Whiskerino")
    with qtbot.waitSignal(window.model.total_changed):
        qtbot.keyClick(window.memories.search_box, Qt.Key.Key_Return)
    _wait_rows(qtbot, window)
    rows = read_every_row(qtbot, window.model)
    assert rows and all("whiskerino" in m.content.lower() for m in rows)
    window.memories.search_mode.setCurrentText("hybrid")
    window.memories.search_box.clear()
    qtbot.keyClicks(window.memories.search_box, "stripe payments")
    qtbot.keyClick(window.memories.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "hits of a hybrid search" in window.count_label.text())
    assert "Stripe" in window.model.memory_at(0).content


def test_select_shows_detail_with_history(qtbot, window: MainWindow) -> None:
    window.table_actions.select_row(0)
    memory = window.model.memory_at(0)
    qtbot.waitUntil(lambda: memory.id in window.detail.toPlainText())
    text = window.detail.toPlainText()
    assert "Promotion thresholds" in text and memory.source.location in text
    # A markdown bullet keeps none of the counts promotion is judged on: shown as not kept, not as 0.
    assert "confidence — (not kept), access_count — (not kept), conversations — (not kept)" in text


def _find_row(qtbot, win: MainWindow, text: str) -> int:
    win.memories.search_mode.setCurrentText("keyword")
    win.memories.search_box.setText(text)
    with qtbot.waitSignal(win.model.total_changed):
        qtbot.keyClick(win.memories.search_box, Qt.Key.Key_Return)
    _wait_rows(qtbot, win)
    return 0


def _select_found(qtbot, win: MainWindow, text: str) -> None:
    """The first hit of a keyword search selected, and what it allows read (on a worker)."""
    win.table_actions.select_row(_find_row(qtbot, win, text))
    qtbot.waitUntil(lambda: win.curation.delete_action.toolTip() != CHECKING)


def test_promote_delete_undo_redo_with_the_keyboard(qtbot, window: MainWindow, demo_path: Path) -> None:
    before = state_of(demo_path)
    _select_found(qtbot, window, "feature flags")
    target = window.table_actions.selected_memories()[0]
    assert target.source.kind is Kind.SQLITE
    with qtbot.waitSignal(window.curated) as promoted:
        qtbot.keyClick(window.table, Qt.Key.Key_P, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    new_id = promoted.args[0].ids[0]
    assert window.store.get(new_id).channel == "_global"
    assert window.store.get(target.id) == target  # the original stays, linked by PROMOTED_FROM
    assert window.curation.undo_action.text() == "&Undo promote"
    with qtbot.waitSignal(window.curated):
        qtbot.keyClick(window.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert state_of(demo_path) == before
    with qtbot.waitSignal(window.curated):
        window.curation.redo_action.trigger()
    assert window.store.get(new_id).channel == "_global"
    with qtbot.waitSignal(window.curated):
        window.curation.undo_action.trigger()
    _select_found(qtbot, window, "feature flags")  # the rows as they are after the undo
    assert [m.id for m in window.table_actions.selected_memories()] == [target.id]
    with qtbot.waitSignal(window.curated):
        qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    assert window.store.get(target.id).status is Status.DELETED
    with qtbot.waitSignal(window.curated):
        window.curation.undo_action.trigger()
    assert state_of(demo_path) == before


def test_edit_in_place_through_the_dialog(qtbot, window: MainWindow) -> None:
    _select_found(qtbot, window, "feature flags")
    target = window.table_actions.selected_memories()[0]
    qtbot.keyClick(window.table, Qt.Key.Key_F2)
    dialog = window.findChild(EditDialog, "edit_dialog")
    assert dialog is not None and dialog.isVisible()
    dialog.content.setPlainText("Dana prefers feature flags, always.")
    dialog.salience.setValue(0.3)
    with qtbot.waitSignal(window.curated):
        dialog.accept()
    edited = window.store.get(target.id)
    assert (edited.content, edited.salience) == ("Dana prefers feature flags, always.", 0.3)
    assert window.store._journal.history(limit=1)[0].operation == "edit"


def test_markdown_memories_offer_only_content_in_the_dialog(qtbot, window: MainWindow) -> None:
    _select_found(qtbot, window, "Drafted release notes")
    target = window.table_actions.selected_memories()[0]
    assert target.source.kind is Kind.MARKDOWN
    window.curation.edit_action.trigger()
    dialog = window.findChild(EditDialog, "edit_dialog")
    assert dialog.content.isEnabled() and not dialog.salience.isEnabled() and not dialog.channel.isEnabled()
    dialog.reject()


def test_a_corrupt_store_gives_a_message_not_a_crash(qtbot, window: MainWindow, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "memory.db").write_bytes(b"garbage" * 500)
    with qtbot.waitSignal(window.error_shown) as shown:
        window.open_path(bad)
    assert "not a SQLite database" in shown.args[0]
    assert window.store is not None  # the open store is kept
    _dismiss_errors(qtbot, window)


def test_recent_stores_and_window_state_are_remembered(qtbot, window: MainWindow, demo_path: Path, tmp_path: Path) -> None:
    assert window.recent.entries()[0] == str(demo_path)
    window.close()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    again = MainWindow(settings)
    qtbot.addWidget(again)
    assert again.recent.entries()[0] == str(demo_path)
    assert [a.text() for a in again.recent.menu.actions()] == [f"&1 {demo_path}"]


def test_scratchpad_view_groups_reserved_keys_and_expands_json(qtbot, window: MainWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.views.currentWidget() is window.view("scratchpad")
    qtbot.waitUntil(lambda: window.view("scratchpad").model.rowCount() == len(window.store._workspace.db.sessions()))
    model = window.view("scratchpad").model
    first = model.item(0, 0)
    groups = {first.child(g, 0).text() for g in range(first.rowCount())}
    assert {"Subagent result", "Session facts (MemoryHook)", "Taskspace path hint", "User and agent keys"} <= groups
    keys = window.view("scratchpad").keys_under(0)
    assert any(k.startswith("subagent_result::") for k in keys) and "todo" in keys
    user = next(first.child(g, 0) for g in range(first.rowCount()) if first.child(g, 0).text() == "User and agent keys")
    todo = next(user.child(k, 0) for k in range(user.rowCount()) if user.child(k, 0).text() == "todo")
    assert {todo.child(i, 0).text() for i in range(todo.rowCount())} == {"open", "done"}


def _salient(window: MainWindow) -> int:
    """How many active memories keep a salience (the workspace markdown keeps none)."""
    assert window.store is not None
    return sum(1 for m in window.store.page(MemoryQuery(), 10_000) if salience_kept(m).kept)


def test_salience_view_shows_histogram_at_risk_and_reinforces(qtbot, window: MainWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    assert window.views.currentWidget() is window.view("salience")
    qtbot.waitUntil(lambda: window.view("salience").at_risk.rowCount() > 0)
    qtbot.waitUntil(lambda: bool(window.view("salience").histogram.bins))  # the at-risk rows come first
    active = window.store.counts()["statuses"]["active"]
    salience = window.view("salience")
    assert sum(b["count"] for b in salience.histogram.bins) + salience.without_salience == active
    effective = [float(window.view("salience").at_risk.item(r, 0).text()) for r in range(window.view("salience").at_risk.rowCount())]
    assert effective == sorted(effective)
    formulas = window.view("salience").formulas.text()  # each decay the seed describes, with its parameters
    assert "Memory salience: min(1, salience x 0.95 ^ days since last access" in formulas
    assert "Entity salience: salience x 0.95 ^ whole days" in formulas
    assert "Inferred-fact confidence: confidence x 0.95 ^ whole weeks" in formulas
    # Markdown keeps no salience: none of its memories is at risk.
    at_risk = window.view("salience").at_risk
    assert not any(at_risk.item(r, 2).text().startswith("md:") for r in range(at_risk.rowCount()))
    # A markdown memory keeps no access count either: Reinforce is not offered for it.
    window.show_view("memories")
    window.table_actions.select_row(0)
    assert window.model.memory_at(0).source.kind.value == "markdown"
    qtbot.waitUntil(lambda: window.curation.delete_action.isEnabled())  # the selection is checked
    assert not window.curation.reinforce_action.isEnabled()
    # A memory.db memory selected in the table: the curve follows it and reinforce raises it.
    _select_found(qtbot, window, "feature flags")
    target = window.table_actions.selected_memories()[0]
    qtbot.waitUntil(lambda: (window.view("salience").curve.report or {}).get("id") == target.id)  # the detail is read on a worker
    with qtbot.waitSignal(window.curated):
        qtbot.keyClick(window.table, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert window.store.get(target.id).access_count == target.access_count + 1


def test_a_hidden_view_reads_a_changed_store_when_shown(qtbot, window: MainWindow) -> None:
    """A step repaints the table; the views behind other tabs read the store again only when
    a person shows them, and then show the store as it is."""
    qtbot.waitUntil(lambda: window.sidebar.topLevelItemCount() > 0)
    # The views' first reads, at open, end first (Salience's in two parts: the rows at risk, then the histogram).
    qtbot.waitUntil(lambda: bool(window.view("salience").histogram.bins))
    qtbot.waitUntil(lambda: bool((window.view("timeline").chart.data or {}).get("bins")))
    reloads: list[str] = []
    window.view("salience").loaded.connect(lambda: reloads.append("salience"))
    window.view("timeline").loaded.connect(lambda: reloads.append("timeline"))
    _select_found(qtbot, window, "feature flags")
    with qtbot.waitSignals([window.curated, window.model.refreshed]):
        qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: running_workers() == 0)  # every read the step started is done: none of a hidden view
    assert reloads == []
    with qtbot.waitSignal(window.view("salience").loaded):
        qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    salience = window.view("salience")
    assert (sum(b["count"] for b in salience.histogram.bins) + salience.without_salience
            == window.store.counts()["statuses"]["active"])
    with qtbot.waitSignal(window.view("timeline").loaded):
        qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert sum(b["memories"] for b in window.view("timeline").chart.data["bins"]) == window.store.count(MemoryQuery(statuses=()))
    qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)  # shown again, nothing changed since
    qtbot.waitUntil(lambda: running_workers() == 0)  # a read it started would have been done by now
    assert reloads == ["salience", "timeline"]


def test_the_sidebar_counts_a_step_even_when_the_query_changes_at_once(qtbot, window: MainWindow) -> None:
    """The sidebar counts again after a step; picking a filter before the table's rows are back
    drops that refresh, and must not drop the count."""
    qtbot.waitUntil(lambda: window.sidebar.topLevelItemCount() > 0)
    before = int(window.sidebar.topLevelItem(0).text(1))
    window.table_actions.select_row(0)
    qtbot.waitUntil(window.curation.delete_action.isEnabled)  # what it allows, read on a worker
    with qtbot.waitSignal(window.curated):
        qtbot.keyClick(window.table, Qt.Key.Key_Delete)
    window.filter_search.apply_filter("channel", "webshop")
    qtbot.waitUntil(lambda: window.sidebar.topLevelItem(0).text(1) == str(before - 1))


class _PaintedRegion(QObject):
    """The region of a widget its paint events covered."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.region = QRegion()
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint:
            self.region = self.region.united(event.region())
        return False


def _settled_rows(qtbot, window: MainWindow) -> None:
    """Nothing more on its way to the table: every worker done, and the Findings flag of each row
    shown scanned (a flag comes in after its row, and repaints its cell)."""
    model, table = window.model, window.table
    last = table.rowAt(table.viewport().height() - 1)
    shown = range(table.rowAt(0), (last if last >= 0 else model.rowCount() - 1) + 1)
    qtbot.waitUntil(lambda: running_workers() == 0 and all(
        (m := model.memory_at(r)) is not None and model.flag_known(m) for r in shown))
    qtbot.wait(50)  # and the paints they asked for


def test_focus_and_activation_changes_repaint_only_the_tables_current_row(qtbot, window: MainWindow) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.table_actions.select_row(2)
    window.memories.search_box.setFocus()
    qtbot.waitUntil(lambda: window.memories.search_box.hasFocus())
    viewport = window.table.viewport()
    row_height = window.table.rowHeight(2)
    painted = _PaintedRegion(viewport)
    for focus in (window.table, window.memories.search_box, window.table):
        _settled_rows(qtbot, window)  # every earlier paint done
        painted.region = QRegion()
        focus.setFocus()
        qtbot.waitUntil(lambda focus=focus: focus.hasFocus())
        qtbot.wait(50)
        bounds = painted.region.boundingRect()
        assert not painted.region.isEmpty(), "the focus frame was not repainted"
        assert bounds.height() <= row_height and bounds.top() == window.table.rowViewportPosition(2), (
            f"a focus change repainted {bounds} of the {viewport.rect()} viewport, not row 2 alone"
        )
    other = QWidget()  # another window taking the activation, as a dialog does, and giving it back
    qtbot.addWidget(other)
    other.show()
    for active in (other, window):
        _settled_rows(qtbot, window)
        painted.region = QRegion()
        active.activateWindow()
        qtbot.waitUntil(lambda active=active: QApplication.activeWindow() is active)
        qtbot.wait(50)
        bounds = painted.region.boundingRect()
        assert bounds.height() <= row_height, f"activating {active} repainted {bounds} of the table, not one row"
    assert window.table.currentIndex().row() == 2 and [m.id for m in window.table_actions.selected_memories()] == [
        window.model.memory_at(2).id]


def test_timeline_bins_sum_to_the_store_and_a_click_lists_a_bin(qtbot, window: MainWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    assert window.views.currentWidget() is window.view("timeline")
    qtbot.waitUntil(lambda: bool(window.view("timeline").chart.data["bins"]))
    bins = window.view("timeline").chart.data["bins"]
    assert sum(b["memories"] for b in bins) == window.store.count(MemoryQuery(statuses=()))
    assert sum(b["turns"] for b in bins) == window.store._workspace.db.table_counts()["turns"]
    with qtbot.waitSignal(window.view("timeline").loaded):
        window.view("timeline").group_box.setCurrentText("channel")
    assert {g for b in window.view("timeline").chart.data["bins"] for g in b["counts"]} == {"_global", "rust-cli", "webshop"}
    busiest = max(window.view("timeline").chart.data["bins"], key=lambda b: b["memories"])
    chart = window.view("timeline").chart
    with qtbot.waitSignal(window.model.total_changed) as total:
        qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=chart.bar_center(busiest["bin"]).toPoint())
    assert total.args == [busiest["memories"]]
    assert window.views.currentWidget() is not window.view("timeline")


def test_graph_view_ego_graph_filters_and_facts(qtbot, window: MainWindow) -> None:
    from mnemoscope.storage.views.graph import graph_view

    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    graph = window.view("graph")
    assert window.views.currentWidget() is graph
    qtbot.waitUntil(lambda: bool(graph.nodes))
    center = graph.center_box.currentData()
    expected, _ = graph_view(window.store, center=center, depth=2)
    assert set(graph.nodes) == set(expected.nodes)
    with qtbot.waitSignal(graph.loaded):
        graph.depth_box.setValue(1)
    assert len(graph.nodes) < expected.number_of_nodes()
    with qtbot.waitSignal(graph.loaded):
        graph.center_box.setCurrentIndex(graph.center_box.findData("e-dana"))
    with qtbot.waitSignal(graph.entity_selected):
        graph.select_entity("e-dana")
    assert "Dana Okafor" in graph.facts.toPlainText()
    assert "The user's name is Dana Okafor" in graph.facts.toPlainText()
    with qtbot.waitSignal(graph.loaded):
        graph.type_box.setCurrentText("KNOWS")
    assert set(graph.nodes) == {"e-dana", "e-priya", "e-marco"}
    assert graph.note.text().startswith("3 entities, 2 relations")


def test_views_follow_an_agent_writing_without_losing_the_selection(qtbot, window: MainWindow, demo_path: Path) -> None:
    import sqlite3

    _select_found(qtbot, window, "Dana")
    chosen = window.table_actions.selected_memories()[0]
    con = sqlite3.connect(demo_path / "memory.db")  # an agent writes meanwhile
    con.execute(
        "INSERT INTO memories (id, layer, channel, content, created_at, updated_at, last_accessed) "
        "VALUES ('m-agentwrote01', 'semantic', '_global', 'Dana asked the agent to remember this', "
        "'2026-11-01T00:00:00+00:00', '2026-11-01T00:00:00+00:00', '2026-11-01T00:00:00+00:00')"
    )
    con.commit()
    con.close()
    with qtbot.waitSignal(window.store_changed):
        pass
    qtbot.waitUntil(lambda: window.model.row_of("m-agentwrote01") is not None)
    qtbot.waitUntil(lambda: [m.id for m in window.table_actions.selected_memories()] == [chosen.id])


@pytest.mark.parametrize("choice", ["Apply my edit", "Keep the store's"])
def test_an_edit_over_an_agents_write_asks_which_to_keep(qtbot, window: MainWindow, demo_path: Path, choice: str) -> None:
    import sqlite3

    window.session.poll_timer.stop()  # the person has the old version on screen
    _select_found(qtbot, window, "feature flags")
    target = window.table_actions.selected_memories()[0]
    con = sqlite3.connect(demo_path / "memory.db")
    con.execute("UPDATE memories SET content = 'Agent: Dana now prefers trunk-based development.' WHERE id = ?", (target.id,))
    con.commit()
    con.close()
    window.curation.edit_action.trigger()
    dialog = window.findChild(EditDialog, "edit_dialog")
    dialog.salience.setValue(0.25)
    with qtbot.waitSignal(window.conflict_shown) as shown:
        dialog.accept()
    box = shown.args[0]
    assert "Agent: Dana now prefers trunk-based development." in box.detailedText()
    assert "salience: 0.25" in box.detailedText()
    button = next(b for b in box.buttons() if b.text() == choice)
    if choice == "Apply my edit":
        with qtbot.waitSignal(window.curated):  # the edit runs on the session's write worker
            qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    else:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    after = window.store.get(target.id)
    assert after.content == "Agent: Dana now prefers trunk-based development."  # the agent's write is never lost
    assert after.salience == (0.25 if choice == "Apply my edit" else target.salience)


def test_import_runs_in_the_background_with_progress(qtbot, window: MainWindow, markdown_only: Path, tmp_path: Path) -> None:
    dest = tmp_path / "merged"
    with qtbot.waitSignal(window.import_finished) as finished:
        window.opening.import_into(markdown_only, dest)
    summary = finished.args[0]
    from mnemoscope.storage import open_store

    with open_store(markdown_only) as source:
        assert summary.imported == source.count()
    assert window.opening.import_dialog.value() == 100 or not window.opening.import_dialog.isVisible()
    with qtbot.waitSignal(window.import_finished) as again:
        window.opening.import_into(markdown_only, dest)
    assert again.args[0].imported == 0 and again.args[0].already_present == summary.imported


def test_scratchpad_model_passes_the_qt_model_tester(qtbot, qtmodeltester, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.view("scratchpad").model.rowCount() > 0)
    qtmodeltester.check(window.view("scratchpad").model)


def test_a_filter_that_hides_the_center_shows_the_rest_not_an_error(qtbot, window: MainWindow) -> None:
    graph = window.view("graph")
    qtbot.waitUntil(lambda: bool(graph.nodes))
    with qtbot.waitSignal(graph.loaded):
        graph.center_box.setCurrentIndex(graph.center_box.findData("e-dana"))
    with qtbot.waitSignal(graph.loaded):
        graph.channel_box.setCurrentText("rust-cli")
    assert "e-rust-cli" in graph.nodes and "e-dana" not in graph.nodes
    assert "not in this channel" in graph.note.text() and window.errors.last_error == ""


def test_mnemoscope_alone_reopens_the_last_store(demo_path: Path, tmp_path: Path) -> None:
    exe = shutil.which("mnemoscope", path=str(Path(sys.executable).parent))
    env = {**os.environ, "MNEMOSCOPE_HOME": str(tmp_path / "home"), "QT_QPA_PLATFORM": "offscreen"}
    first = subprocess.run([exe, str(demo_path), "--screenshot", str(tmp_path / "a.png")], env=env, timeout=120, capture_output=True)
    assert first.returncode == 0, first.stderr
    again = subprocess.run([exe, "--screenshot", str(tmp_path / "b.png")], env=env, timeout=120, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "writing the demo workspace" not in again.stderr  # it reopened demo_path, not the demo
    assert not (tmp_path / "home" / "demo-workspace").exists()


def test_reembed_stale_vectors_from_the_tools_menu(qtbot, window: MainWindow, demo_path: Path) -> None:
    import sqlite3

    con = sqlite3.connect(demo_path / "memory.db")
    stale_id = con.execute("SELECT id FROM memories ORDER BY id LIMIT 1").fetchone()[0]
    con.execute("UPDATE memories SET vector_state = 'stale' WHERE id = ?", (stale_id,))
    con.commit()
    con.close()
    with qtbot.waitSignal(window.curated) as done:
        window.curation.reembed_action.trigger()
    assert done.args[0].ids == [stale_id]
    assert window.store.get(stale_id).metadata["vector_state"] == "fresh"
    assert window.curation.undo_action.text() == "&Undo reembed"


def test_sidebar_table_and_cli_count_the_same_after_curation(qtbot, window: MainWindow, capsys) -> None:
    from mnemoscope.app.cli import main

    window.table_actions.select_row(0)
    with qtbot.waitSignal(window.curated):
        window.curation.delete_selected()
    shown = read_every_row(qtbot, window.model)
    project = next(r for r, m in enumerate(shown)
                   if m.channel != "_global" and m.source.kind is Kind.SQLITE and not window.store.promotion_shortfall(m))
    window.table_actions.select_row(project)
    qtbot.waitUntil(lambda: window.curation.promote_action.isEnabled())
    with qtbot.waitSignal(window.curated):
        window.curation.promote_selected()

    def agree() -> bool:
        top = window.sidebar.topLevelItem(0)
        if top is None or window.model is None:
            return False
        total = int(top.text(1))
        return (
            total == window.model.total
            and total == sum(sidebar_counts(window, "Channels").values())
            and total == sum(sidebar_counts(window, "Kinds").values())
            and total == sum(sidebar_counts(window, "Layers").values())
        )

    # The promoted copy is one more active memory; the original stays active beside it.
    qtbot.waitUntil(lambda: window.model.total == len(shown) + 1 and agree())
    assert main(["ls", str(window.store.root), "--limit", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == window.model.total


def test_promotion_candidates_are_listed_and_promoted_in_one_step(qtbot, window: MainWindow) -> None:
    from mnemoscope.ui.dialogs.candidates_dialog import CandidatesDialog

    assert window.curation.candidates_action.isEnabled()
    expected = [m.id for m in window.store.promotion_candidates()]
    window.curation.candidates_action.trigger()
    dialog = window.findChild(CandidatesDialog, "candidates_dialog")
    qtbot.waitUntil(lambda: dialog.table.rowCount() == len(expected) > 1)
    assert [dialog.table.item(r, 0).text() for r in range(len(expected))] == expected
    assert all(dialog.table.item(r, 1).text() != "_global" for r in range(len(expected)))
    assert not dialog.promote_button.isEnabled()
    dialog.table.selectRow(0)
    with qtbot.waitSignal(window.curated) as promoted:
        qtbot.mouseClick(dialog.promote_button, Qt.MouseButton.LeftButton)
    outcome = promoted.args[0]
    assert outcome.operation == "promote" and window.store.get(outcome.ids[0]).provenance.promoted_from == expected[0]
    assert window.findChild(QMessageBox, "confirm_promote_box") is None  # it met every threshold: nothing to ask
    assert expected[0] not in [m.id for m in window.store.promotion_candidates()]
