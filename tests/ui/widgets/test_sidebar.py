"""The sidebar counts what the store holds (gather_counts, on the real demo store), keeps the groups
the person closed, and turns a click into a filter and a session's double-click into a transcript."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.storage import MemoryQuery, open_store
from mnemoscope.ui.widgets.sidebar import Sidebar, gather_counts


def _group(sidebar: Sidebar, title: str):  # noqa: ANN202
    return next(sidebar.topLevelItem(i) for i in range(sidebar.topLevelItemCount())
                if sidebar.topLevelItem(i).text(0) == title)


def test_counts_filters_and_sessions(qtbot, demo_path: Path) -> None:
    with open_store(demo_path, read_only=True) as store:
        data = gather_counts(store)
        channels = store.counts(MemoryQuery())["channels"]
    sidebar = Sidebar()
    qtbot.addWidget(sidebar)
    sidebar.show_counts(data)
    group = _group(sidebar, "Channels")
    assert {group.child(j).text(0): int(group.child(j).text(1)) for j in range(group.childCount())} == channels
    with qtbot.waitSignal(sidebar.filter_chosen) as chosen:
        sidebar.itemClicked.emit(group.child(0), 0)
    assert chosen.args == ["channel", group.child(0).text(0)]
    group.setExpanded(False)
    sidebar.show_counts(data)  # counted again: the group stays closed
    assert not _group(sidebar, "Channels").isExpanded()
    sessions = _group(sidebar, "Sessions")
    assert sessions.childCount() == len(data["sessions"]) > 0
    with qtbot.waitSignal(sidebar.transcript_requested) as asked:
        sidebar.itemDoubleClicked.emit(sessions.child(0), 0)
    assert asked.args == [data["sessions"][0].id]
