"""The native tables' rows and the model: a memories row as a Memory (read fast in the common
case, unreadable values noted rather than failing the read), the rows a relation and a
scratchpad value are written as, the record ids of rows that are not memories, and the
SQL Core helpers that read and write one row as it is stored."""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ... import bounded_json
from ...errors import NotFoundError
from ...model import Kind, Layer, Memory, Provenance, Relation, SourceRef, Status, parse_layer, parse_status
from ...query import Order
from ...timeutil import parse_time, to_iso, utcnow

DB_NAME = "memory.db"
RELATION_PREFIX = "relation:"
SCRATCH_PREFIX = "scratch:"  # + JSON [session id, key]: one scratchpad row
ORDER_COLUMNS = {
    Order.RECENT: "updated_at",
    Order.CREATED: "created_at",
    Order.SALIENCE: "salience",
    Order.ACCESSED: "last_accessed",
}


_LAYERS = {layer.value: layer for layer in Layer}
_STATUSES = {status.value: status for status in Status}
_NO_PROVENANCE = Provenance()


def int_column(row: dict[str, Any], name: str, default: int, unreadable: dict[str, str]) -> int:
    value = row[name]
    return value if type(value) is int else int(number(value, int, default, unreadable, name))


def real_column(row: dict[str, Any], name: str, default: float, unreadable: dict[str, str]) -> float:
    value = row[name]
    return value if type(value) is float and math.isfinite(value) else float(number(value, float, default, unreadable, name))


def stored_time(value: Any, default: datetime | None) -> datetime:
    """A time column's value: ISO text in UTC as Mnemoscope writes it is read directly."""
    if type(value) is str and value.endswith("+00:00"):
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    return parse_time(value, default or utcnow())


def new_id(prefix: str = "m") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def json_list(value: Any, unreadable: dict[str, str] | None = None, name: str = "") -> tuple[str, ...]:
    """A JSON list column's values; one nested too deep to read is none, noted in unreadable."""
    if not value or value == "[]":
        return ()
    try:
        loaded = bounded_json.loads(value) if isinstance(value, str) else value
    except bounded_json.TooDeep as exc:
        if unreadable is not None:
            unreadable[name] = f"{exc} ({len(value):,} characters): not read"
        return ()
    except json.JSONDecodeError:
        return (str(value),)
    return tuple(str(v) for v in loaded) if isinstance(loaded, list) else (str(loaded),)


def number(value: Any, kind: type[int] | type[float], default: float, unreadable: dict[str, str], name: str) -> Any:
    """A number column's value. Text or bytes another program stored there read as the default
    and are noted in unreadable (shown with the memory instead of failing the whole read)."""
    if value is None:
        return kind(default)
    if isinstance(value, int) and not isinstance(value, bool):
        return kind(value)
    try:
        if not isinstance(value, (str, float)):
            raise TypeError(value)
        parsed = float(value)
        if not math.isfinite(parsed):
            raise ValueError(value)
        return kind(parsed)
    except (TypeError, ValueError):
        unreadable[name] = repr(value)[:80]
        return kind(default)


def json_dict(value: Any, unreadable: dict[str, str] | None = None) -> dict[str, Any]:
    """A JSON object column's value ({} for anything else); one nested too deep to read is {},
    noted in unreadable (its bytes stay as they are: nothing writes this {} back)."""
    if not value or value == "{}":
        return {}
    try:
        loaded = bounded_json.loads(value) if isinstance(value, str) else value
    except bounded_json.TooDeep as exc:
        if unreadable is not None:
            unreadable["metadata"] = f"{exc} ({len(value):,} characters): not read"
        return {}
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def memory_from_row(row: Any, where: str, now: datetime | None = None, kind: Kind = Kind.SQLITE) -> Memory:
    """A memory from a memories row (a mapping of its columns) that where holds (the path its
    SourceRef names). Pages build a hundred of these per screen: the common case (values as
    Mnemoscope writes them) takes fast paths."""
    row = row if type(row) is dict else dict(row)
    created = stored_time(row["created_at"], now)
    unreadable: dict[str, str] = {}
    access_count = int_column(row, "access_count", 0, unreadable)
    salience = real_column(row, "salience", 0.5, unreadable)
    confidence = real_column(row, "confidence", 1.0, unreadable)
    conversations = int_column(row, "conversations", 0, unreadable)
    metadata = json_dict(row["metadata"], unreadable)
    tags = json_list(row["tags"], unreadable, "tags")
    if row.get("md_file"):
        metadata["md_file"] = row["md_file"]
    metadata["vector_state"] = row["vector_state"]
    if unreadable:
        metadata["unreadable_values"] = unreadable
    derived_from, promoted_from, imported_from = row["derived_from"], row["promoted_from"], row["imported_from"]
    return Memory.built(
        id=row["id"],
        source=SourceRef.built(kind=kind, location=f"{where}:memories/{row['id']}", path=where),
        layer=_LAYERS.get(row["layer"]) or parse_layer(row["layer"]),
        channel=row["channel"],
        content=row["content"],
        created_at=created,
        updated_at=stored_time(row["updated_at"], created),
        last_accessed=stored_time(row["last_accessed"], created),
        access_count=access_count,
        salience=salience,
        confidence=confidence,
        conversations=conversations,
        tags=tags,
        metadata=metadata,
        status=_STATUSES.get(row["status"]) or parse_status(row["status"]),
        provenance=_NO_PROVENANCE
        if derived_from == "[]" and promoted_from is None and imported_from is None
        else Provenance(promoted_from=promoted_from, derived_from=json_list(derived_from), imported_from=imported_from),
        revision=row_revision(row),
    )


