"""Transcript view: one session's conversation, turn by turn, read a page at a time."""

from __future__ import annotations

import html

from mnemoscope.storage import MemoryStore, Session, Turn
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from ..store_session import StoreSession
from ..theme import readable
from ..widgets.detail_panel import SafeTextBrowser
from .base_view import View

PAGE = 100  # turns read at a time; the next page is read when the reader scrolls to the end
ROLE_COLORS = {"user": "#2f5d9e", "assistant": "#3a9e6a", "system": "#8e44ad", "tool": "#b7950b"}
TOOL_ROLES = ("tool", "function")


def turn_style(turn: Turn) -> str:
    """How a turn is shown: "compaction" (a summary standing for older turns), "tool" (a tool's
    call or output) or "message"."""
    if turn.kind == "compaction":
        return "compaction"
    if turn.kind == "tool" or turn.role in TOOL_ROLES:
        return "tool"
    return "message"


class TranscriptView(View):
    """Signals: loaded(int) with the number of turns shown, failed(object)."""

    name, title, order = "transcript", "Transcript", 50

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(session, parent)
        self.session_box = QComboBox()
        self.session_box.setObjectName("transcript_session")
        self.session_box.setAccessibleName("Session")
        self.session_box.setAccessibleDescription("The session whose conversation is shown")
        self.session_box.setMinimumWidth(280)
        # A long entry (a title with its distance to compaction) must not widen the window and squeeze
        # the sidebar: the box keeps its width and its list opens as wide as the entries need.
        self.session_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.session_box.setMinimumContentsLength(40)
        self.session_box.view().setTextElideMode(Qt.TextElideMode.ElideNone)
        self.session_box.currentIndexChanged.connect(self._on_session_box_changed)
        self.status = QLabel("")
        self.status.setObjectName("transcript_status")
        # Where the owner compacts a session's context: how far this one is from it.
        self.compaction = QLabel("")
        self.compaction.setObjectName("transcript_compaction")
        self.compaction.setAccessibleName("Distance to compaction")
        self.compaction.setWordWrap(True)
        self.compaction.setVisible(False)
        self.browser = SafeTextBrowser()
        self.browser.setObjectName("transcript_browser")
        self.browser.setAccessibleName("Conversation")
        self.browser.setOpenLinks(False)
        self.browser.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Session"))
        bar.addWidget(self.session_box)
        bar.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.compaction)
        layout.addWidget(self.browser, 1)
        self.turns: list[Turn] = []
        self._sessions: list[Session] = []
        self._wanted: str | None = None
        self._generation = 0
        self._loading = False
        self._exhausted = True
        self._appending = False

    # -- sessions -------------------------------------------------------------------------------

    def read_store(self) -> None:
        """Read the store's sessions off the UI thread, then show the wanted session's turns (else
        the one shown, else the first's)."""
        self._generation += 1
        generation = self._generation
        self.read(MemoryStore.sessions, on_result=lambda sessions: self._on_sessions(generation, sessions))

    def show_session(self, session_id: str) -> None:
        """Show one session's conversation (its sessions are read first if not yet)."""
        index = self.session_box.findData(session_id)
        if index >= 0 and self._sessions:
            if index == self.session_box.currentIndex():
                self._read_from_start()
            else:
                self.session_box.setCurrentIndex(index)
        elif self.is_open:
            self._wanted = session_id
            self.load()

    def session_id(self) -> str | None:
        return self.session_box.currentData()

    def forget(self) -> None:
        self._wanted = None
        self._generation += 1
        self._sessions = []
        self.session_box.blockSignals(True)
        self.session_box.clear()
        self.session_box.blockSignals(False)
        self.turns = []
        self.browser.clear()
        self.status.setText("")
        self.compaction.setText("")
        self.compaction.setVisible(False)

    def _on_sessions(self, generation: int, sessions: list[Session]) -> None:
        if generation != self._generation:
            return
        self._sessions = sessions
        keep = self._wanted or self.session_box.currentData()
        self._wanted = None
        self.session_box.blockSignals(True)
        self.session_box.clear()
        for session in sessions:
            when = f"{session.started_at:%Y-%m-%d %H:%M}" if session.started_at else "—"
            until = f" · compaction: {session.compaction.brief()}" if session.compaction is not None else ""
            self.session_box.addItem(f"{session.title or session.id} · {when} · {session.turn_count} turns{until}",
                                     session.id)
            tip = f"{session.id} ({session.channel})"
            if session.compaction is not None:
                tip += f"\n{session.compaction.rule}\n{session.compaction.describe()}"
            self.session_box.setItemData(self.session_box.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        self.session_box.setCurrentIndex(max(self.session_box.findData(keep), 0) if sessions else -1)
        self.session_box.blockSignals(False)
        if not sessions:
            self.turns = []
            self.browser.setHtml("<p>This store keeps no sessions.</p>")
            self.status.setText("")
            self.loaded.emit(0)
            return
        self._read_from_start()

    def _on_session_box_changed(self, _index: int) -> None:
        self._read_from_start()

    # -- turns, a page at a time ----------------------------------------------------------------------

    def _read_from_start(self) -> None:
        session = next((s for s in self._sessions if s.id == self.session_id()), None)
        distance = session.compaction if session is not None else None
        self.compaction.setText(f"Compaction — {distance.describe()}" if distance is not None else "")
        self.compaction.setToolTip(distance.rule if distance is not None else "")
        self.compaction.setVisible(distance is not None)
        self.turns = []
        self.browser.clear()
        self._exhausted = False
        self._generation += 1
        self._loading = False
        self._read_page()

    def load_more(self) -> bool:
        """Read the next page of the session's turns; False when there is none or one is on its way."""
        if self._loading or self._exhausted:
            return False
        self._read_page()
        return True

    def _read_page(self) -> None:
        session_id = self.session_id()
        if not self.is_open or session_id is None:
            return
        self._loading = True
        generation = self._generation
        self.status.setText("reading turns…")
        self.read(MemoryStore.turns, session_id, PAGE, len(self.turns),
                  on_result=lambda turns: self._on_page(generation, turns), on_error=self._on_failed)

    def _on_failed(self, _exc: BaseException) -> None:
        self._loading = False
        self.status.setText("")

    def _on_page(self, generation: int, page: list[Turn]) -> None:
        if generation != self._generation:
            return
        self._loading = False
        self._exhausted = len(page) < PAGE
        self.turns.extend(page)
        if not self.turns:
            self.browser.setHtml("<p>This session has no turns.</p>")
        else:
            bar = self.browser.verticalScrollBar()
            kept = bar.value()
            # append() follows the text to its end when the view was at its end (an empty view
            # is): that is no reader scrolling down, and must not read the next page.
            self._appending = True
            try:
                self.browser.append("".join(self._turn_html(turn) for turn in page))
                bar.setValue(kept)
            finally:
                self._appending = False
        session = next((s for s in self._sessions if s.id == self.session_id()), None)
        total = session.turn_count if session is not None else len(self.turns)
        more = "" if self._exhausted else " — scroll down for more"
        self.status.setText(f"{len(self.turns)} of {max(total, len(self.turns))} turns{more}")
        self.loaded.emit(len(self.turns))

    def _on_scrolled(self, value: int) -> None:
        if self._appending:
            return
        bar = self.browser.verticalScrollBar()
        if value >= bar.maximum() - bar.pageStep() // 4:
            self.load_more()

    def _turn_html(self, turn: Turn) -> str:
        background = self.palette().color(QPalette.ColorRole.Base)
        style = turn_style(turn)
        role_color = readable(ROLE_COLORS.get("tool" if style == "tool" else turn.role, "#7f8c8d"), background, 4.5)
        head = (f"<b style='color:{role_color.name()}'>{html.escape(turn.role or '?')}</b>"
                f" <span style='color:{_muted(self.palette()).name()}'>#{turn.index} · "
                f"{turn.timestamp:%Y-%m-%d %H:%M:%S}</span>")
        body = html.escape(turn.content).replace("\n", "<br>")
        if style == "compaction":
            head += " <i>— compaction summary (stands for the older turns it replaced)</i>"
            body = f"<i>{body}</i>"
        elif style == "tool":
            head += " <i>— tool call / output</i>"
            body = f"<code>{body}</code>"
        tint = _tinted(background, role_color, 0.10 if style == "message" else 0.18)
        return (f"<table width='100%' cellpadding='6' cellspacing='0' bgcolor='{tint.name()}' "
                f"style='margin-bottom:6px'><tr><td>{head}<br>{body}</td></tr></table>")


def _muted(palette: QPalette) -> QColor:
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    return _tinted(text, base, 0.35)


def _tinted(base: QColor, tint: QColor, amount: float) -> QColor:
    """base moved amount of the way toward tint."""
    mix = [b + (t - b) * amount for b, t in zip((base.redF(), base.greenF(), base.blueF()),
                                                 (tint.redF(), tint.greenF(), tint.blueF()), strict=True)]
    return QColor.fromRgbF(*mix)


VIEW = TranscriptView
