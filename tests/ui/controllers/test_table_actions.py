"""The memories table's own tools: a column chooser that is remembered, wrapping, a row context
menu (copy ids, open the source file, show in graph or timeline), export from the window, and
the salience column in effective (decayed) salience, sorted as the salience view ranks it.

The table's model, selection, row menu, columns and export, driven on a real store through the
session: the model is made when asked, a selected row is the memory read, the column choice and
the wrapping are remembered, an export writes the selection."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from helpers.sessions import open_session
from helpers.table_rows import read_every_row
from mnemoscope.app.cli import main
from mnemoscope.storage import Kind, MemoryQuery, Order, Status, open_store
from mnemoscope.ui.controllers.table_actions import TableActions
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS
from mnemoscope.ui.widgets.memory_table import MemoryTable
from PySide6.QtCore import QObject, QSettings, Qt, QUrl, Slot
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QMainWindow

SALIENCE = COLUMN_KEYS.index("salience")
CHANNEL = COLUMN_KEYS.index("channel")


def _open(qtbot, settings: QSettings, path: Path) -> MainWindow:
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    with qtbot.waitSignal(win.store_opened):
        win.open_path(path)
    qtbot.waitUntil(lambda: win.model is not None and win.model.total is not None)
    return win


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, demo_path: Path, settings: QSettings):
    win = _open(qtbot, settings, demo_path)
    yield win
    win.close_store()


def _menu_action(menu, name: str):
    return next(a for a in menu.actions() if a.objectName() == name)


def test_the_column_chooser_hides_and_restores_a_column_and_remembers(qtbot, window: MainWindow, demo_path: Path,
                                                                     settings: QSettings) -> None:
    assert not window.table.isColumnHidden(CHANNEL)
    _menu_action(window.table_actions.column_menu(), "column_channel_action").trigger()
    assert window.table.isColumnHidden(CHANNEL)
    window.close_store()
    settings.sync()
    again = _open(qtbot, QSettings(settings.fileName(), QSettings.Format.IniFormat), demo_path)
    try:
        assert again.table.isColumnHidden(CHANNEL)  # remembered across windows
        action = _menu_action(again.table_actions.column_menu(), "column_channel_action")
        assert not action.isChecked()
        action.trigger()
        assert not again.table.isColumnHidden(CHANNEL)
        assert "channel" not in again.table_actions.hidden_columns()
    finally:
        again.close_store()


def test_wrap_content_shows_whole_memories_on_taller_rows(qtbot, window: MainWindow) -> None:
    rows = read_every_row(qtbot, window.model)
    row = next(r for r, m in enumerate(rows) if "\n" in m.content.strip() or len(m.content) > 150)
    memory = rows[row]
    assert window.model.index(row, 0).data() != memory.content or len(memory.content) <= 200
    window.table_actions.wrap_action.trigger()
    assert window.table.wordWrap() and window.settings.value("memories/wrap", type=bool)
    assert window.model.index(row, 0).data() == memory.content
    window.table.resizeRowToContents(row)
    assert window.table.rowHeight(row) > 22


def test_copy_id_puts_the_selected_ids_on_the_clipboard(qtbot, window: MainWindow) -> None:
    rows = read_every_row(qtbot, window.model)
    window.table_actions.select_row(0)
    _menu_action(window.table_actions.table_menu(), "copy_ids_action").trigger()
    assert QGuiApplication.clipboard().text() == rows[0].id
    window.table.selectRow(1)
    window.table.selectionModel().select(window.model.index(0, 0),
                                         window.table.selectionModel().SelectionFlag.Select
                                         | window.table.selectionModel().SelectionFlag.Rows)
    menu = window.table_actions.table_menu()
    assert _menu_action(menu, "copy_ids_action").text() == "&Copy 2 ids"
    _menu_action(menu, "copy_ids_action").trigger()
    assert QGuiApplication.clipboard().text().split("\n") == [rows[0].id, rows[1].id]


class _Opened(QObject):
    """Where Qt sends file URLs while registered (instead of the desktop's file handler)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_open_source_file_opens_a_markdown_memorys_file_and_not_a_row(qtbot, window: MainWindow) -> None:
    rows = read_every_row(qtbot, window.model)
    bullet = next(r for r, m in enumerate(rows) if m.source.kind is Kind.MARKDOWN)
    row = next(r for r, m in enumerate(rows) if m.source.kind is Kind.SQLITE)
    window.table_actions.select_row(row)
    assert not _menu_action(window.table_actions.table_menu(), "open_source_action").isEnabled()
    window.table_actions.select_row(bullet)
    action = _menu_action(window.table_actions.table_menu(), "open_source_action")
    assert action.isEnabled()
    opened = _Opened()
    QDesktopServices.setUrlHandler("file", opened, "open")
    try:
        action.trigger()
    finally:
        QDesktopServices.unsetUrlHandler("file")
    expected = window.store.root / rows[bullet].source.path
    assert [Path(u.toLocalFile()) for u in opened.urls] == [expected]
    assert expected.is_file()


def test_show_in_graph_and_timeline_switch_view(qtbot, window: MainWindow) -> None:
    rows = read_every_row(qtbot, window.model)
    row = next(r for r, m in enumerate(rows) if m.channel == "webshop")
    window.table_actions.select_row(row)
    _menu_action(window.table_actions.table_menu(), "show_in_timeline_action").trigger()
    assert window.view_names[window.views.currentIndex()] == "timeline"
    assert window.view("timeline")._channels == ("webshop",)
    window.show_view("memories")
    _menu_action(window.table_actions.table_menu(), "show_in_graph_action").trigger()
    assert window.view_names[window.views.currentIndex()] == "graph"
    qtbot.waitUntil(lambda: window.view("graph").channel_box.currentText() == "webshop")  # once its channels are read


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "markdown"])
def test_export_writes_the_filtered_view(qtbot, window: MainWindow, tmp_path: Path, capsys, fmt: str) -> None:
    with qtbot.waitSignal(window.model.total_changed):
        window.filter_search.apply_filter("channel", "webshop")
    shown = read_every_row(qtbot, window.model)
    out = tmp_path / f"webshop.{ {'markdown': 'md'}.get(fmt, fmt) }"
    with qtbot.waitSignal(window.exported) as done:
        window.table_actions.export_to(out, fmt)
    assert done.args[0]["exported"] == len(shown)
    text = out.read_text(encoding="utf-8")
    if fmt == "jsonl":
        assert [json.loads(line)["id"] for line in text.splitlines()] == [m.id for m in shown]
        dest = tmp_path / "imported"
        capsys.readouterr()
        assert main(["import", str(out), str(dest), "--json"]) == 0
        with open_store(dest) as store:
            contents = sorted(m.content for m in store.page(MemoryQuery(statuses=()), limit=1000))
        assert contents == sorted(m.content for m in shown)
    elif fmt == "csv":
        rows = list(csv.DictReader(text.splitlines()))
        assert [r["id"] for r in rows] == [m.id for m in shown] and {r["channel"] for r in rows} == {"webshop"}
    else:
        assert "## webshop" in text and all(m.id in text for m in shown)


