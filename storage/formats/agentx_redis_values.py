"""One Redis key as a record of the write primitive, and its value as a person reads and types it
(storage/formats/agentx_redis.py is the source over AgentX's keys).

A snapshot is ``{"key", "type", "value", "expires_at", "expires_ms"}``: a string's text, a list's or
set's elements, a hash's fields, a sorted set's ``[member, score]`` pairs, a stream's entries, all as
text (``"binary": true`` where the bytes are no UTF-8: shown, never written), and the instant the
key's TTL ends (PEXPIRETIME, stable between reads; None for a key without one).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from ..errors import UnsupportedError
from ..source import Snapshot
from ..timeutil import parse_time

WORKING_PREFIX = "working:"  # AgentX's WorkingMemory writes its context values as JSON
WRITABLE_TYPES = ("string", "list", "hash", "set", "zset")


# -- snapshots: one key as a record ----------------------------------------------------------------


def text_of(raw: Any) -> str | None:
    """Bytes Redis holds as text; None for bytes that are no UTF-8."""
    if isinstance(raw, str):
        return raw
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def queue_read(pipe: Any, key: str, kind: str) -> None:
    if kind == "string":
        pipe.get(key)
    elif kind == "list":
        pipe.lrange(key, 0, -1)
    elif kind == "hash":
        pipe.hgetall(key)
    elif kind == "set":
        pipe.smembers(key)
    elif kind == "zset":
        pipe.zrange(key, 0, -1, withscores=True)
    elif kind == "stream":
        pipe.xrange(key, count=1000)
    else:
        pipe.echo(b"")  # keeps the replies in step with the keys


def snapshot_of(key: str, kind: str, value: Any, expiry_ms: int) -> Snapshot:
    """One key as a record: its type, its value as text (lists and hashes of text), its expiry."""
    binary = False

    def text(raw: Any) -> str:
        nonlocal binary
        decoded = text_of(raw)
        if decoded is None:
            binary = True
            return bytes(raw).decode("utf-8", errors="replace")
        return decoded

    held: Any
    if kind == "string":
        held = text(value)
    elif kind == "list":
        held = [text(v) for v in value]
    elif kind == "hash":
        held = {text(k): text(v) for k, v in sorted(value.items())}
    elif kind == "set":
        held = sorted(text(v) for v in value)
    elif kind == "zset":
        held = [[text(member), score] for member, score in value]
    elif kind == "stream":
        held = [[text(entry_id), {text(k): text(v) for k, v in fields.items()}] for entry_id, fields in value]
    else:
        held = None
    expires_ms = int(expiry_ms) if expiry_ms is not None and int(expiry_ms) >= 0 else None
    snapshot: Snapshot = {"key": key, "type": kind, "value": held, "expires_at": None, "expires_ms": expires_ms}
    if expires_ms is not None:
        snapshot["expires_at"] = datetime.fromtimestamp(expires_ms / 1000, timezone.utc).isoformat(timespec="milliseconds")
    if binary:
        snapshot["binary"] = True
    return snapshot


def watched_snapshot(pipe: Any, key: str) -> Snapshot | None:
    """The key as it is now, read on a pipeline that WATCHes it (commands run at once)."""
    kind = text_of(pipe.type(key)) or "none"
    if kind == "none":
        return None
    expiry = pipe.pexpiretime(key)
    reader = {"string": lambda: pipe.get(key), "list": lambda: pipe.lrange(key, 0, -1),
              "hash": lambda: pipe.hgetall(key), "set": lambda: pipe.smembers(key),
              "zset": lambda: pipe.zrange(key, 0, -1, withscores=True), "stream": lambda: pipe.xrange(key, count=1000)}
    value = reader[kind]() if kind in reader else None
    return snapshot_of(key, kind, value, expiry)


def queue_write(pipe: Any, key: str, snapshot: Snapshot) -> None:
    kind, value = snapshot["type"], snapshot["value"]
    if kind == "string":
        pipe.set(key, value)
    elif kind == "list" and value:
        pipe.rpush(key, *value)
    elif kind == "hash" and value:
        pipe.hset(key, mapping=value)
    elif kind == "set" and value:
        pipe.sadd(key, *value)
    elif kind == "zset" and value:
        pipe.zadd(key, {member: float(score) for member, score in value})


def same_key(current: Snapshot | None, expected: Snapshot | None) -> bool:
    """Whether a key is still what was read: its type and value (its TTL may have moved)."""
    if current is None or expected is None:
        return current is None and expected is None
    return (current["type"], current["value"]) == (expected["type"], expected["value"])


def writable(snapshot: Snapshot) -> bool:
    return snapshot["type"] in WRITABLE_TYPES and not snapshot.get("binary")


def unwritable_reason(snapshot: Snapshot) -> str:
    if snapshot.get("binary"):
        return "it holds bytes that are no text, which an edit as text would change"
    return f"a Redis {snapshot['type']} is shown, not written, by Mnemoscope"


def expiry_of(snapshot: Snapshot) -> datetime | None:
    return datetime.fromtimestamp(snapshot["expires_ms"] / 1000, timezone.utc) if snapshot.get("expires_ms") is not None \
        else (parse_time(snapshot.get("expires_at")) if snapshot.get("expires_at") else None)


def expires_ms_of(snapshot: Snapshot) -> int | None:
    if snapshot.get("expires_ms") is not None:
        return int(snapshot["expires_ms"])
    when = expiry_of(snapshot)
    return int(when.timestamp() * 1000) if when is not None else None


def server_now_ms(pipe: Any) -> int:
    seconds, micros = pipe.time()
    return int(seconds) * 1000 + int(micros) // 1000


# -- values: what a person reads and types ---------------------------------------------------------


def decoded(raw: str) -> Any:
    """An element as a person reads it: a JSON object or array decoded, anything else as it is."""
    text = raw.strip()
    if text[:1] in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return raw


def shown_value(snapshot: Snapshot) -> str:
    """A key's value as text: a string as stored, any other type as JSON of its decoded elements."""
    kind, value = snapshot["type"], snapshot["value"]
    if kind == "string":
        return str(value)
    if kind in ("list", "set"):
        readable: Any = [decoded(v) for v in value]
    elif kind == "hash":
        readable = {k: decoded(v) for k, v in value.items()}
    elif kind == "zset":
        readable = {member: score for member, score in value}
    else:
        readable = value
    return json.dumps(readable, ensure_ascii=False)


