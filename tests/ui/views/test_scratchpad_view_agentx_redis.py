"""The window opened on AgentX's working memory in a real Redis: the scratchpad view lists each
conversation with its channel, its keys with their values and the time their TTL leaves, and no
write time Redis does not keep."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers.redis_server import (
    RUST,
    RUST_SESSION,
    agentx_redis,  # noqa: F401 (fixture)
    redis_server,  # noqa: F401 (fixture)
)
from helpers.windows import open_window
from mnemoscope.storage.model import ABSENT
from mnemoscope.ui.views.scratchpad_view import USER_KEYS, ScratchKey, expiry_text
from PySide6.QtCore import Qt


def test_the_scratchpad_view_shows_redis_keys_with_their_ttl(qtbot, agentx_redis: Any, tmp_path: Path) -> None:  # noqa: F811
    window = open_window(qtbot, agentx_redis.url, tmp_path)
    try:
        qtbot.keyClick(window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
        view = window.view("scratchpad")
        assert window.views.currentWidget() is view
        qtbot.waitUntil(lambda: view.model.rowCount() == 5)
        model = view.model
        assert model.horizontalHeaderItem(3).text() == "Expires (TTL)"
        rows = {model.item(r, 0).toolTip(): r for r in range(model.rowCount())}
        rust = model.item(rows[RUST_SESSION], 0)
        assert model.item(rows[RUST_SESSION], 1).text() == f"{RUST_SESSION} · {RUST}"
        assert sorted(view.keys_under(rows[RUST_SESSION])) == ["context:active_goal", "context:current_file",
                                                               "thoughts", "turns"]
        group = next(rust.child(g, 0) for g in range(rust.rowCount()) if rust.child(g, 0).text() == USER_KEYS)
        shown = {group.child(k, 0).text(): [group.child(k, c).text() for c in range(4)] for k in range(group.rowCount())}
        key, value, updated, expires = shown["context:current_file"]
        assert value == '"src/parser.rs"' and updated == ABSENT
        assert re.fullmatch(r"(9|10) min left \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)", expires), expires
        assert re.fullmatch(r"(59|60) min left \(.*\)", shown["turns"][3]), shown["turns"][3]
        sess = model.item(rows["session:sess-9"], 0)
        no_ttl = {sess.child(0, 0).child(k, 0).text(): sess.child(0, 0).child(k, 3).text()
                  for k in range(sess.child(0, 0).rowCount())}
        assert no_ttl["scratch"] == ""  # no TTL: Redis keeps it until removed
        assert view.select_key(RUST_SESSION, "context:current_file")
        selected = view.selected_key()
        assert isinstance(selected, ScratchKey) and selected.value == '"src/parser.rs"'
        assert view.edit_key_action.isEnabled() and view.delete_key_action.isEnabled()
    finally:
        window.close_store()


def test_an_expiry_reads_in_the_unit_that_fits() -> None:
    at = "2026-11-27T19:12:46.272+00:00"
    assert expiry_text(at, 42) == "42 s left (2026-11-27 19:12 UTC)"
    assert expiry_text(at, 3599).startswith("59 min left") and expiry_text(at, 172_800).startswith("2 days left")
    assert expiry_text(None, None) == ""
