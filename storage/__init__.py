"""Mnemoscope's storage layer: Qt-free, embeddable headless.

    from mnemoscope.storage import open_store, Curator
    with open_store("~/agent-workspace") as store:
        for memory in store.page(MemoryQuery(channels=("_global",)), limit=20):
            print(memory.id, memory.content)
        Curator(store).promote(memory.id)
"""

from .curation import Curator, Outcome
from .errors import (
    ConflictError,
    NotFoundError,
    NothingToDoError,
    ReadOnlyError,
    StoreError,
    UnreadableStoreError,
    UnsupportedError,
)
from .model import (
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
)
from .query import MemoryQuery, Order
from .store import MemoryStore, StoreEvent, StoreSettings, create_workspace, detect, open_store

__all__ = [
    "AuditEntry",
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
    "UnreadableStoreError",
    "UnsupportedError",
    "create_workspace",
    "detect",
    "open_store",
]
