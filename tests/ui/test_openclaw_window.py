"""The window on a store OpenClaw wrote itself (helpers/openclaw_cli.py): its memories without the
bootstrap templates, an entry's importance in the detail panel, the transcript chunk beside them."""

from __future__ import annotations

from pathlib import Path

from helpers.openclaw_cli import ASKED, openclaw_home
from helpers.store_state import state_of
from helpers.windows import open_window
from mnemoscope.storage import ABSENT
from mnemoscope.ui.models.memory_table_model import COLUMNS


def test_the_window_shows_openclaw_memories_with_their_importance(qtbot, tmp_path: Path) -> None:
    home = openclaw_home()
    before = state_of(home)
    win = open_window(qtbot, home / ".openclaw", tmp_path)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == 5
                    and all(win.model.memory_at(r) is not None for r in range(5)))
    shown = {win.model.memory_at(r).content: r for r in range(5)}
    assert not [c for c in shown if "AGENTS.md" in c or "SOUL.md" in c or "USER.md" in c]  # no template text
    assert f"User: {ASKED}" in "\n".join(shown)
    assert {win.model.index(r, 3).data() for r in range(5)} == {"openclaw"}

    win.table.selectRow(shown["Keep the gateway on loopback."])
    qtbot.waitUntil(lambda: "importance" in win.detail.toPlainText())  # read on a worker
    lines = win.detail.toPlainText().splitlines()  # the panel's table: a row's label, then its value
    assert lines[lines.index("importance") + 1] == "9"
    assert "<!--" not in "\n".join(lines)
    # What OpenClaw does not keep of an entry is shown absent, never as a value.
    for field in ("Salience (stored)", "Confidence", "Accesses"):
        assert lines[lines.index(field) + 1].split(" ")[0] == ABSENT, field  # (with why, for salience)
    for column in ("salience", "access_count"):  # the table's columns too
        at = [key for key, _title in COLUMNS].index(column)
        assert {win.model.index(r, at).data() for r in range(5)} == {ABSENT}, column

    qtbot.waitUntil(lambda: win.sidebar.topLevelItemCount() > 0)
    groups = {win.sidebar.topLevelItem(i).text(0): win.sidebar.topLevelItem(i) for i in range(win.sidebar.topLevelItemCount())}
    view = groups["OpenClaw workspace markdown"]
    assert "AGENTS.md: all blocks are OpenClaw's bootstrap template text (not listed as memories)" in [
        view.child(j).text(0) for j in range(view.childCount())]

    win.table.selectRow(shown["The build server is ci-02."])
    qtbot.waitUntil(lambda: "The build server is ci-02." in win.detail.toPlainText())
    assert "importance" not in win.detail.toPlainText()  # OpenClaw keeps none for it: none is shown
    win.close_store()
    assert state_of(home) == before
