"""AgentX's working memory in Redis (seed 002, "Working Memory"), opened by its redis:// URL.

AgentX's ``WorkingMemory`` keeps each conversation's ephemeral state under
``working:{user_id}:{channel}:{conversation_id}``: ``:turns`` and ``:thoughts`` are lists of JSON
objects, newest first (LPUSH, trimmed, EXPIRE 3600 on every write), ``:context:{key}`` strings of
JSON (SETEX, an hour by default). Its consolidation worker tracks ``consolidation:job:{job_id}``
and locks ``consolidation:lock:{conversation_id}``; ``session:{session_id}:*`` holds
session-scoped data. Nothing there is a memory: it maps onto the canonical model so:

- each conversation is a Session (``working:{user}:{channel}:{conversation}``, its channel and
  user decoded from the key), its ``:turns`` list the session's turns; every key under it is a
  ScratchEntry named by what follows the prefix (``turns``, ``thoughts``, ``context:active_goal``);
- ``consolidation:*`` keys are the entries of one session ``consolidation``, each
  ``session:{id}:*`` group a session of its own;
- a string is shown as stored, a list, hash, set or sorted set as JSON (elements that are JSON
  objects or arrays decoded), a stream read-only; the TTL is the entry's ``expires_at``. Redis
  keeps no write time: ``updated_at`` is None.

Keys outside those patterns (a Redis shared with other programs) are counted, never listed.
Writes are Redis transactions watched on the key: a key changed since it was read (type or
value) is a conflict, its TTL is kept (SET KEEPTTL, or PEXPIREAT at the same instant), and a
key put back by undo gets the expiry it had. Set and delete are journaled in Mnemoscope's own
folder for the server.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..credentials import Secret, scrubbed
from ..errors import (
    ConflictError,
    NotFoundError,
    ReadOnlyError,
    SecretRefusedError,
    StoreError,
    UnreadableStoreError,
    UnsupportedError,
)
from ..journal.log import Journal
from ..model import Kind, ScratchEntry, Session, Turn
from ..query import MemoryQuery
from ..retention import EXPIRE, Upcoming
from ..source import Capabilities, Plan, PlanContext, Snapshot, StoreParts
from ..timeutil import parse_time
from .agentx_redis_values import (
    decoded,
    encoded,
    expires_ms_of,
    expiry_of,
    queue_read,
    queue_write,
    same_key,
    server_now_ms,
    shown_value,
    snapshot_of,
    text_of,
    unwritable_reason,
    watched_snapshot,
    writable,
)

FORMAT = "agentx-redis"
LABEL = "AgentX working memory (Redis)"
RECORD_PREFIX = "agentx-redis:"
WORKING, CONSOLIDATION, SESSION = "working", "consolidation", "session"
PATTERNS = (f"{WORKING}:*", f"{CONSOLIDATION}:*", f"{SESSION}:*")
# WorkingMemory.set's default TTL, and the EXPIRE add_turn and push_thought give their lists.
WORKING_TTL_SECONDS = 3600
RULES = {
    WORKING: "Redis TTL (set by AgentX: working memory, an hour after its last write by default)",
    CONSOLIDATION: "Redis TTL (set by AgentX: consolidation job tracking and locks)",
    SESSION: "Redis TTL (set by AgentX: session-scoped ephemeral data)",
}


@dataclass(frozen=True)
class KeyName:
    """Where a Redis key sits in AgentX's patterns: its session (group) and the entry's name there."""

    key: str
    session_id: str
    entry: str
    pattern: str  # WORKING, CONSOLIDATION or SESSION
    user_id: str = ""
    channel: str = ""
    conversation_id: str = ""


def decode_key(key: str) -> KeyName | None:
    """The session and entry of one of AgentX's keys; None for a key outside its patterns."""
    parts = key.split(":")
    if parts[0] == WORKING and len(parts) >= 5 and all(parts[1:4]):
        user, channel, conversation = parts[1:4]
        return KeyName(key, ":".join(parts[:4]), ":".join(parts[4:]), WORKING, user, channel, conversation)
    if parts[0] == CONSOLIDATION and len(parts) >= 2:
        return KeyName(key, CONSOLIDATION, ":".join(parts[1:]), CONSOLIDATION)
    if parts[0] == SESSION and len(parts) >= 3 and parts[1]:
        return KeyName(key, f"{SESSION}:{parts[1]}", ":".join(parts[2:]), SESSION)
    return None


