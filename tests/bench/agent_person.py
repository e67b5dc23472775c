"""An agent writing memories while a person edits in the window: the scenario of issue 29, driven
for a given time (tests/bench/test_agent_editing_heartbeat_bench.py measures its UI-thread gaps,
tests/ui/test_agent_editing_window.py checks that the UI thread touches no storage meanwhile).

The store: the demo workspace (memory.db, vectors, markdown) with `bulk` more memories in
memory.db. The agent: a process of its own (bench/agent_rows.py) INSERTing RATE memories a second
into memory.db with its own connection, one commit each: the window sees them through its poll
(every two seconds) and reads them back as it does any other process's write. The person,
scripted with pytest-qt, goes round ROUND: selects a row and reads down a few, opens the edit
dialog (F2), types, saves, searches and clears the search, shows the timeline and the salience
tabs and comes back, undoes (Ctrl+Z), with a person's pause between steps. Each step waits for
what it asked for (the window's signals, the state shown); a timeout only guards against a hang.
"""

from __future__ import annotations

import multiprocessing
import random
import sqlite3
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bench import agent_rows, native_store
from bench.ui_thread_gaps import MachineAwareHeartbeat
from mnemoscope.storage.demo import write_demo
from mnemoscope.ui.controllers.curation_actions import CHECKING
from mnemoscope.ui.dialogs.conflict_dialog import KEEP
from mnemoscope.ui.dialogs.edit_dialog import EditDialog
from mnemoscope.ui.main_window import MainWindow
from mnemoscope.ui.workers import running_workers
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

RATE = 20.0  # the agent's memories a second
HANG_MS = 120_000  # a hang guard, never a pace
ROUND = ("select", "edit", "search", "select", "tabs", "undo")
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def build_store(path: Path, bulk: int) -> Path:
    """The demo workspace at path with bulk more memories in its memory.db."""
    write_demo(path, now=NOW).close()
    con = sqlite3.connect(path / "memory.db")
    sql = (f"INSERT INTO memories ({', '.join(native_store.COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(native_store.COLUMNS))})")
    with con:
        con.executemany(sql, native_store.rows(0, bulk))
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return path


def _settled(qtbot, win: MainWindow, extra=lambda: True) -> None:  # noqa: ANN001
    qtbot.waitUntil(lambda: win.model is not None and win.model.total is not None and win.model.memory_at(0) is not None
                    and extra(), timeout=HANG_MS)


def _active(qtbot, win: MainWindow) -> None:
    """Back on the window's table, so that its shortcuts reach it."""
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=HANG_MS)
    win.table.setFocus()


def _pause(qtbot, rng: random.Random) -> None:
    """A person's pause between two steps (the agent's writes and the window's reads go on)."""
    qtbot.wait(rng.randint(150, 400))


