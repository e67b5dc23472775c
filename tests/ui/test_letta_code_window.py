"""The window on Letta Code's memory filesystem (written as Letta Code writes it, see
tests/storage/formats/test_letta_code.py): its blocks by layer, a block's description and commits
in the detail, and an edit from the window committed to the repository as the memory tool does."""

from __future__ import annotations

from pathlib import Path

from formats.test_letta_code import AGENT, build_letta_code_home, git, repo_of
from helpers.windows import open_window, sidebar_counts
from test_seed_store_curation_window import _edit_through_dialog, _undo
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS


def test_the_window_shows_letta_codes_blocks_and_their_commits(qtbot, tmp_path: Path) -> None:
    home = build_letta_code_home(tmp_path)
    win = open_window(qtbot, home, tmp_path)
    qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() == 5
                    and all(win.model.memory_at(r) is not None for r in range(5)))
    rows = {win.model.memory_at(r).metadata["label"]: r for r in range(5)}
    assert win.model.index(rows["system/human"], COLUMN_KEYS.index("layer")).data() == "core"
    assert win.model.index(rows["skills/deploy/SKILL"], COLUMN_KEYS.index("layer")).data() == "procedural"
    qtbot.waitUntil(lambda: sidebar_counts(win, "Layers") == {"core": 3, "procedural": 1, "semantic": 1})

    win.table_actions.select_row(rows["system/human"])
    qtbot.waitUntil(lambda: "letta-code history" in win.detail.toPlainText())
    text = win.detail.toPlainText()
    assert "description\nWhat I know about the user" in text
    # Letta Code's own log of the block: its commits, newest first, by the agent, no empty "→"
    history = text[text.index("letta-code history"):]
    assert history.index("User prefers metric units") < history.index("chore: initialize local memory")
    assert f"by Letta Code <{AGENT}@letta.com>" in history and "→" not in history
    assert "Salience (stored)\n—" in text and "Accesses\n—" in text

    before = git(repo_of(home), "show", "HEAD:system/human.md")
    qtbot.waitUntil(lambda: win.curation.edit_action.isEnabled())
    _edit_through_dialog(qtbot, win, "The user is called Dana Reis.")  # committed as the memory tool commits
    assert git(repo_of(home), "show", "HEAD:system/human.md").endswith("\nThe user is called Dana Reis.")
    assert git(repo_of(home), "status", "--porcelain") == ""
    _undo(qtbot, win, "edit")
    assert git(repo_of(home), "show", "HEAD:system/human.md") == before
