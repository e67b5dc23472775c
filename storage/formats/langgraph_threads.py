"""SqliteSaver's threads read where they live: sessions, turns and scratchpad by SQL per thread.

A thread's steps are rows of ``checkpoints`` keyed (thread_id, checkpoint_ns, checkpoint_id),
the primary key SqliteSaver declares. What Mnemoscope shows of a thread comes from two of them:
its first checkpoint (when it started) and its latest (its messages as turns, its other channel
values as scratchpad entries), plus the pending ``writes`` of that latest checkpoint. So the list
of threads is one GROUP BY on the key's index (no checkpoint is read to count them), and a
thread's turns or scratchpad decode its latest checkpoint alone (its start and count are the
list's), whatever the thread's length or the file's: no read loads every checkpoint. (A latest
checkpoint without a ``ts`` dates its turns now when read alone, and at the thread's start in the
list; SqliteSaver always writes one.) What a thread decodes to is kept while the file's change token
holds (an agent's next step changes it), so paging a long thread decodes it once.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..model import ScratchEntry, Session, Turn
from ..sqlite_files import files_token
from ..timeutil import parse_time, utcnow

CheckpointDecoder = Callable[[str | None, Any], dict[str, Any]]
Unpacker = Callable[[str | None, Any], Any]
MessageText = Callable[[dict[str, Any]], str]

# The channels of pending writes shown as turns (LangGraph's own for errors and interrupts).
PENDING_ROLES = {"messages": "", "__error__": "error", "__interrupt__": "interrupt"}
ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"}


@dataclass
class Thread:
    """One (thread, namespace) of a SqliteSaver file as shown: a session, its turns, its scratchpad."""

    session: Session | None  # None when its first or latest checkpoint cannot be read
    turns: list[Turn] = field(default_factory=list)
    scratch: list[ScratchEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class Threads:
    """The threads of one SqliteSaver file (see the module docstring). ``rows(sql, params)`` runs
    one read-only query on it; decode/unpack/message_text read LangGraph's serialized values."""

    def __init__(
        self,
        path: str,
        rows: Callable[[str, Sequence[Any]], list[sqlite3.Row]],
        has_writes: bool,
        decode: CheckpointDecoder,
        unpack: Unpacker,
        message_text: MessageText,
    ) -> None:
        self.path = path  # the file's real path (a symlink resolved): every read asks for its token
        self.rows = rows
        self.has_writes = has_writes
        self.decode, self.unpack, self.message_text = decode, unpack, message_text
        self._lock = threading.RLock()
        self._token = ""
        self._keys: list[tuple[str, str, int, str, str]] | None = None
        self._threads: dict[str, Thread] = {}
        self._latest: dict[str, Thread | None] = {}  # a session's turns and scratchpad alone (_latest_of)

    # -- what is kept between reads -------------------------------------------------------------

    def _fresh(self) -> None:
        token = files_token(self.path, real=True)
        if token != self._token:
            self._token, self._keys, self._threads, self._latest = token, None, {}, {}

    def keys(self) -> list[tuple[str, str, int, str, str]]:
        """(thread_id, checkpoint_ns, checkpoints, first checkpoint_id, latest checkpoint_id) of
        every thread, in thread then namespace order: the key's index, grouped."""
        with self._lock:
            self._fresh()
            if self._keys is None:
                self._keys = [
                    (row[0], row[1], int(row[2]), row[3], row[4])
                    for row in self.rows(
                        "SELECT thread_id, checkpoint_ns, count(*), min(checkpoint_id), max(checkpoint_id) "
                        "FROM checkpoints GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
                        (),
                    )
                ]
            return self._keys

    @staticmethod
    def session_id(thread: str, ns: str) -> str:
        return thread if not ns else f"{thread}/{ns}"

    def _selected(self, channels: Sequence[str] = (), session_id: str | None = None) -> list[tuple[str, str, int, str, str]]:
        wanted = set(channels)
        return [
            key for key in self.keys()
            if (not wanted or key[0] in wanted) and (session_id is None or self.session_id(key[0], key[1]) == session_id)
        ]

    @staticmethod
    def _split_pairs(session_id: str) -> list[tuple[str, str]]:
        """Every (thread, namespace) shown under session_id, in thread then namespace order: the
        id joins them with "/", which either may hold, so each split is asked for."""
        splits = [(session_id, "")] + [(session_id[:i], session_id[i + 1 :]) for i, c in enumerate(session_id) if c == "/"]
        return sorted((t, ns) for t, ns in splits if Threads.session_id(t, ns) == session_id)

    @staticmethod
    def _splits(session_id: str) -> tuple[str, list[str]]:
        """SQL keeping the rows of every split of session_id (_split_pairs), and its parameters."""
        splits = Threads._split_pairs(session_id)
        return " OR ".join(["(thread_id = ? AND checkpoint_ns = ?)"] * len(splits)), [v for split in splits for v in split]

    def key_of(self, session_id: str) -> tuple[str, str, int, str, str] | None:
        """The key of one session, looked up on the key's index (not every thread's): the id joins
        thread and namespace with "/", which either may hold, so each way to split it is asked for
        (two threads shown under one id: the last in thread order, as the list of turns had it)."""
        with self._lock:
            self._fresh()
            if self._keys is not None:
                found = [k for k in self._keys if self.session_id(k[0], k[1]) == session_id]
                return found[-1] if found else None
        where, params = self._splits(session_id)
        rows = self.rows(
            "SELECT thread_id, checkpoint_ns, count(*), min(checkpoint_id), max(checkpoint_id) FROM checkpoints "
            f"WHERE {where} GROUP BY thread_id, checkpoint_ns ORDER BY thread_id, checkpoint_ns",
            params,
        )
        return (rows[-1][0], rows[-1][1], int(rows[-1][2]), rows[-1][3], rows[-1][4]) if rows else None

    def holds(self, session_id: str) -> bool:
        return self._latest_of(session_id) is not None  # (read once: its turns are asked for next)

    def _latest_of(self, session_id: str) -> Thread | None:
        """One session's turns and scratchpad: its latest checkpoint and whether writes are pending
        on it, one statement on the key's index, the checkpoint decoded once. None: no such thread.
        (Its session is not the list's: the count of checkpoints and the start need more reads.)"""
        with self._lock:
            self._fresh()
            if session_id in self._threads:
                return self._threads[session_id]
            if self._keys is not None:
                shown = self.threads(session_id=session_id)
                return shown[0] if shown else None
            if session_id not in self._latest:
                # one statement per split (an id without "/" has one): the checkpoint and its pending writes together
                latest_sql = (self._checkpoints_sql() + "FROM checkpoints AS c "
                              "WHERE c.thread_id = ? AND c.checkpoint_ns = ? ORDER BY c.checkpoint_id DESC LIMIT 1")
                found = [latest for t, ns in self._split_pairs(session_id) if (latest := self.rows(latest_sql, (t, ns)))]
                if found:  # two threads shown under one id: the last, as the list has them
                    step = found[-1][0]
                    self._latest[session_id] = self._thread(step["thread_id"], step["checkpoint_ns"], 0, step, step)
                else:
                    self._latest[session_id] = None
            return self._latest[session_id]

    def threads(self, channels: Sequence[str] = (), session_id: str | None = None) -> list[Thread]:
        """The threads asked for (every one by default), each decoded once per change of the file."""
        with self._lock:
            if session_id is not None and not channels:
                self._fresh()
                if session_id in self._threads:
                    return [self._threads[session_id]]
                key = self.key_of(session_id)
                keys = [key] if key is not None else []
            else:
                keys = self._selected(channels, session_id)
            missing = [k for k in keys if self.session_id(k[0], k[1]) not in self._threads]
            if missing:
                self._read(missing)
            return [self._threads[self.session_id(k[0], k[1])] for k in keys]

    def _read(self, keys: list[tuple[str, str, int, str, str]]) -> None:
        """Decode the first and latest checkpoint (and the latest's pending writes) of each of keys."""
        for start in range(0, len(keys), 200):
            chunk = keys[start : start + 200]
            wanted = json.dumps([[t, ns, first, latest] for t, ns, _n, first, latest in chunk])
            found: dict[tuple[str, str, str], sqlite3.Row] = {}
            for row in self.rows(
                self._checkpoints_sql() + "FROM json_each(?) AS w JOIN checkpoints AS c ON c.thread_id = json_extract(w.value, '$[0]') "
                "AND c.checkpoint_ns = json_extract(w.value, '$[1]') "
                "AND c.checkpoint_id IN (json_extract(w.value, '$[2]'), json_extract(w.value, '$[3]'))",
                (wanted,),
            ):
                found.setdefault((row[0], row[1], row[2]), row)
            for thread, ns, steps, first, latest in chunk:
                self._threads[self.session_id(thread, ns)] = self._thread(
                    thread, ns, steps, found.get((thread, ns, first)), found.get((thread, ns, latest))
                )

    def _checkpoints_sql(self) -> str:
        """The SELECT of a checkpoint c's row as _thread reads it, with whether some write is
        pending on it (the writes table's key starts with c's)."""
        pending = ("EXISTS (SELECT 1 FROM writes AS w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns "
                   "AND w.checkpoint_id = c.checkpoint_id)") if self.has_writes else "0"
        return f"SELECT c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.type, c.checkpoint, {pending} AS pending "

    def _thread(self, thread: str, ns: str, steps: int, first_row: Any, latest_row: Any) -> Thread:
        session_id = self.session_id(thread, ns)
        try:
            if first_row is None or latest_row is None:
                raise ValueError("the row went while it was read")
            latest = self.decode(latest_row["type"], latest_row["checkpoint"])
            first = latest if first_row is latest_row else self.decode(first_row["type"], first_row["checkpoint"])
        except ValueError as exc:
            return Thread(None, problems=[f"thread {session_id}: checkpoint not readable ({exc})"])
        started = parse_time(first.get("ts")) or utcnow()
        at = parse_time(latest.get("ts")) or started
        values = latest.get("channel_values") or {}
        messages: list[Any] = values["messages"] if isinstance(values.get("messages"), list) else []
        shown = Thread(None)
        shown.turns = [
            Turn(session_id, i, ROLES.get(str(m.get("type")), str(m.get("type") or "")), self.message_text(m), at)
            for i, m in enumerate(messages)
            if isinstance(m, dict)
        ]
        if self.has_writes and latest_row["pending"]:
            shown.turns += self._pending_turns(latest_row, session_id, len(shown.turns), at, shown.problems)
        shown.session = Session(session_id, thread, f"thread {thread} ({steps} checkpoints)", started, len(shown.turns))
        for channel, value in values.items():
            if channel == "messages":
                continue
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
            shown.scratch.append(ScratchEntry(session_id, channel, text, at))
        return shown

    def _pending_turns(self, step: Any, session_id: str, first: int, at: datetime, problems: list[str]) -> list[Turn]:
        """What the latest checkpoint's tasks wrote that no checkpoint holds yet (a run stopped by
        an interrupt, an error or a crash): messages, errors and interrupts, as pending turns."""
        rows = self.rows(
            "SELECT channel, type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? "
            "ORDER BY task_id, idx",
            (step["thread_id"], step["checkpoint_ns"], step["checkpoint_id"]),
        )
        turns: list[Turn] = []
        for row in rows:
            if row["channel"] not in PENDING_ROLES:
                continue
            try:
                value = self.unpack(row["type"], row["value"])
            except ValueError as exc:
                problems.append(f"thread {session_id}: a pending write is not readable ({exc})")
                continue
            for item in value if isinstance(value, list) else [value]:
                if row["channel"] == "messages" and isinstance(item, dict):
                    role, text = ROLES.get(str(item.get("type")), str(item.get("type") or "")), self.message_text(item)
                else:
                    role = PENDING_ROLES[row["channel"]]
                    if isinstance(item, dict) and "value" in item:  # an Interrupt: what it asks
                        item = item["value"]
                    text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
                turns.append(Turn(session_id, first + len(turns), role, text, at, kind="pending"))
        return turns

    # -- the source's reads ---------------------------------------------------------------------

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        return [t.session for t in self.threads(channels) if t.session is not None]

    def turns(self, session_id: str, limit: int, offset: int) -> list[Turn]:
        shown = self._latest_of(session_id)
        return [] if shown is None else shown.turns[offset : offset + limit]

    def scratch_entries(self, session_id: str | None = None) -> list[ScratchEntry]:
        if session_id is not None:
            shown = self._latest_of(session_id)
            return [] if shown is None else list(shown.scratch)
        return [entry for t in self.threads() for entry in t.scratch]

    def problems(self) -> list[str]:
        return [line for t in self.threads() for line in t.problems]

    def turn_bin_counts(self, bin_format: str, since: datetime | None, until: datetime | None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for t in self.threads():
            for turn in t.turns:
                if (since and turn.timestamp < since) or (until and turn.timestamp >= until):
                    continue
                label = turn.timestamp.strftime(bin_format)
                counts[label] = counts.get(label, 0) + 1
        return counts
