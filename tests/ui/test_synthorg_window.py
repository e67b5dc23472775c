"""The window on a SynthOrg store (seed 004), written by the real mem0ai library as SynthOrg's Mem0
backend writes it (tests/storage/formats/test_synthorg.py): every field as SynthOrg reads it."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QTreeWidgetItem

from formats.test_synthorg import company, _company, data_of  # noqa: F401  (fixtures)
from helpers.windows import open_window, sidebar_counts
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS


def _rows(qtbot, win: MainWindow, n: int) -> list:
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == n
                    and all(win.model.memory_at(r) is not None for r in range(n)))
    return [win.model.memory_at(r) for r in range(n)]


def _entry(win: MainWindow, group: str, name: str) -> QTreeWidgetItem:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == group:
            return next(top.child(j) for j in range(top.childCount()) if top.child(j).text(0) == name)
    raise AssertionError(f"no {group} > {name} in the sidebar")


def _lines(win: MainWindow, group: str) -> list[str]:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == group:
            return [top.child(j).text(0) for j in range(top.childCount())]
    return []


def _click(qtbot, win: MainWindow, item: QTreeWidgetItem) -> None:
    with qtbot.waitSignal(win.sidebar.filter_chosen):
        win.sidebar.itemClicked.emit(item, 0)  # as a click on the entry does


def test_the_window_shows_synthorg_as_synthorg_sees_it(qtbot, tmp_path: Path, company):  # noqa: F811
    project, ids = company
    win = open_window(qtbot, data_of(project), tmp_path)
    rows = _rows(qtbot, win, 5)  # the expired entry is not active: not in the table at first
    by_content = {m.content: r for r, m in enumerate(rows)}
    row = by_content["Last sprint the team chose JWT over sessions"]
    assert win.model.index(row, COLUMN_KEYS.index("layer")).data() == "episodic"
    assert win.model.index(row, COLUMN_KEYS.index("channel")).data() == "agent:ceo"
    qtbot.waitUntil(lambda: sidebar_counts(win, "Status") == {"active": 5, "expired": 1})
    assert sidebar_counts(win, "Layers") == {"episodic": 1, "procedural": 2, "semantic": 1, "social": 1}
    assert sidebar_counts(win, "Channels") == {"agent:ceo": 2, "agent:qa-lead": 2, "shared": 1}
    assert sidebar_counts(win, "Tags") == {"lesson": 1, "non-inferable": 3}

    # The detail: category, confidence, tags, scope and publisher as SynthOrg keeps them.
    win.table_actions.select_row(by_content["PRs require 2 approvals"])
    qtbot.waitUntil(lambda: ids["prs"] in win.detail.toPlainText())
    text = win.detail.toPlainText()
    assert "Layer\nprocedural" in text and "Channel\nshared" in text and "publisher\nceo" in text
    assert "Confidence\n0.95" in text and "confidence 0.95 ≥ 0.85" in text
    win.table_actions.select_row(row)
    qtbot.waitUntil(lambda: ids["jwt"] in win.detail.toPlainText())
    text = win.detail.toPlainText()
    assert "Confidence\n0.90" in text and "Tags\nnon-inferable" in text and "_synthorg_" not in text

    # The facets: a layer, the non-inferable tag, the expired status.
    _click(qtbot, win, _entry(win, "Layers", "social"))
    assert [m.content for m in _rows(qtbot, win, 1)] == ["The QA lead prefers detailed test plans"]
    win.filter_search.clear_filters()
    _click(qtbot, win, _entry(win, "Tags", "non-inferable"))
    assert sorted(m.content for m in _rows(qtbot, win, 3)) == [
        "Last sprint the team chose JWT over sessions", "Next time, run the migrations before the tests",
        "The QA lead prefers detailed test plans"]
    assert win.memories.filter_chips.keys() == ["tag"]
    win.filter_search.clear_filters()
    _click(qtbot, win, _entry(win, "Status", "expired"))
    [expired] = _rows(qtbot, win, 1)
    assert (expired.content, expired.status.value) == ("I'm implementing the auth endpoint", "expired")

    # SynthOrg's own settings: levels, retention and its resolution order, the per-agent cap.
    lines = _lines(win, "SynthOrg (mem0 on Qdrant local)")
    assert "max_memories_per_agent: 500 (memory.options.max_memories_per_agent)" in lines
    assert any(line.startswith("agent ceo: 3 memories, 1 expired; level persistent") for line in lines)
    assert any("episodic 7 days (agent per-category rule)" in line for line in lines)
    assert any(line.startswith("retention resolution order: agent per-category rule >") for line in lines)
    win.close_store()
