"""The memories table's active filters: one state, and a row of removable chips that shows it.

ActiveFilters is the single source of truth for what the table shows: a sidebar entry per axis
(kind, channel, layer, status), a created-date range (a timeline bin), the memories selected on
the embedding map, and a search (text and mode). Filters compose; each chip removes only its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from mnemoscope.storage import Kind, Layer, MemoryQuery, Order, Status
from mnemoscope.storage.salience import SalienceModel
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

SIDEBAR_AXES = ("kind", "channel", "layer", "status")
SEARCH, DATES, IDS, TAG = "search", "dates", "ids", "tag"
NO_MEMORY = ("",)  # an ids filter no memory matches (ids=() is no filter at all)


@dataclass(frozen=True)
class ActiveFilters:
    # (axis, value), at most one per axis, in SIDEBAR_AXES order; a channel's value may be several
    # channels (an Agentix sub-agent in every scope)
    sidebar: tuple[tuple[str, str | tuple[str, ...]], ...] = ()
    since: datetime | None = None  # created_at in [since, until): a timeline bin
    until: datetime | None = None
    ids: tuple[str, ...] = ()  # memories selected on the embedding map
    tag: str = ""  # a sidebar tag (a store whose tags are counted), and the memories carrying it
    tag_ids: tuple[str, ...] = ()
    search_text: str = ""
    search_mode: str = "hybrid"

    @property
    def searching(self) -> bool:
        return bool(self.search_text)

    def value(self, axis: str) -> str | None:
        chosen = dict(self.sidebar).get(axis)
        return chosen if chosen is None or isinstance(chosen, str) else None

    def channels(self) -> tuple[str, ...]:
        """The channels the sidebar filters by: none, one, or a sub-agent's in every scope."""
        chosen = dict(self.sidebar).get("channel")
        return () if not chosen else (chosen,) if isinstance(chosen, str) else tuple(chosen)

    def with_sidebar(self, axis: str, value: str | tuple[str, ...] | None) -> ActiveFilters:
        """This entry replaces the axis's earlier one ("all" or no value clears every sidebar filter)."""
        if axis not in SIDEBAR_AXES or not value:
            return replace(self, sidebar=(), tag="", tag_ids=())
        chosen = dict(self.sidebar) | {axis: value}
        return replace(self, sidebar=tuple((a, chosen[a]) for a in SIDEBAR_AXES if a in chosen))

    def with_dates(self, since: datetime, until: datetime) -> ActiveFilters:
        return replace(self, since=since, until=until)

    def with_tag(self, tag: str, ids: tuple[str, ...] | list[str]) -> ActiveFilters:
        """The memories carrying tag (its ids, as the sidebar counted them) replace the earlier tag's."""
        return replace(self, tag=tag, tag_ids=tuple(ids))

    def with_ids(self, ids: tuple[str, ...] | list[str] | None) -> ActiveFilters:
        return replace(self, ids=tuple(ids or ()))

    def with_search(self, text: str, mode: str) -> ActiveFilters:
        return replace(self, search_text=text.strip(), search_mode=mode)

    def without(self, key: str) -> ActiveFilters:
        """These filters less the one a chip's key names (SEARCH, DATES, IDS, or a sidebar axis)."""
        if key == SEARCH:
            return replace(self, search_text="")
        if key == DATES:
            return replace(self, since=None, until=None)
        if key == IDS:
            return replace(self, ids=())
        if key == TAG:
            return replace(self, tag="", tag_ids=())
        return replace(self, sidebar=tuple((a, v) for a, v in self.sidebar if a != key))

    def chips(self) -> list[tuple[str, str]]:
        """(key, label) of each active filter, in the order the chips show them."""
        labels = {"kind": "Kind", "channel": "Channel", "layer": "Layer", "status": "Status"}
        out = [(axis, f"{labels[axis]}: {value if isinstance(value, str) else ' + '.join(value)}")
               for axis, value in self.sidebar]
        if self.tag:
            out.append((TAG, f"Tag: {self.tag}"))
        if self.since is not None and self.until is not None:
            statuses = "" if self.value("status") else " (any status)"
            out.append((DATES, f"Created {self.since:%Y-%m-%d} – {self.until:%Y-%m-%d}{statuses}"))
        if self.ids:
            out.append((IDS, f"{len(self.ids):,} selected on the map"))
        if self.searching:
            out.append((SEARCH, f"{self.search_mode.title()} search: “{self.search_text}”"))
        return out

    def describe(self) -> str:
        return ", ".join(label for _key, label in self.chips()) or "no filters"

    def query(self, order: Order = Order.RECENT, descending: bool = True,
              decay: SalienceModel = SalienceModel()) -> MemoryQuery:
        """The store query of every filter but the search (which runs over this query)."""
        status = self.value("status")
        dated = self.since is not None
        statuses: tuple[Status, ...] = (Status(status),) if status else ((), (Status.ACTIVE,))[not dated]
        kind, layer = self.value("kind"), self.value("layer")
        return MemoryQuery(
            channels=self.channels(),
            layers=(Layer(layer),) if layer else (),
            kinds=(Kind(kind),) if kind else (),
            statuses=statuses,
            since=self.since,
            until=self.until,
            ids=self._ids(),
            order=order,
            descending=descending,
            decay=decay,
        )


    def _ids(self) -> tuple[str, ...]:
        """The map's selection, the tag's memories, or those in both."""
        if not self.tag:
            return self.ids
        both = [i for i in self.ids if i in set(self.tag_ids)] if self.ids else list(self.tag_ids)
        return tuple(both) or NO_MEMORY


