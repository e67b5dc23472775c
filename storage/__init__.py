"""Mnemoscope's storage layer: Qt-free, embeddable headless.

    from mnemoscope.storage import open_store, Curator
    with open_store("~/agent-workspace") as store:
        for memory in store.page(MemoryQuery(channels=("_global",)), limit=20):
            print(memory.id, memory.content)
        Curator(store).promote(memory.id)

The names below are loaded on first use (PEP 562): importing the package costs
nothing, and ``from mnemoscope.storage import Layer`` loads the model only, not
SQLAlchemy or Chroma. ``from mnemoscope.storage import X`` works for every X in
``__all__``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time __getattr__ loads each on first use
    from .curation import Curator, Outcome
    from .errors import (
        BelowThresholdError,
        ConflictError,
        NotFoundError,
        NothingToDoError,
        ReadOnlyError,
        StoreError,
        UnfinishedStepError,
        UnreadableStoreError,
        UnsupportedError,
    )
    from .model import (
        ABSENT,
        GLOBAL_CHANNEL,
        AuditEntry,
        Entity,
        Kind,
        Layer,
        Memory,
        Relation,
        RelationType,
        ScratchEntry,
        Session,
        Status,
        Turn,
        shown,
    )
    from .opening import create_workspace, detect, open_store
    from .query import MemoryQuery, Order
    from .retention import Upcoming
    from .settings import StoreSettings
    from .store import MemoryStore, StoreEvent

# Public name -> the submodule that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Curator", "Outcome"), "curation"),
    **dict.fromkeys(
        (
            "BelowThresholdError",
            "ConflictError",
            "NotFoundError",
            "NothingToDoError",
            "ReadOnlyError",
            "StoreError",
            "UnfinishedStepError",
            "UnreadableStoreError",
            "UnsupportedError",
        ),
        "errors",
    ),
    **dict.fromkeys(
        (
            "ABSENT",
            "GLOBAL_CHANNEL",
            "AuditEntry",
            "Entity",
            "Kind",
            "Layer",
            "Memory",
            "Relation",
            "RelationType",
            "ScratchEntry",
            "Session",
            "Status",
            "Turn",
            "shown",
        ),
        "model",
    ),
    **dict.fromkeys(("MemoryQuery", "Order"), "query"),
    **dict.fromkeys(("MemoryStore", "StoreEvent"), "store"),
    "StoreSettings": "settings",
    "Upcoming": "retention",
    **dict.fromkeys(("create_workspace", "detect", "open_store"), "opening"),
}

__all__ = [
    "ABSENT",
    "AuditEntry",
    "BelowThresholdError",
    "ConflictError",
    "Curator",
    "Entity",
    "GLOBAL_CHANNEL",
    "Kind",
    "Layer",
    "Memory",
    "MemoryQuery",
    "MemoryStore",
    "NotFoundError",
    "NothingToDoError",
    "Order",
    "Outcome",
    "ReadOnlyError",
    "Relation",
    "RelationType",
    "ScratchEntry",
    "Session",
    "Status",
    "StoreError",
    "StoreEvent",
    "StoreSettings",
    "Turn",
    "UnfinishedStepError",
    "UnreadableStoreError",
    "UnsupportedError",
    "Upcoming",
    "create_workspace",
    "detect",
    "open_store",
    "shown",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # __import__, not importlib.import_module: the import statement's own path, so `python -X importtime`
    # shows what each name loads.
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