def key_of(session_id: str, entry: str) -> str:
    """The Redis key of an entry of a session (decode_key's inverse)."""
    return f"{session_id}:{entry}"


class AgentxRedisSource:
    """The working memory AgentX keeps in one Redis database, as sessions and scratchpad keys."""

    kind = Kind.REDIS
    format = FORMAT
    label = LABEL
    id_prefix = RECORD_PREFIX
    editable_fields: tuple[str, ...] = ()
    keeps: frozenset[str] = frozenset()
    seeks = False
    scratch_note = ""

    def __init__(self, client: Any, *, root: Path, location: str, read_only: bool) -> None:
        self._client = client
        self.root = Path(root)
        self.location = location
        self._read_only = read_only
        self._server_version = ""

    @classmethod
    def open(cls, url: str, secret: Secret | None, *, root: Path, location: str, read_only: bool) -> AgentxRedisSource:
        import redis

        client = redis.Redis.from_url(url, password=secret.reveal() if secret else None, socket_timeout=10,
                                      socket_connect_timeout=10)
        source = cls(client, root=root, location=location, read_only=read_only)
        try:
            with source._errors(secret):
                source._server_version = str(client.info("server").get("redis_version", ""))
        except BaseException:
            client.close()
            raise
        return source

    def close(self) -> None:
        self._client.close()

    def _errors(self, secret: Secret | None = None) -> Any:
        return _redis_errors(self.location, secret)

    # -- what it is ------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        keys = self._keys()
        with self._errors():
            total = int(self._client.dbsize())
        groups = {pattern: sum(1 for k in keys if k.pattern == pattern) for pattern in (WORKING, CONSOLIDATION, SESSION)}
        return {
            "format": self.format,
            "label": self.label,
            "path": self.location,
            "server": f"Redis {self._server_version}" if self._server_version else "Redis",
            "files": [f"{pattern} ({groups[pattern.partition(':')[0]]} keys)" for pattern in PATTERNS],
            "keys": total,
            "read_only": self._read_only,
            "read_only_reason": self._read_only_reason(),
            "editable_fields": [],
            "deletable": not self._read_only,
            "scratchpad": "every key of AgentX's patterns is a scratchpad entry of its conversation (or of the "
                          "consolidation / session:{id} group); set and delete keep the key's TTL and are undoable",
            "problems": self.problems(),
        }

    def _read_only_reason(self) -> str:
        return "opened read-only" if self._read_only else ""

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        reason = self._read_only_reason()
        if not reason and record_id is not None and self.owns(record_id):
            snapshot = self.read_record(record_id)
            if snapshot is not None and not writable(snapshot):
                reason = unwritable_reason(snapshot)
        return Capabilities(read_only=bool(reason), read_only_reason=reason, sessions=True, scratchpad=True)

    def problems(self) -> list[str]:
        keys = self._keys()
        with self._errors():
            total = int(self._client.dbsize())
        others = total - len(keys)
        return [f"{others} key{'s' if others != 1 else ''} outside AgentX's patterns ({', '.join(PATTERNS)}) {'are' if others != 1 else 'is'} not shown"] if others > 0 else []

    def change_token(self) -> str:
        """The server's count of writes since its last save (expiries count too), with that save's time."""
        with self._errors():
            info = self._client.info("persistence")
            size = self._client.dbsize()
        return f"{FORMAT}:{info.get('rdb_changes_since_last_save')}:{info.get('rdb_last_save_time')}:{size}"

    # -- memories: none here -----------------------------------------------------------------------

    def count(self, query: MemoryQuery) -> int:
        return 0

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Any]:
        return []

    def get(self, memory_id: str) -> None:
        return None

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return {}

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        return {}

    def keyword_search(self, text: str, query: MemoryQuery, k: int) -> list[Any]:
        return []

    def plan(self, operation: str, memory: Any, fields: dict[str, Any], context: PlanContext) -> Plan:
        raise UnsupportedError(f"{self.label} holds no memories, only scratchpad keys; {operation} does not apply.")

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return []

    # -- keys ------------------------------------------------------------------------------------

    def _keys(self) -> list[KeyName]:
        """AgentX's keys, found by SCAN over its three patterns (never KEYS, which blocks the server)."""
        found: dict[str, KeyName] = {}
        with self._errors():
            for pattern in PATTERNS:
                for raw in self._client.scan_iter(match=pattern, count=1000):
                    key = text_of(raw)
                    name = decode_key(key) if key is not None else None
                    if name is not None:
                        found[key] = name  # type: ignore[index]
        return [found[k] for k in sorted(found)]

    def _snapshots(self, keys: Sequence[str]) -> dict[str, Snapshot]:
        """Each key's record (gone ones left out), in two round trips."""
        if not keys:
            return {}
        with self._errors():
            pipe = self._client.pipeline(transaction=False)
            for key in keys:
                pipe.type(key)
                pipe.pexpiretime(key)
            heads = pipe.execute()
            types = [text_of(t) or "none" for t in heads[0::2]]
            pipe = self._client.pipeline(transaction=False)
            for key, kind in zip(keys, types, strict=True):
                queue_read(pipe, key, kind)
            values = pipe.execute()
        out = {}
        for key, kind, expiry, value in zip(keys, types, heads[1::2], values, strict=True):
            if kind != "none" and expiry != -2:
                out[key] = snapshot_of(key, kind, value, expiry)
        return out

    # -- sessions and scratchpad -------------------------------------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        keys = self._keys()
        turn_lists = [k.key for k in keys if k.pattern == WORKING and k.entry == "turns"]
        turns = {key: self._turns_of(snapshot) for key, snapshot in self._snapshots(turn_lists).items()}
        sessions: dict[str, Session] = {}
        for name in keys:
            if name.session_id in sessions:
                continue
            if name.pattern == WORKING:
                own = turns.get(key_of(name.session_id, "turns"), [])
                started = min((t.timestamp for t in own), default=None)
                title = f"{name.user_id}: conversation {name.conversation_id}"
                sessions[name.session_id] = Session(name.session_id, name.channel, title, started, len(own), name.user_id)
            elif name.pattern == CONSOLIDATION:
                sessions[name.session_id] = Session(name.session_id, "", "AgentX consolidation jobs and locks", None)
            else:
                sessions[name.session_id] = Session(name.session_id, "", f"session {name.session_id[len(SESSION) + 1:]} "
                                                    "(session-scoped data)", None)
        return [s for s in sessions.values() if not channels or s.channel in channels]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        name = decode_key(key_of(session_id, "turns"))
        if name is None or name.pattern != WORKING or name.session_id != session_id:
            return []
        snapshot = self._snapshots([name.key]).get(name.key)
        return self._turns_of(snapshot)[offset:offset + limit] if snapshot else []

    @staticmethod
    def _turns_of(snapshot: Snapshot) -> list[Turn]:
        """The turns AgentX's add_turn pushed (JSON objects, newest first), oldest first."""
        if snapshot["type"] != "list":
            return []
        turns = []
        for position, raw in enumerate(reversed(snapshot["value"])):
            item = decoded(raw)
            if not isinstance(item, dict):
                continue
            when = parse_time(item.get("timestamp"))
            index = item.get("index")
            turns.append(Turn(snapshot["key"].rpartition(":")[0], index if isinstance(index, int) else position,
                              str(item.get("role") or "?"), str(item.get("content") or ""),
                              when.astimezone(timezone.utc) if when else datetime.fromtimestamp(0, timezone.utc)))
        return turns

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        lists = [k.key for k in self._keys() if k.pattern == WORKING and k.entry == "turns"]
        counts: dict[str, int] = {}
        for snapshot in self._snapshots(lists).values():
            for turn in self._turns_of(snapshot):
                if (since and turn.timestamp < since) or (until and turn.timestamp >= until):
                    continue
                label = turn.timestamp.strftime(bin_format)
                counts[label] = counts.get(label, 0) + 1
        return counts

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        names = [k for k in self._keys() if session_id is None or k.session_id == session_id]
        snapshots = self._snapshots([k.key for k in names])
        return [self._entry(name, snapshots[name.key]) for name in names if name.key in snapshots]

    def _entry(self, name: KeyName, snapshot: Snapshot) -> ScratchEntry:
        return ScratchEntry(name.session_id, name.entry, shown_value(snapshot), None, expiry_of(snapshot))

    # ScratchWriter: the Curator's set_scratch / delete_scratch write keys through write_record.
    def scratch_record(self, session_id: str, key: str) -> str:
        name = decode_key(key_of(session_id, key))
        if name is None or name.session_id != session_id:
            raise UnsupportedError(f"{key} of {session_id} names no key of AgentX's patterns ({', '.join(PATTERNS)}).")
        return RECORD_PREFIX + name.key

    def is_scratch_record(self, record_id: str) -> bool:
        return self.owns(record_id)

    def scratch_snapshot(self, current: Snapshot | None, session_id: str, key: str, value: Any, now: str) -> Snapshot:
        """The key holding value as AgentX writes it: a working or JSON string as JSON, a list's,
        hash's or set's elements as their JSON (an element left as it was keeps its bytes). A new
        key is a string; under working:* it gets AgentX's hour (WorkingMemory.set's default TTL)."""
        redis_key = key_of(session_id, key)
        if current is None:
            expires = None
            if redis_key.startswith(f"{WORKING}:"):
                expires = (parse_time(now) or datetime.now(timezone.utc)) + timedelta(seconds=WORKING_TTL_SECONDS)
            raw = json.dumps(value) if redis_key.startswith(f"{WORKING}:") or not isinstance(value, str) else value
            return {"key": redis_key, "type": "string", "value": raw,
                    "expires_at": expires.astimezone(timezone.utc).isoformat(timespec="milliseconds") if expires else None}
        if not writable(current):
            raise ReadOnlyError(f"{redis_key} cannot be changed here: {unwritable_reason(current)}.")
        new = {**current, "value": encoded(current, value)}
        return current if new["value"] == current["value"] else new

    def scratch_entry(self, snapshot: Snapshot) -> ScratchEntry:
        name = decode_key(snapshot["key"])
        assert name is not None
        return self._entry(name, snapshot)

    # -- the write primitive -----------------------------------------------------------------------

    def owns(self, record_id: str) -> bool:
        return record_id.startswith(RECORD_PREFIX)

    def _redis_key(self, record_id: str) -> str:
        if not self.owns(record_id) or decode_key(record_id[len(RECORD_PREFIX):]) is None:
            raise NotFoundError(f"{record_id} names no key of AgentX's working memory.")
        return record_id[len(RECORD_PREFIX):]

    def read_record(self, record_id: str) -> Snapshot | None:
        key = self._redis_key(record_id)
        return self._snapshots([key]).get(key)

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        """new over the key in one transaction WATCHed on it: ConflictError when its type or value is
        no longer expected's (a TTL another write moved is no conflict; the key keeps the TTL it has).
        A key put back (undo of a delete) gets the expiry its snapshot records; one whose expiry has
        passed stays gone, as AgentX's TTL would have it."""
        import redis

        if self._read_only:
            raise ReadOnlyError(f"{self.location} was opened read-only.")
        key = self._redis_key(record_id)
        if new is not None and not writable(new):
            raise ReadOnlyError(f"{key} cannot be written here: {unwritable_reason(new)}.")
        try:
            with self._errors(), self._client.pipeline(transaction=True) as pipe:
                pipe.watch(key)
                current = watched_snapshot(pipe, key)
                if not same_key(current, expected):
                    state = "was removed" if current is None else "was created" if expected is None else "changed"
                    raise ConflictError(f"{key} {state} since it was read (AgentX may be writing); nothing was written. "
                                        "Reload and try again.")
                at = current["expires_ms"] if current is not None else expires_ms_of(new) if new else None
                if current is None and at is not None and at <= server_now_ms(pipe):
                    return None  # its TTL has run out: Redis would drop it at once
                pipe.multi()
                if new is None:
                    pipe.delete(key)
                elif current is not None and current["type"] == new["type"] == "string":
                    pipe.set(key, new["value"], keepttl=True)
                else:
                    pipe.delete(key)
                    queue_write(pipe, key, new)
                    if at is not None:
                        pipe.pexpireat(key, at)
                pipe.execute()
        except redis.WatchError:
            raise ConflictError(f"{key} changed while it was being written (AgentX may be writing); nothing was "
                                "written. Reload and try again.") from None
        return self._snapshots([key]).get(key)

    # -- retention: Redis TTLs -------------------------------------------------------------------

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        """Every key whose TTL runs out before until (overdue ones that Redis has not dropped yet too)."""
        names = self._keys()
        snapshots = self._snapshots([k.key for k in names])
        out = []
        for name in names:
            snapshot = snapshots.get(name.key)
            when = expiry_of(snapshot) if snapshot else None
            if when is None or when >= until:
                continue
            preview = " ".join(shown_value(snapshot).split())[:80] if snapshot else ""
            out.append(Upcoming(name.key, EXPIRE, when, RULES[name.pattern], self.label, preview))
        return sorted(out, key=lambda u: (u.when, u.record_id))