class Person:
    """A person at the window: each step waits for what it asked to be shown, on the window's signals.

    A step's outcome (outcomes) is its operation once curated, "conflict" when the memory changed
    under an edit (the person keeps the store's version), or "busy" when the store was locked
    past its timeout by another program's write (the window says so; the person closes the
    message and goes on). Any other error the window shows is kept in failed."""

    def __init__(self, qtbot, win: MainWindow, beat: MachineAwareHeartbeat, rng: random.Random) -> None:  # noqa: ANN001
        self.qtbot, self.win, self.beat, self.rng = qtbot, win, beat, rng
        self.done: Counter[str] = Counter()
        self.outcomes: list[str] = []
        self.failed: list[str] = []
        self.conflicts: list[Any] = []
        win.curated.connect(lambda outcome: self.outcomes.append(outcome.operation))
        win.conflict_shown.connect(self._on_conflict_shown)
        win.error_shown.connect(self._on_error_shown)

    def _on_conflict_shown(self, box: Any) -> None:
        self.conflicts.append(box)
        self.outcomes.append("conflict")

    def _on_error_shown(self, text: str) -> None:
        busy = "locked" in text or "busy" in text
        self.outcomes.append("busy" if busy else "failed")
        if not busy:
            self.failed.append(text)
        for box in self.win.findChildren(QMessageBox, "error_box"):  # read, and closed
            box.close()

    def _answered(self, before: int) -> str:
        """Wait for the outcome of the step just asked for (outcomes had before entries)."""
        self.qtbot.waitUntil(lambda: len(self.outcomes) > before, timeout=HANG_MS)
        return self.outcomes[before]

    def step(self, name: str) -> None:
        self.beat.step = name
        getattr(self, name)()
        self.done[name] += 1
        self.beat.step = "pause"
        _pause(self.qtbot, self.rng)

    def select(self) -> None:
        win, qtbot = self.win, self.qtbot
        _active(qtbot, win)
        row = self.rng.randrange(min(30, win.model.rowCount()))
        qtbot.waitUntil(lambda: win.model.memory_at(row) is not None, timeout=HANG_MS)
        win.table_actions.select_row(row)
        qtbot.waitUntil(lambda: len(win.table_actions.selected_memories()) == 1
                        and win.curation.delete_action.toolTip() != CHECKING, timeout=HANG_MS)
        for _ in range(self.rng.randint(1, 3)):  # down a row or two, reading
            qtbot.keyClick(win.table, Qt.Key.Key_Down)
        qtbot.waitUntil(lambda: win.curation.edit_action.toolTip() != CHECKING, timeout=HANG_MS)

    def edit(self) -> None:
        win, qtbot = self.win, self.qtbot
        if not win.curation.edit_action.isEnabled():  # a markdown heading, a read-only copy: another row
            self.select()
            if not win.curation.edit_action.isEnabled():
                return
        _active(qtbot, win)
        before = len(self.outcomes)
        qtbot.keyClick(win.table, Qt.Key.Key_F2)
        qtbot.waitUntil(lambda: _shown_edit_dialog(win) is not None, timeout=HANG_MS)
        dialog = _shown_edit_dialog(win)
        assert dialog is not None
        if dialog.content.isEnabled():
            dialog.content.moveCursor(dialog.content.textCursor().MoveOperation.End)
            qtbot.keyClicks(dialog.content, f" (checked {self.done['edit']})")
        elif dialog.salience.isEnabled():
            dialog.salience.setValue(0.42 if abs(dialog.salience.value() - 0.42) > 0.01 else 0.43)
        save = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
        qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
        if self._answered(before) == "conflict":  # the row changed meanwhile: keep the store's version
            box = self.conflicts[-1]
            qtbot.mouseClick(next(b for b in box.buttons() if b.text() == KEEP), Qt.MouseButton.LeftButton)

    def search(self) -> None:
        win, qtbot = self.win, self.qtbot
        box = win.memories.search_box
        box.setFocus()
        with qtbot.waitSignal(win.searched, timeout=HANG_MS):
            qtbot.keyClicks(box, self.rng.choice(("invoice", "deploy", "Dana", "agent note", "latency")))
            qtbot.keyClick(box, Qt.Key.Key_Return)
        _pause(qtbot, self.rng)
        box.clear()  # back to the whole table
        _settled(qtbot, win, lambda: not win.filter_search.filters.searching)

    def tabs(self) -> None:
        win, qtbot = self.win, self.qtbot
        for key in (Qt.Key.Key_2, Qt.Key.Key_4):  # the timeline, the salience view
            qtbot.keyClick(win, key, Qt.KeyboardModifier.ControlModifier)
            _pause(qtbot, self.rng)
        qtbot.keyClick(win, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)

    def undo(self) -> None:
        win, qtbot = self.win, self.qtbot
        if not win.curation.undo_action.isEnabled():
            return
        _active(qtbot, win)
        before = len(self.outcomes)
        qtbot.keyClick(win.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        self._answered(before)


def _shown_edit_dialog(win: MainWindow) -> EditDialog | None:
    shown = [d for d in win.findChildren(EditDialog) if d.isVisible()]
    return shown[-1] if shown else None


def run(qtbot, root: Path, tmp_path: Path, seconds: float,  # noqa: ANN001
        hook: bool = False) -> tuple[MachineAwareHeartbeat, Person, dict[str, Any]]:
    """Open root in a window, then the agent writes and the person edits for seconds, measured by a
    heartbeat on the UI thread (hook: it also records storage calls made on the UI thread)."""
    win = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    qtbot.waitExposed(win)
    with qtbot.waitSignal(win.store_opened, timeout=HANG_MS):
        win.open_path(root)
    _settled(qtbot, win, lambda: win.sidebar.topLevelItemCount() > 0 and running_workers() == 0)
    beat = MachineAwareHeartbeat(hook)
    person = Person(qtbot, win, beat, random.Random(29))
    ctx = multiprocessing.get_context("spawn")  # nothing of Qt's or the open store's state crosses
    started, results = ctx.Event(), ctx.Queue()
    agent = ctx.Process(target=agent_rows.write_rows, args=(str(root), RATE, seconds, started, results))
    agent.start()
    try:
        assert started.wait(HANG_MS / 1000)
        with beat.measure("agent and person"):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                for name in ROUND:
                    person.step(name)
            beat.step = "last reads"
            written = results.get(timeout=HANG_MS / 1000)
            newest = agent_rows.agent_row(written["written"] - 1, "")[0]  # the agent's last row: the table shows it
            _settled(qtbot, win, lambda: win.model.row_of(newest) is not None and running_workers() == 0)
    finally:
        beat.close()
        agent.join(timeout=HANG_MS / 1000)
    assert person.failed == [], person.failed
    win.close_store()
    qtbot.waitUntil(lambda: not win.session.closing and running_workers() == 0, timeout=HANG_MS)
    win.close()
    return beat, person, written
