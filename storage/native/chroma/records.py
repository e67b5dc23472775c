"""What a Chroma record is to Mnemoscope, for a local directory (local.py) and a server
(server.py) alike: its id (``vec:<collection>:<record>``), the metadata keys Mnemoscope reads
and writes, the record read as a Memory, its revision, and the plans that carry out a curation
operation on it (edit, delete, restore, purge, reinforce, re-embed, promote)."""

from __future__ import annotations

import copy
import hashlib
import json
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from ... import bounded_json
from ...errors import NotFoundError, NothingToDoError, UnsupportedError
from ...model import GLOBAL_CHANNEL, Kind, Layer, Memory, Provenance, SourceRef, Status, parse_layer, parse_status
from ...source import DELETE, EDIT, PROMOTE, PURGE, REEMBED, REINFORCE, RESTORE, Change, Plan, PlanContext, Snapshot
from ...timeutil import parse_time, utcnow

NATIVE_COLLECTION = "memories"  # the collection of a native workspace's vector copies
TEXT_KEYS = ("data", "text", "content", "memory", "document", "page_content")  # where tools keep a record's text
MIRROR_KEY = "mnemoscope_mirror"  # a record that is the vector copy of a memory.db memory
STALE_KEY = "mnemoscope_stale"  # a record whose text changed without a new embedding


def record_id_for(collection: str, record_id: str) -> str:
    return f"vec:{collection}:{record_id}"


def split_record_id(record_id: str) -> tuple[str, str]:
    if not record_id.startswith("vec:") or ":" not in record_id[4:]:
        raise NotFoundError(f"{record_id!r} is not a vector record id (vec:<collection>:<id>).")
    name, _, key = record_id[4:].partition(":")
    return name, key


def number_or(value: Any, default: Any) -> Any:
    """value as a float, default when it is missing or no number."""
    try:
        return float(value) if value is not None else default
    except (TypeError, ValueError):
        return default


_MAPPED_KEYS = {
    "created_at",
    "timestamp",
    "updated_at",
    "last_accessed",
    "access_count",
    "salience",
    "confidence",
    "conversations",
    "tags",
    "layer",
    "category",
    "memory_type",
    "channel",
    "status",
    "promoted_from",
    *TEXT_KEYS,
}


def record_memory(
    label: str,
    name: str,
    record_id: str,
    document: str | None,
    meta: dict[str, Any],
    revision: str = "",
    stored: Callable[[], datetime | None] | None = None,
) -> Memory:
    """A Chroma record as a memory: label names the directory (or server) it lives in; stored(),
    when Chroma stored the record (the creation time of one whose metadata keeps none it can
    read; without it, such a record reads as made now)."""
    text = document or next((str(meta[k]) for k in TEXT_KEYS if meta.get(k)), "")
    created = parse_time(meta.get("created_at") or meta.get("timestamp"), None)
    created = created or (stored() if stored is not None else None) or utcnow()
    updated = parse_time(meta.get("updated_at"), created)
    raw_tags = meta.get("tags") or ()
    tags = raw_tags
    if isinstance(raw_tags, str):
        try:
            loaded = bounded_json.loads(raw_tags)
            tags = loaded if isinstance(loaded, list) else [raw_tags]
        except json.JSONDecodeError:
            tags = [t.strip() for t in raw_tags.split(",") if t.strip()]
    layer_value = meta.get("layer") or meta.get("category") or meta.get("memory_type")
    extra = {k: v for k, v in meta.items() if k not in _MAPPED_KEYS}
    return Memory(
        id=record_id_for(name, record_id),
        source=SourceRef(Kind.CHROMA, f"{label}:{name}/{record_id}", path=label),
        layer=parse_layer(layer_value, Layer.SEMANTIC),
        channel=str(meta.get("channel") or GLOBAL_CHANNEL),
        content=text,
        created_at=created,
        updated_at=updated or created,
        last_accessed=parse_time(meta.get("last_accessed"), updated) or created,
        # A field the record's metadata does not hold is one its writer does not keep: absent.
        access_count=int(meta["access_count"] or 0) if "access_count" in meta else None,
        salience=number_or(meta.get("salience"), None),
        confidence=number_or(meta.get("confidence"), None),
        conversations=int(meta["conversations"] or 0) if "conversations" in meta else None,
        tags=tuple(str(t) for t in tags),
        metadata=extra,
        status=parse_status(meta.get("status") or "active"),
        provenance=Provenance(promoted_from=meta.get("promoted_from")),
        revision=revision,
    )