def memory_dict_from_row(values: Sequence[Any], names: Sequence[str], where: str, now: datetime | None = None,
                         kind: Kind = Kind.SQLITE) -> dict[str, Any]:
    """memory_from_row(...).to_dict() of a row given as the cursor returned it (values, in the
    order of the column names), without building the Memory: what an export writes a million of.
    A row holding anything but what Mnemoscope writes goes the Memory's way."""
    row = dict(zip(names, values, strict=True))
    created, updated, accessed = row["created_at"], row["updated_at"], row["last_accessed"]
    layer, status = _LAYERS.get(row["layer"]), _STATUSES.get(row["status"])
    access_count, salience, confidence, conversations = (
        row["access_count"], row["salience"], row["confidence"], row["conversations"])
    if (layer is None or status is None or type(created) is not str or type(updated) is not str
            or type(accessed) is not str or type(access_count) is not int or type(conversations) is not int
            or type(salience) is not float or type(confidence) is not float
            or not (math.isfinite(salience) and math.isfinite(confidence))):
        return memory_from_row(row, where, now, kind).to_dict()
    try:
        iso = _canonical_time(created), _canonical_time(updated), _canonical_time(accessed)
    except ValueError:
        return memory_from_row(row, where, now, kind).to_dict()
    unreadable: dict[str, str] = {}
    metadata = json_dict(row["metadata"], unreadable)
    tags = json_list(row["tags"], unreadable, "tags")
    if unreadable:
        return memory_from_row(row, where, now, kind).to_dict()
    if row.get("md_file"):
        metadata["md_file"] = row["md_file"]
    metadata["vector_state"] = row["vector_state"]
    memory_id = row["id"]
    source = {"kind": kind.value, "location": f"{where}:memories/{memory_id}"}
    if where:
        source["path"] = where
    derived_from = row["derived_from"]
    return {
        "id": memory_id,
        "content": row["content"],
        "layer": layer.value,
        "channel": row["channel"],
        "source": source,
        "created_at": iso[0],
        "updated_at": iso[1],
        "last_accessed": iso[2],
        "access_count": access_count,
        "salience": round(salience, 6),
        "confidence": round(confidence, 6),
        "conversations": conversations,
        "tags": list(tags),
        "status": status.value,
        "provenance": {
            "promoted_from": row["promoted_from"],
            "derived_from": [] if derived_from == "[]" else list(json_list(derived_from)),
            "imported_from": row["imported_from"],
        },
        "metadata": metadata,
        "revision": values_revision(values),
    }


def _canonical_time(value: str) -> str:
    """value as datetime.isoformat() writes it back (the text itself when it already is); a
    ValueError for any time but UTC as Mnemoscope writes it."""
    if not value.endswith("+00:00"):
        raise ValueError(value)
    parsed = datetime.fromisoformat(value)
    if len(value) == 25 and (value[4], value[7], value[10], value[13], value[16]) == ("-", "-", "T", ":", ":"):
        return value
    return parsed.isoformat()


def scratch_text(value: Any) -> str:
    """A scratchpad value as memory.db keeps it: text as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def scratch_key(record_id: str) -> tuple[str, str]:
    """The (session id, key) a scratchpad record id names."""
    try:
        session_id, key = json.loads(record_id[len(SCRATCH_PREFIX) :])
    except (ValueError, TypeError):
        raise NotFoundError(f"{record_id} names no scratchpad key.") from None
    return str(session_id), str(key)


def same_json(stored: Any, value: Any) -> bool:
    """Whether stored text is JSON that reads back as value (key order and spacing aside)."""
    if isinstance(value, str) or not isinstance(stored, str):
        return False
    try:
        return json.dumps(json.loads(stored), sort_keys=True) == json.dumps(value, sort_keys=True)
    except (ValueError, TypeError):
        return False


def relation_row(relation: Relation) -> dict[str, Any]:
    return {
        "id": relation.id,
        "source_id": relation.source_id,
        "target_id": relation.target_id,
        "type": relation.type,
        "channel": relation.channel,
        "weight": relation.weight,
        "created_at": to_iso(relation.created_at) if relation.created_at else None,
    }


def row_revision(row: dict[str, Any]) -> str:
    """A short hash of every column of a row as SQLite returned it (in the table's column order):
    it changes whenever any of them does (repr tells 1 from 1.0 and text from bytes)."""
    return values_revision(tuple(row.values()))


def values_revision(values: Sequence[Any]) -> str:
    """row_revision of a row given as its values in the table's column order (a row as the
    DB-API cursor returned it: nothing decoded)."""
    return hashlib.sha1(repr(tuple(values)).encode("utf-8")).hexdigest()[:12]

