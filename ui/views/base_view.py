"""The one shape of a view: a tab of the window that reads the open store through the session.

A view module declares ``VIEW = <its View subclass>``; view_registry.py finds every such module in
this package, and the window builds its tabs and its View menu from what it finds. A view never
holds the store: each read goes through ``StoreSession.read`` (the session drops a result for a
store since closed), and the window tells a view when to read (``load``) and when to forget
(``clear``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from ..store_session import StoreSession
from ..workers import Worker


class View(QWidget):
    """A tab over the open store. Signals: loaded(int) with the number of things it shows now
    (bins, nodes, sessions, turns, points, findings...), failed(object) with the exception a read
    raised, memory_chosen(str) with the id of a memory a view listing memories had selected (the
    window shows it in its detail panel).

    Class attributes the registry and the window read:
    name: the view's key (``show_view(name)``); title: the tab's text and the View menu entry's;
    order: its place among the tabs; read_when_shown: its first read waits until its tab is shown
    (a costly read: every vector, every memory); follows_rows: a change to any memory can change
    what it shows (else only a change to the store's sessions, entities or vectors: an event for
    everything, or one without ids).
    """

    loaded = Signal(int)
    failed = Signal(object)
    memory_chosen = Signal(str)

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    order: ClassVar[int] = 100
    read_when_shown: ClassVar[bool] = False
    follows_rows: ClassVar[bool] = False

    def __init__(self, session: StoreSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setObjectName(f"{self.name}_view")
        self.setAccessibleName(self.title)
        self._open = False  # load() ran since the last clear(): reads follow the person's choices

    @property
    def is_open(self) -> bool:
        """A store is open and this view has read it (or is reading it)."""
        return self._open and self.session.store is not None

    def load(self) -> None:
        """Read the open store again for what the view shows (keeping the person's choices)."""
        self._open = True
        self.read_store()

    def clear(self) -> None:
        """The store closed: show nothing, forget the choices made over it."""
        self._open = False
        self.forget()

    def set_channels(self, channels: tuple[str, ...]) -> None:
        """The table's channel filters changed (none: all channels); a view over channels follows."""

    def read_store(self) -> None:
        """Start the view's reads through ``read``."""
        raise NotImplementedError

    def forget(self) -> None:
        """Empty the view's widgets."""
        raise NotImplementedError

    def read(self, func: Callable[..., Any], *args: Any, on_result: Callable[[Any], None],
             on_error: Callable[[BaseException], None] | None = None, **kwargs: Any) -> Worker | None:
        """func(store, *args, **kwargs) through the session; a failure is emitted as failed (after
        on_error, when given)."""

        def failed(exc: BaseException) -> None:
            if on_error is not None:
                on_error(exc)
            self.failed.emit(exc)

        return self.session.read(func, *args, on_result=on_result, on_error=failed, **kwargs)