def record_plan(snap: Snapshot, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
    """The changes that carry out operation on a vector record read as snap (ChromaSource.plan,
    and a Chroma server's)."""
    if operation == EDIT:
        new = edited_record(snap, fields, context)
        return Plan([] if new == snap else [Change(memory.id, snap, new)])
    if operation == PURGE:
        return Plan([Change(memory.id, snap, None)])
    if operation in (DELETE, RESTORE):
        status = Status.DELETED if operation == DELETE else Status.ACTIVE
        return Plan([Change(memory.id, snap, with_metadata(snap, status=status.value, updated_at=context.now))])
    if operation == REINFORCE:
        new = with_metadata(snap, access_count=(memory.access_count or 0) + 1, last_accessed=context.now)
        return Plan([Change(memory.id, snap, new)])
    if operation == REEMBED:
        new = copy.deepcopy(snap)
        new["metadata"].pop(STALE_KEY, None)
        return Plan([Change(memory.id, snap, new)], embed_text=record_text(snap))
    if operation == PROMOTE:
        to = fields["to"]
        if memory.channel == to:
            raise NothingToDoError(f"{memory.id} is already in channel {to}.")
        name, _ = split_record_id(memory.id)
        promoted_id = record_id_for(name, f"p-{uuid.uuid4().hex[:12]}")
        promoted = with_metadata(
            snap, channel=to, promoted_from=memory.id, created_at=context.now, updated_at=context.now
        )
        promoted["id"] = split_record_id(promoted_id)[1]
        archived = with_metadata(snap, status=Status.ARCHIVED.value, updated_at=context.now)
        return Plan([Change(promoted_id, None, promoted), Change(memory.id, snap, archived)], new_id=promoted_id)
    raise UnsupportedError(f"{memory.id}: {operation} is not something a Chroma record can do.")


def memory_metadata(memory: dict[str, Any]) -> dict[str, Any]:
    """Chroma metadata for a native memory row (scalars only; lists as JSON)."""
    return {
        "layer": memory["layer"],
        "channel": memory["channel"],
        "status": memory["status"],
        "salience": float(memory["salience"]),
        "confidence": float(memory["confidence"]),
        "access_count": int(memory["access_count"]),
        "conversations": int(memory["conversations"]),
        "created_at": memory["created_at"],
        "updated_at": memory["updated_at"],
        "last_accessed": memory["last_accessed"],
        "tags": memory["tags"],
        MIRROR_KEY: True,
        **({"promoted_from": memory["promoted_from"]} if memory.get("promoted_from") else {}),
    }


def with_metadata(snap: Snapshot, **values: Any) -> Snapshot:
    new = copy.deepcopy(snap)
    new["metadata"].update(values)
    return new


def record_text(snap: Snapshot) -> str:
    """A record's text: its document, or the metadata key a tool keeps it in (mem0: data)."""
    if snap.get("document") is not None:
        return str(snap["document"])
    return next((str(snap["metadata"][k]) for k in TEXT_KEYS if k in snap["metadata"]), "")


def edited_record(snap: Snapshot, requested: dict[str, Any], context: PlanContext) -> Snapshot:
    """A record with the requested fields set; new text is re-embedded, or flagged stale."""
    new = copy.deepcopy(snap)
    meta = new["metadata"]
    for name, value in requested.items():
        if name == "content":
            text_key = next((k for k in TEXT_KEYS if k in meta), None) if snap["document"] is None else None
            if text_key is not None:
                meta[text_key] = value  # the text lives where the record's writer put it
            else:
                new["document"] = value
            vector = context.embed(value)
            if vector is None:
                meta[STALE_KEY] = True
            else:
                new["embedding"] = vector
                meta.pop(STALE_KEY, None)
        elif name == "tags":
            meta["tags"] = json.dumps(list(value), ensure_ascii=False)
        elif name == "layer":
            meta["layer"] = Layer(value).value
        else:
            meta[name] = value
    if new != snap:
        meta["updated_at"] = context.now
    return new


def record_revision(snap: Snapshot, embedding: Any) -> str:
    """A record's revision: its document and metadata, and the exact bytes of its embedding
    (hashed as stored, so that a search hit and get() agree without rounding every number)."""
    import numpy as np

    body = (snap["collection"], snap["id"], snap["document"], sorted(snap["metadata"].items()))
    digest = hashlib.sha1(repr(body).encode("utf-8", "replace"))
    if embedding is not None:
        digest.update(np.asarray(embedding, dtype=np.float32).tobytes())
    return digest.hexdigest()[:12]