def test_export_of_a_selection_writes_only_it(qtbot, window: MainWindow, tmp_path: Path) -> None:
    rows = read_every_row(qtbot, window.model)
    window.table_actions.select_row(2)
    out = tmp_path / "one.jsonl"
    with qtbot.waitSignal(window.exported):
        window.table_actions.export_to(out, "jsonl")
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [rows[2].id]


def test_salience_sorts_and_shows_effective_salience_as_the_salience_view(qtbot, window: MainWindow) -> None:
    window.show_view("salience")
    qtbot.waitUntil(lambda: window.view("salience").at_risk.rowCount() > 0)
    at_risk = [window.view("salience").at_risk.item(r, 2).text() for r in range(window.view("salience").at_risk.rowCount())]
    window.show_view("memories")
    with qtbot.waitSignal(window.model.total_changed):
        window.table.horizontalHeader().setSortIndicator(SALIENCE, Qt.SortOrder.AscendingOrder)
    assert window.model.query.order is Order.EFFECTIVE_SALIENCE and not window.model.query.descending
    rows = read_every_row(qtbot, window.model)
    # The workspace markdown keeps no salience: shown "—", before the rest ascending (as SQL's NULLs).
    unkept = [r for r, m in enumerate(rows) if window.model.effective_salience(m) is None]
    assert unkept == list(range(len(unkept))) and 0 < len(unkept) < len(rows)
    assert {window.model.index(r, SALIENCE).data() for r in unkept} == {"—"}
    kept = rows[len(unkept):]
    assert [m.id for m in kept[: len(at_risk)]] == at_risk
    decay = window.store.settings.salience
    values = [window.model.effective_salience(m) for m in kept]
    assert values == sorted(values)
    assert all(window.model.index(len(unkept) + r, SALIENCE).data() == f"{v:.2f}" for r, v in enumerate(values))
    # Not the stored salience: at least one row shows a decayed value.
    assert any(f"{m.salience:.2f}" != f"{v:.2f}" for m, v in zip(kept, values, strict=True))
    with qtbot.waitSignal(window.model.total_changed):
        window.table.horizontalHeader().setSortIndicator(SALIENCE, Qt.SortOrder.DescendingOrder)
    descending = read_every_row(qtbot, window.model)
    top = [decay.effective(m, window.model._now) for m in descending[: len(kept)]]
    assert top == sorted(top, reverse=True) and len(descending) == len(rows)
    assert [window.model.effective_salience(m) for m in descending[len(kept):]] == [None] * len(unkept)
    assert all(m.status is Status.ACTIVE for m in descending)