class FilterChips(QWidget):
    """A row of chips, one per active filter, each with a close button, and "Clear all".
    Signals: removed(str) with the chip's key, cleared()."""

    removed = Signal(str)
    cleared = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("filter_chips")
        self.setAccessibleName("Active filters")
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._title = QLabel("Filters:")
        self._title.setObjectName("filter_chips_title")
        self._layout.addWidget(self._title)
        self._chips: dict[str, QWidget] = {}
        self.clear_button = QPushButton("Clear all")
        self.clear_button.setObjectName("clear_filters_button")
        self.clear_button.setAccessibleName("Clear all filters")
        self.clear_button.setFlat(True)
        self.clear_button.clicked.connect(lambda _checked=False: self.cleared.emit())
        self._layout.addStretch(1)
        self._layout.addWidget(self.clear_button)
        self.show_filters(ActiveFilters())

    def keys(self) -> list[str]:
        return list(self._chips)

    def label_of(self, key: str) -> str:
        label = self._chips[key].findChild(QLabel)
        return label.text() if label is not None else ""

    def close_button(self, key: str) -> QToolButton:
        button = self._chips[key].findChild(QToolButton)
        assert button is not None
        return button

    def show_filters(self, filters: ActiveFilters) -> None:
        for chip in self._chips.values():
            self._layout.removeWidget(chip)
            chip.deleteLater()
        self._chips.clear()
        for position, (key, label) in enumerate(filters.chips(), start=1):
            chip = self._chip(key, label)
            self._layout.insertWidget(position, chip)
            self._chips[key] = chip
        self.setVisible(bool(self._chips))

    def _chip(self, key: str, label: str) -> QWidget:
        chip = QWidget()
        chip.setObjectName(f"filter_chip_{key}")
        chip.setAccessibleName(f"Filter {label}")
        chip.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        chip.setStyleSheet(f"#filter_chip_{key} {{ border: 1px solid palette(mid); border-radius: 9px; }}")
        row = QHBoxLayout(chip)
        row.setContentsMargins(8, 1, 2, 1)
        row.setSpacing(2)
        text = QLabel(label)
        text.setObjectName(f"filter_chip_{key}_label")
        row.addWidget(text)
        close = QToolButton()
        close.setObjectName(f"filter_chip_{key}_remove")
        close.setAccessibleName(f"Remove filter {label}")
        close.setToolTip(f"Remove this filter: {label}")
        close.setText("✕")
        close.setAutoRaise(True)
        close.clicked.connect(lambda _checked=False, k=key: self.removed.emit(k))
        row.addWidget(close)
        return chip