# -- errors and opening ------------------------------------------------------------------------------


@contextlib.contextmanager
def _redis_errors(location: str, secret: Secret | None) -> Iterator[None]:
    """Redis's errors as Mnemoscope's: a refused password asks again (SecretRefusedError), an
    unreachable server is unreadable; a WATCHed key's change is left to the writer."""
    import redis

    try:
        yield
    except (redis.WatchError, StoreError):
        raise
    except redis.RedisError as exc:
        message = scrubbed(str(exc), secret)
        if isinstance(exc, redis.AuthenticationError) or "NOAUTH" in str(exc) or "WRONGPASS" in str(exc):
            raise SecretRefusedError(f"{location} refused the password: {message}") from None
        if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
            raise UnreadableStoreError(f"Cannot reach Redis at {location}: {message}") from None
        raise StoreError(f"Redis at {location} answered with an error: {message}") from None


def open_agentx_redis(url: str, secret: Secret | None, *, root: Path, location: str,
                      read_only: bool = False) -> StoreParts:
    """AgentX's Redis at url as the parts of a store, its undo journal in Mnemoscope's own folder
    for the server (root). The secret goes to the client, nowhere else."""
    try:
        import redis  # noqa: F401
    except ImportError as exc:
        raise UnreadableStoreError(f"Opening {location} needs the Redis client: pip install redis ({exc}).") from None
    source = AgentxRedisSource.open(url, secret, root=root, location=location, read_only=read_only)
    try:
        return StoreParts(Path(root), [source], Journal.sidecar(Path(root), read_only=read_only),
                          read_only=read_only, location=location)
    except BaseException:
        source.close()
        raise