def test_model_selection_menus_columns_and_export(qtbot, demo_path: Path, tmp_path: Path) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    table = MemoryTable()
    window.setCentralWidget(table)
    window.show()
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    with open_session(qtbot, demo_path) as session:
        actions = TableActions(session, table, settings, window.statusBar(), {}, window)
        with qtbot.waitSignal(actions.model_attached) as attached:
            model = actions.attach()
        assert attached.args == [model] and table.model() is model and actions.model is model
        model.set_query(model.query)
        qtbot.waitUntil(lambda: model.total is not None and model.memory_at(1) is not None)
        with qtbot.waitSignal(actions.selection_changed):
            actions.select_row(1)
        assert [m.id for m in actions.selected_memories()] == [model.memory_at(1).id]
        menu = actions.table_menu()
        names = [a.objectName() for a in menu.actions() if a.objectName()]
        assert names[:2] == ["copy_ids_action", "open_source_action"]
        assert not next(a for a in menu.actions() if a.objectName() == "show_in_graph_action").isEnabled()  # no graph view
        column = COLUMN_KEYS[1]
        actions.set_column_shown(column, False)
        assert table.isColumnHidden(1) and actions.hidden_columns() == [column]
        chooser = {a.objectName(): a for a in actions.column_menu().actions()}
        assert not chooser[f"column_{column}_action"].isChecked() and not chooser["column_content_action"].isEnabled()
        actions.wrap_action.setChecked(True)
        assert table.wordWrap() and model.wrap and settings.value("memories/wrap", type=bool)
        with qtbot.waitSignal(actions.exported) as exported:
            actions.export_to(tmp_path / "out.jsonl", "jsonl")
        assert exported.args[0]["exported"] == 1
        lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["id"] for line in lines] == [model.memory_at(1).id]
        actions.detach()
        assert actions.model is None and table.model() is None and actions.selected_memories() == []
