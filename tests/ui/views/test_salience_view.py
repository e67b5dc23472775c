"""The salience view reads the store's histogram and the memories most at risk through the session,
draws one memory's curve, and asks for a reinforce of the memories picked at risk."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import Kind, MemoryQuery
from mnemoscope.storage.salience import salience_kept
from mnemoscope.ui.views.salience_view import SalienceView


def test_the_overview_the_curve_and_a_reinforce_request(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        view = SalienceView(session)
        qtbot.addWidget(view)
        view.show()
        with qtbot.waitSignal(view.loaded, timeout=10_000) as loaded:
            view.load()
        assert loaded.args == [view.at_risk.rowCount()] and view.at_risk.rowCount() > 0
        # every active memory that keeps a salience (memory.db's; the workspace markdown keeps none)
        salient = [m for m in store.page(MemoryQuery(), 10_000) if salience_kept(m).kept]
        assert sum(b["count"] for b in view.histogram.bins) == len(salient) > 0
        assert view.formulas.text()
        memory = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1)[0]
        view.show_memory(store.settings.salience, memory, store.settings.fact_decay)
        assert view.caption.text().startswith(f"{memory.id}: effective")
        view.select_at_risk(0)
        at_risk = view.at_risk.item(0, 2)
        assert at_risk is not None
        with qtbot.waitSignal(view.reinforce_requested) as requested:
            view.reinforce_button.click()
        assert requested.args == [at_risk.text()]
        view.clear()
        assert view.at_risk.rowCount() == 0 and view.histogram.bins == []
