"""The salience view reads the store's histogram and the memories most at risk through the session,
draws one memory's curve, and asks for a reinforce of the memories picked at risk."""

from __future__ import annotations

from pathlib import Path

from helpers.sessions import open_session
from mnemoscope.storage import Kind, MemoryQuery
from mnemoscope.ui.views.salience_view import SalienceView


def test_the_overview_the_curve_and_a_reinforce_request(qtbot, demo_path: Path) -> None:
    with open_session(qtbot, demo_path) as session:
        store = session.store
        assert store is not None
        view = SalienceView(session)
        qtbot.addWidget(view)
        view.show()
        with qtbot.waitSignal(view.loaded) as loaded:
            view.load()
        assert loaded.args == [view.at_risk.rowCount()] and view.at_risk.rowCount() > 0
        scored = sum(b["count"] for b in view.histogram.bins)
        assert scored + view.without_salience == store.counts()["statuses"]["active"] and view.without_salience > 0
        assert f"({view.without_salience} more keep none" in view.spread_label.text()
        assert view.formulas.text()
        memory = store.page(MemoryQuery(kinds=(Kind.SQLITE,)), 1)[0]
        view.show_memory(store.settings.salience, memory, store.settings.fact_decay)
        assert view.caption.text().startswith(f"{memory.id}: effective") and view.curve.report is not None
        bullet = store.page(MemoryQuery(kinds=(Kind.MARKDOWN,)), 1)[0]  # its file keeps no salience: no curve
        view.show_memory(store.settings.salience, bullet, store.settings.fact_decay)
        assert view.caption.text().startswith(f"{bullet.id}: no salience; no salience (")
        assert view.curve.report is not None and view.curve.report["curve"] == []
        view.select_at_risk(0)
        at_risk = view.at_risk.item(0, 2)
        assert at_risk is not None
        with qtbot.waitSignal(view.reinforce_requested) as requested:
            view.reinforce_button.click()
        assert requested.args == [at_risk.text()]
        view.clear()
        assert view.at_risk.rowCount() == 0 and view.histogram.bins == []


def test_the_memories_at_risk_are_shown_before_the_histogram(qtbot, demo_path: Path) -> None:
    from mnemoscope.storage.views.salience import salience_overview

    with open_session(qtbot, demo_path, read_only=True) as session:
        view = SalienceView(session)
        qtbot.addWidget(view)
        order: list[tuple[str, int]] = []
        view.at_risk_shown.connect(lambda n: order.append(("at risk", len(view.histogram.bins))))
        view.loaded.connect(lambda n: order.append(("loaded", len(view.histogram.bins))))
        with qtbot.waitSignal(view.loaded):
            view.load()
        assert order == [("at risk", 0), ("loaded", 10)]  # the rows first, the histogram drawn after them
        store = session.store
        assert store is not None
        whole = salience_overview(store)  # the CLI's `salience` overview: the same memories, in order
        assert [view.at_risk.item(r, 2).text() for r in range(view.at_risk.rowCount())] == [
            item["id"] for item in whole["at_risk"]]
        assert [b["count"] for b in view.histogram.bins] == [b["count"] for b in whole["histogram"]]
