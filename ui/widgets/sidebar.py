"""The sidebar: what the store holds, counted per kind, channel, layer, status and session."""

from __future__ import annotations

from typing import Any

from mnemoscope.storage import MemoryQuery, MemoryStore
from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import QHeaderView, QMenu, QTreeWidget, QTreeWidgetItem, QWidget

FilterRole = Qt.ItemDataRole.UserRole + 2
GROUPS = (("Kinds", "kinds", "kind"), ("Channels", "channels", "channel"),
          ("Layers", "layers", "layer"), ("Status", "statuses", "status"))


def gather_counts(store: MemoryStore) -> dict[str, Any]:
    """What the sidebar shows and the store's notes (runs on a worker). Kinds, channels and
    layers count what clicking them shows (active memories, as the table does); the Status
    group counts every status."""
    counts = {**store.counts(MemoryQuery()), "statuses": store.counts(axes=("statuses",))["statuses"]}
    counts["sub_agents"] = store.sub_agents(counts["channels"])
    # A tag facet where the store can count its tags: each tag with the ids its entry filters by.
    tags = store.tag_counts(MemoryQuery()) or {}
    counts["tags"] = {tag: (n, store.tagged((tag,)) or []) for tag, n in tags.items()}
    # What the owning tool's own view adds (SynthOrg: its agents, levels, retention, cap).
    owner_views = [(d["label"], d["owner_view"]) for d in (s.describe() for s in store.foreign) if d.get("owner_view")]
    sessions = store.sessions()
    notes = [
        f"{s.label} is read-only: {s.capabilities().read_only_reason}"
        for s in store.foreign
        if s.capabilities().read_only
    ]
    unread = [part.line for part in store.unread()]  # first: the status bar shows the first note
    return {"counts": counts, "sessions": sessions, "notes": unread + notes + store.problems(),
            "owner_views": owner_views, "unread": unread}


class Sidebar(QTreeWidget):
    """Signals: filter_chosen(str, object): a kind ("all", "kind", "channel", "layer",
    "status", "session") and its value; transcript_requested(str): a session's id, on a
    double-click or the context menu of its entry."""

    filter_chosen = Signal(str, object)
    transcript_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sidebar")
        self.setHeaderLabels(["Store", "Count"])
        # The counts always in view, the names given the rest: a long line (a channel, an owner's
        # note) is elided, its whole text in its tooltip.
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.setAccessibleName("Store contents")
        self.itemClicked.connect(self._on_item_clicked)
        self.itemDoubleClicked.connect(self._on_item_double_clicked)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._on_context_menu)

    def show_counts(self, data: dict[str, Any]) -> None:
        """Show gather_counts() output, keeping which groups the person opened or closed."""
        groups = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        was = {item.text(0): item.isExpanded() for item in groups if item is not None and item.childCount()}
        self.clear()
        counts = data["counts"]
        everything = QTreeWidgetItem(["All memories", str(counts["statuses"].get("active", 0))])
        everything.setToolTip(0, "Active memories; copies of one memory counted once")
        everything.setData(0, FilterRole, ("all", None))
        self.addTopLevelItem(everything)
        if data.get("unread"):  # parts a missing package left unread: not in any count below
            group = QTreeWidgetItem(["Not read here", ""])
            group.setToolTip(0, "Parts of the store this install cannot read; not counted")
            self.addTopLevelItem(group)
            for line in data["unread"]:
                item = QTreeWidgetItem([line.split(" (", 1)[0], ""])
                item.setToolTip(0, line)
                group.addChild(item)
            group.setExpanded(True)
        for title, key, kind in GROUPS:
            group = QTreeWidgetItem([title, ""])
            group.setToolTip(0, "Every status" if key == "statuses" else "Active memories, as the table shows them")
            self.addTopLevelItem(group)
            for value, n in sorted(counts[key].items()):
                item = QTreeWidgetItem([value, str(n)])
                item.setData(0, FilterRole, (kind, value))
                group.addChild(item)
            group.setExpanded(was.get(title, True))
        if counts.get("sub_agents"):  # Agentix: a sub-agent's memories in every scope
            group = QTreeWidgetItem(["Sub-agents", ""])
            group.setToolTip(0, "Each sub-agent's memories in every scope (project, local, user)")
            self.addTopLevelItem(group)
            for agent, (channels, n) in counts["sub_agents"].items():
                item = QTreeWidgetItem([agent, str(n)])
                item.setToolTip(0, ", ".join(channels))
                item.setData(0, FilterRole, ("channel", channels))
                group.addChild(item)
            group.setExpanded(was.get("Sub-agents", True))
        if counts.get("tags"):
            group = QTreeWidgetItem(["Tags", ""])
            group.setToolTip(0, "Active memories carrying each tag")
            self.addTopLevelItem(group)
            for tag, (n, ids) in counts["tags"].items():
                item = QTreeWidgetItem([tag, str(n)])
                item.setData(0, FilterRole, ("tag", (tag, tuple(ids))))
                group.addChild(item)
            group.setExpanded(was.get("Tags", True))
        for label, lines in data.get("owner_views", []):  # as the owning tool sees its store
            group = QTreeWidgetItem([label, ""])
            self.addTopLevelItem(group)
            for line in lines:
                item = QTreeWidgetItem([line, ""])
                item.setToolTip(0, line)
                group.addChild(item)
            group.setExpanded(was.get(label, False))
        if data["sessions"]:
            group = QTreeWidgetItem(["Sessions", str(len(data["sessions"]))])
            self.addTopLevelItem(group)
            for session in data["sessions"]:
                item = QTreeWidgetItem([session.title or session.id, str(session.turn_count)])
                tip = f"{session.id} ({session.channel}) — double-click to read the conversation"
                if session.compaction is not None:  # the owner compacts its context (AgenticX)
                    tip += f"\nCompaction: {session.compaction.describe()}"
                    item.setToolTip(1, session.compaction.brief())
                item.setToolTip(0, tip)
                item.setData(0, FilterRole, ("session", session.id))
                group.addChild(item)
            group.setExpanded(was.get("Sessions", False))

    def _on_item_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        spec = item.data(0, FilterRole)
        if spec:
            self.filter_chosen.emit(*spec)

    def _session_of(self, item: QTreeWidgetItem | None) -> str | None:
        spec = item.data(0, FilterRole) if item is not None else None
        return spec[1] if spec and spec[0] == "session" else None

    def _on_item_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        session_id = self._session_of(item)
        if session_id:
            self.transcript_requested.emit(session_id)

    def _on_context_menu(self, pos: QPoint) -> None:
        session_id = self._session_of(self.itemAt(pos))
        if not session_id:
            return
        menu = QMenu(self)
        menu.setObjectName("sidebar_session_menu")
        menu.addAction("Read &transcript", lambda: self.transcript_requested.emit(session_id))
        menu.popup(self.viewport().mapToGlobal(pos))