def encoded(current: Snapshot, value: Any) -> Any:
    """value, as a person gave it, in the form current's type stores (ValueError-free: a value of
    the wrong shape is refused with UnsupportedError)."""
    kind, held = current["type"], current["value"]
    key = current["key"]
    if kind == "string":
        json_text = key.startswith(WORKING_PREFIX) or _is_json(held)
        if json_text and _is_json(held) and json.loads(held) == value:
            return held
        return json.dumps(value) if json_text or not isinstance(value, str) else value
    if kind in ("list", "set"):
        if not isinstance(value, list):
            raise UnsupportedError(f"{key} is a Redis {kind}: give its elements as a JSON array.")
        old = list(held)
        items = [_element(v, old[i] if kind == "list" and i < len(old) else None, old) for i, v in enumerate(value)]
        return sorted(set(items)) if kind == "set" else items
    if kind == "hash":
        if not isinstance(value, dict):
            raise UnsupportedError(f"{key} is a Redis hash: give its fields as a JSON object.")
        return {str(f): _element(v, held.get(str(f)), []) for f, v in sorted(value.items())}
    if kind == "zset":
        if not isinstance(value, dict) or not all(isinstance(s, (int, float)) for s in value.values()):
            raise UnsupportedError(f"{key} is a Redis sorted set: give it as a JSON object of member -> score.")
        return sorted(([str(m), float(s)] for m, s in value.items()), key=lambda pair: (pair[1], pair[0]))
    raise UnsupportedError(f"{key} is a Redis {kind}, which Mnemoscope shows but does not write.")


def _element(value: Any, old: str | None, others: list[str]) -> str:
    """One element as stored: the old bytes where they decode to value, text as it is, else JSON."""
    for raw in ([old] if old is not None else []) + others:
        if decoded(raw) == value and (isinstance(value, str) == (decoded(raw) is raw)):
            return raw
    return value if isinstance(value, str) else json.dumps(value)


def _is_json(text: Any) -> bool:
    if not isinstance(text, str):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
