"""The window on a five-layer agent's workspace (seed 003): the agent's decay score shown as it
keeps it, once, in the table, the detail panel and the salience view; its identity and bootstrap
files (SOUL.md, AGENTS.md, USER.md, HEARTBEAT.md, learnings/) showing no salience and never at risk."""

from __future__ import annotations

from pathlib import Path

from formats.test_facts_db import IDENTITY_FILES, add_identity_files, agent_connection, build_facts_workspace
from helpers.windows import open_window
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS
from PySide6.QtCore import Qt

SALIENCE = COLUMN_KEYS.index("salience")
OWNERS = "the agent's decay score: shown as the owner keeps it, not decayed again"
NONE_KEPT = "no salience (workspace markdown keeps none)"


def _workspace(tmp_path: Path) -> Path:
    workspace = add_identity_files(build_facts_workspace(tmp_path / "workspace"))
    con = agent_connection(workspace / "facts.db")
    con.execute("UPDATE facts SET decay_score = 0.95 WHERE id = 'fact_tz'")
    con.execute("UPDATE facts SET decay_score = 0.05 WHERE id = 'fact_deploy'")
    con.close()
    return workspace


def _salience_cells(win: MainWindow) -> dict[str, tuple[str, str]]:
    """Per memory id: the Salience column's text and tooltip, as the table shows them."""
    model = win.model
    cells = {}
    for row in range(model.rowCount()):
        index = model.index(row, SALIENCE)
        cells[model.memory_at(row).id] = (model.data(index, Qt.ItemDataRole.DisplayRole),
                                          model.data(index, Qt.ItemDataRole.ToolTipRole))
    return cells


def _select(qtbot, win: MainWindow, memory_id: str) -> None:
    row = next(r for r in range(win.model.rowCount()) if win.model.memory_at(r).id == memory_id)
    win.table_actions.select_row(row)
    qtbot.waitUntil(lambda: memory_id in win.detail.toPlainText())


def test_the_agents_decay_score_is_shown_as_it_keeps_it_and_its_identity_files_show_none(qtbot, tmp_path: Path) -> None:
    win = open_window(qtbot, _workspace(tmp_path), tmp_path)
    total = 9 + len(IDENTITY_FILES)
    qtbot.waitUntil(lambda: win.model.rowCount() == total and all(
        win.model.memory_at(r) is not None for r in range(total)))
    cells = _salience_cells(win)
    assert cells["fact:facts.db:fact_tz"] == ("0.95", OWNERS)  # not 0.00: decayed once, by the agent
    assert cells["fact:facts.db:fact_deploy"][0] == "0.05" and cells["fact:facts.db:fact_cat"][0] == "1.00"
    markdown = {memory_id: cell for memory_id, cell in cells.items() if memory_id.startswith("md:")}
    assert {memory_id.split(":")[1] for memory_id in markdown} >= set(IDENTITY_FILES)
    assert set(markdown.values()) == {("—", NONE_KEPT)}  # no invented 0.50

    _select(qtbot, win, "fact:facts.db:fact_tz")
    assert f"Salience (stored)0.95 ({OWNERS})" in win.detail.toPlainText().replace("\t", "").replace("\n", "")
    qtbot.waitUntil(lambda: (win.view("salience").curve.report or {}).get("id") == "fact:facts.db:fact_tz")
    assert win.view("salience").caption.text() == f"fact:facts.db:fact_tz: salience 0.950 now; {OWNERS}."
    soul = next(memory_id for memory_id in markdown if memory_id.startswith("md:SOUL.md:"))
    _select(qtbot, win, soul)
    assert f"Salience (stored)— ({NONE_KEPT})" in win.detail.toPlainText().replace("\t", "").replace("\n", "")
    qtbot.waitUntil(lambda: (win.view("salience").curve.report or {}).get("id") == soul)
    assert win.view("salience").caption.text() == f"{soul}: no salience; {NONE_KEPT}."

    view = win.view("salience")
    win.show_view("salience")
    qtbot.waitUntil(lambda: view.at_risk.rowCount() > 0)
    at_risk = [[view.at_risk.item(r, c).text() for c in range(4)] for r in range(view.at_risk.rowCount())]
    # only the facts, weakest first, at the agent's own scores; no markdown file, no crossing date of ours
    assert [row[2] for row in at_risk][:2] == ["fact:facts.db:fact_deploy", "fact:facts.db:fact_tz"]
    assert all(row[2].startswith("fact:") for row in at_risk) and len(at_risk) == 4
    assert at_risk[0][:2] == ["0.050 (owner's)", "—"] and at_risk[1][0] == "0.950 (owner's)"
    qtbot.waitUntil(lambda: bool(view.histogram.bins))  # read once the rows at risk are shown
    assert sum(b["count"] for b in view.histogram.bins) == 4
    assert f"Facts-db salience: {OWNERS}" in view.formulas.text()
    win.close_store()
