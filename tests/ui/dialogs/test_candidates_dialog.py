"""Promotion candidates: the facts that meet the thresholds, read through the session; the ones
selected are asked to be promoted."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.ui.dialogs.candidates_dialog import CandidatesDialog


def test_candidates_are_listed_and_the_selection_is_asked_for(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        expected = [m.id for m in store.promotion_candidates()]
        dialog = CandidatesDialog(session)
        qtbot.addWidget(dialog)
        dialog.open()
        qtbot.waitUntil(lambda: [m.id for m in dialog.candidates] == expected)
        assert dialog.table.rowCount() == len(expected)
        assert not dialog.promote_button.isEnabled()
        if expected:
            dialog.table.selectRow(0)
            assert dialog.promote_button.isEnabled()
            with qtbot.waitSignal(dialog.promote_requested) as asked:
                dialog.promote_button.click()
            assert asked.args == [[expected[0]]]
