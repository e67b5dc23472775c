"""The window on AgentX's own PostgreSQL (seed 002, tests/helpers/agentx_db.py): its goals and
strategies with their lifecycle and success rates, a promoted copy with its provenance, and a
search filtered by channel that says the agent would also be given _global."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from helpers import agentx_db
from helpers.postgres_server import postgres_server  # noqa: F401 (fixture)
from helpers.windows import open_window
from mnemoscope.storage import Curator, open_store
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS


@pytest.fixture
def agentx(postgres_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:  # noqa: F811
    if not postgres_server.has_pgvector:
        pytest.skip("the test PostgreSQL has no pgvector, which the seed's schema needs")
    monkeypatch.setenv("MNEMOSCOPE_HOME", str(tmp_path / "home"))
    name = "win_agentx_" + uuid.uuid4().hex[:8]
    db = agentx_db.build(postgres_server, name)
    yield db
    postgres_server.drop_database(name)


def _group(win: MainWindow, label: str) -> list[str]:
    for i in range(win.sidebar.topLevelItemCount()):
        top = win.sidebar.topLevelItem(i)
        if top.text(0) == label:
            return [top.child(j).text(0) for j in range(top.childCount())]
    return []


def _row_of(qtbot, win: MainWindow, memory_id: str) -> int:  # noqa: ANN001
    def found() -> int | None:
        model = win.model
        if model is None or model.total is None:
            return None
        rows = [r for r in range(model.rowCount()) if (m := model.memory_at(r)) is not None and m.id == memory_id]
        return rows[0] if rows else None

    qtbot.waitUntil(lambda: found() is not None)
    row = found()
    assert row is not None
    return row


def test_goals_and_strategies_show_their_lifecycle_and_success_rates(qtbot, tmp_path: Path, agentx: Any) -> None:  # noqa: ANN001
    win = open_window(qtbot, agentx.url, tmp_path)
    try:
        qtbot.waitUntil(lambda: bool(_group(win, "AgentX PostgreSQL")))
        lines = _group(win, "AgentX PostgreSQL")
        assert lines[0] == "goals: 1 (1 active)" and "[active, priority 2]" in lines[1]
        assert any("success rate 75% (3 succeeded, 1 failed)" in line for line in lines)
        win.table_actions.select_row(_row_of(qtbot, win, "agentx:7"))
        qtbot.waitUntil(lambda: "goal.status" in win.detail.toPlainText())
        text = win.detail.toPlainText()
        assert "goal.status\nactive" in text and "goal.priority\n2" in text
        win.table_actions.select_row(_row_of(qtbot, win, "agentx:4"))
        qtbot.waitUntil(lambda: "strategy.success_rate" in win.detail.toPlainText())
        text = win.detail.toPlainText()
        assert "strategy.success_rate\n0.75" in text
        assert "strategy.tool.cargo_check\n1 uses, 1 succeeded (100% success), 2300 ms average" in text
    finally:
        win.close_store()


def test_a_promoted_copy_and_a_channel_search_as_agentx_would_see_them(qtbot, tmp_path: Path, agentx: Any) -> None:  # noqa: ANN001
    agentx_db.recall_in_new_conversation(agentx, "fact-102", retrievals=2)
    with open_store(agentx.url) as store:
        [copy] = Curator(store).promote("agentx:2").ids
    win = open_window(qtbot, agentx.url, tmp_path)
    try:
        row = _row_of(qtbot, win, copy)
        assert win.model.index(row, COLUMN_KEYS.index("channel")).data() == "_global"
        win.table_actions.select_row(row)
        qtbot.waitUntil(lambda: "Promoted from\nagentx:2" in win.detail.toPlainText())
        win.table_actions.select_row(_row_of(qtbot, win, "agentx:2"))
        qtbot.waitUntil(lambda: "Conversations\n2" in win.detail.toPlainText())

        win.memories.search_mode.setCurrentText("keyword")
        win.filter_search.apply_filter("channel", agentx_db.RUST)
        with qtbot.waitSignal(win.filter_search.searched) as searched:
            win.filter_search.set_filters(win.filter_search.filters.with_search("cargo", "keyword"))
        assert all(hit.memory.channel == agentx_db.RUST for hit in searched.args[0].hits)
        note = win.statusBar().currentMessage()
        assert "would also be given _global" in note and agentx_db.RUST in note
    finally:
        win.close_store()
