"""The scratchpad view reads every session's keys (or one session's) through the session, keeps
the selected key across a reload, and asks for an edit, a delete or a transcript."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.ui.views.scratchpad_view import ScratchKey, ScratchpadView


def test_sessions_one_session_and_the_requests(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        view = ScratchpadView(session)
        qtbot.addWidget(view)
        view.show()
        with qtbot.waitSignal(view.loaded) as every:
            view.load()
        assert every.args == [view.model.rowCount()] and every.args[0] > 1
        assert any(view.keys_under(row) for row in range(view.model.rowCount()))
        # One session alone, then every session again.
        sessions = [view.model.item(r, 0).toolTip() for r in range(view.model.rowCount())]
        with qtbot.waitSignal(view.loaded) as one:
            view.show_session(sessions[0])
        assert one.args == [1]
        key = next(k for k in view.keys_under(0) if "::" not in k)
        assert view.select_key(sessions[0], key)
        with qtbot.waitSignal(view.loaded):
            view.load()  # read again: the same session, the same key selected
        selected = view.selected_key()
        assert isinstance(selected, ScratchKey) and (selected.session_id, selected.key) == (sessions[0], key)
        with qtbot.waitSignal(view.delete_requested) as asked:
            view.delete_key_action.trigger()
        assert asked.args == [selected]
        with qtbot.waitSignal(view.transcript_requested) as transcript:
            view.transcript_action.trigger()
        assert transcript.args == [sessions[0]]
        view.clear()
        assert view.model.rowCount() == 0
        with qtbot.waitSignal(view.loaded) as again:
            view.load()  # a cleared view forgets the session it showed
        assert again.args == [len(sessions)]
