"""No field shown in the window that its owner does not keep: the window opens the store of every
tool (the discover home, as tests/storage/formats/test_fields_kept.py builds it) and its table and
detail panel show "—" for a salience, access count, confidence or conversation count the memory's
format does not keep, and a value where it does."""

from __future__ import annotations

from pathlib import Path

import pytest
from detect.test_discover import build_home
from formats.test_fields_kept import KEPT_BY_FORMAT, KEPT_BY_STORE
from formats.test_registry import EXPECTED
from helpers.windows import open_window
from mnemoscope.storage import ABSENT
from mnemoscope.ui.models.memory_table_model import COLUMN_KEYS

# The table's columns for the optional fields (confidence and conversations are in the detail only).
TABLE_COLUMNS = {"salience": COLUMN_KEYS.index("salience"), "access_count": COLUMN_KEYS.index("access_count")}
DETAIL_LINES = {"access_count": "Accesses", "confidence": "Confidence", "conversations": "Conversations"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_home(tmp_path_factory.mktemp("fields-window"))


def _detail_value(text: str, title: str) -> str:
    lines = text.splitlines()
    return lines[lines.index(title) + 1]


def test_the_window_shows_no_field_of_any_tool_that_its_owner_does_not_keep(qtbot, tmp_path: Path,
                                                                           home: dict[str, Path]) -> None:
    looked_at: dict[str, int] = {}
    for label in EXPECTED:
        win = open_window(qtbot, home[label], tmp_path / label.replace(" ", "_"))
        qtbot.waitUntil(lambda: win.model is not None and win.model.rowCount() > 0)
        n = min(win.model.rowCount(), 40)
        qtbot.waitUntil(lambda: all(win.model.memory_at(r) is not None for r in range(n)))
        for row in range(n):
            memory = win.model.memory_at(row)
            fmt = memory.source.format or memory.source.kind.value
            if memory.source.format is None:  # Mnemoscope's own readers (a Chroma directory) keep every field
                continue
            keeps = KEPT_BY_STORE.get(label, KEPT_BY_FORMAT.get(fmt, set()))
            for name, column in TABLE_COLUMNS.items():
                text = win.model.index(row, column).data()
                assert (text == ABSENT) == (name not in keeps), (label, fmt, name, text)
            looked_at[fmt] = looked_at.get(fmt, 0) + 1
            if looked_at[fmt] == 1:  # the detail panel of the first memory of each format
                win.table_actions.select_row(row)
                qtbot.waitUntil(lambda: memory.id in win.detail.toPlainText())
                text = win.detail.toPlainText()
                for name, title in DETAIL_LINES.items():
                    value = _detail_value(text, title)
                    assert (value == ABSENT) == (name not in keeps), (label, fmt, name, value)
        win.close()
    assert {"mem0", "langgraph", "google-adk", "openai-agents", "letta", "crewai", "claude-memory", "agentix",
            "openclaw", "agenticx-index", "facts-db"} <= set(looked_at), looked_at
