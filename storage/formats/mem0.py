"""mem0 (``mem0ai``) with its Chroma vector store and its SQLite ``history.db``.

mem0 keeps each memory as a Chroma record without a document: the text is in
metadata ``data``, with ``hash`` (md5 of the text), ``text_lemmatized``,
``created_at``/``updated_at``, the scope keys user_id / agent_id / run_id /
actor_id, and custom metadata flattened beside them. ``history.db`` logs every
ADD / UPDATE / DELETE (mem0/memory/storage.py, SQLiteManager), and its
``messages`` table keeps the last ten messages of each session scope.

Curation does what mem0's own ``update`` and ``delete`` do (mem0/memory/main.py,
_update_memory/_delete_memory): an edit rewrites data, hash, text_lemmatized and
updated_at, replaces the embedding (or flags it stale when no embedder for the
collection runs here) and appends an UPDATE row; a delete removes the record
and appends a DELETE row (is_deleted = 1). mem0 has no soft delete and no
channels to promote between, so neither is offered. ``<collection>_entities``
collections are mem0's entity index, not memories, and are left out.

history.db (Mem0History), the metadata reading and the write as mem0 writes it are shared
with mem0 on Qdrant's local mode (mem0_qdrant.py).
"""

from __future__ import annotations

import copy
import hashlib
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..consistency_report import WARNING, Finding, FindingKind, register_kind
from ..detect.looks import as_path, is_dir, is_file, looked, names, subfolders
from ..errors import StoreError
from ..journal.redaction import PURGED
from ..model import GLOBAL_CHANNEL, Kind, Memory, Session, Turn
from ..native.chroma.files import CHROMA_FILE
from ..native.chroma.local import ChromaSource, RecordReading
from ..native.chroma.records import STALE_KEY, split_record_id
from ..native.chroma.vector_collection import VectorCollection
from ..query import MemoryQuery
from ..retention import EXPIRE, Upcoming, preview_of
from ..source import DELETE, PURGE, Capabilities, Change, Plan, PlanContext, Snapshot
from ..sqlite_files import files_token, is_sqlite_file, read_only_rows, sqlite_error
from ..timeutil import parse_time, to_iso, utcnow
from .base import reading, removal_note, sqlite_tables, writing
from .match import FormatMatch

HISTORY_FILE = "history.db"
SCOPE_KEYS = ("user_id", "agent_id", "run_id")
CORE_KEYS = {"data", "hash", "text_lemmatized", "created_at", "updated_at", "attributed_to", "role", "actor_id", *SCOPE_KEYS}
HISTORY_COLUMNS = {"id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted"}


MEM0_DRIFT = register_kind(FindingKind(
    "mem0-history-drift", "mem0 record and history.db disagree", WARNING,
    advice="mem0 reads the Chroma record; its history.db log is what `history` shows. Edit the memory "
           "to the right text (the edit is logged), or delete it if history.db says it is gone"))
MEM0_MISSING = register_kind(FindingKind(
    "mem0-missing-vector", "mem0 memory in history.db with no vector", WARNING,
    advice="mem0 cannot find it any more; import the text again through mem0 if it should stay"))


def is_mem0_chroma(chroma_dir: Path) -> bool:
    """A Chroma directory whose records carry mem0's data + hash metadata."""
    if CHROMA_FILE not in names(chroma_dir):
        return False
    db = Path(chroma_dir) / CHROMA_FILE
    # A probe of the rows (not a state of the schema): a remembered detection holds while the file does.
    return is_sqlite_file(db) and bool(looked("mem0 metadata", db, lambda: _has_mem0_metadata(db)))


def _has_mem0_metadata(db: Path) -> bool:
    try:
        rows = read_only_rows(
            db,
            "SELECT count(DISTINCT key) FROM embedding_metadata WHERE key IN ('data', 'hash') "
            # string_value IS NOT NULL lets Chroma's (key, string_value) index find one: without it
            # the subquery scans every metadata row (0.5 s at 100k records, on every open).
            "AND id IN (SELECT id FROM embedding_metadata WHERE key = 'hash' AND string_value IS NOT NULL LIMIT 1)",
        )
    except (sqlite3.Error, UnicodeDecodeError):  # (a damaged schema's name in SQLite's message: not UTF-8)
        return False
    return bool(rows) and rows[0][0] == 2


def is_history_db(path: Path) -> bool:
    tables = sqlite_tables(path)
    return "history" in tables and HISTORY_COLUMNS <= tables["history"]


def find_layout(path: Path) -> tuple[Path, Path | None] | None:
    """(chroma dir, history.db or None) for a folder, a chroma dir or a history.db."""
    path = as_path(path)
    if is_file(path):
        if path.name == CHROMA_FILE:
            path = path.parent
        elif is_history_db(path):
            chroma = _chroma_beside(path.parent)
            return (chroma, path) if chroma is not None else None
        else:
            return None
    if not is_dir(path):
        return None
    chroma = _chroma_beside(path)
    if chroma is None:
        return None
    for folder in (chroma, chroma.parent, path):
        candidate = folder / HISTORY_FILE
        if is_file(candidate) and is_history_db(candidate):
            return chroma, candidate
    return chroma, None


def _chroma_beside(folder: Path) -> Path | None:
    if is_mem0_chroma(folder):
        return folder
    return next((child for child in subfolders(folder) if is_mem0_chroma(child)), None)


def scope_channel(meta: dict[str, Any]) -> str:
    """mem0's scope as a channel: "user:dana", "user:dana/agent:helper", ..."""
    parts = [f"{k.split('_')[0]}:{meta[k]}" for k in SCOPE_KEYS if meta.get(k)]
    return "/".join(parts) or GLOBAL_CHANNEL


def mem0_metadata(meta: dict[str, Any], drift: str | None) -> dict[str, Any]:
    """A memory's metadata as mem0 means it: custom keys and the scope, not its own bookkeeping."""
    custom = {k: v for k, v in meta.items() if k not in CORE_KEYS and k != STALE_KEY}
    for key in ("actor_id", "role", *SCOPE_KEYS):
        if meta.get(key):
            custom[key] = meta[key]
    if drift:
        custom["mem0_drift"] = drift
    return {**custom, **({STALE_KEY: True} if meta.get(STALE_KEY) else {})}


class Mem0Reading(RecordReading):
    """mem0's records: scope as the channel, its keys as metadata, drift from history.db."""

    def __init__(self, drift_of: Callable[[str], str | None]) -> None:
        self.drift_of = drift_of

    def collections(self, names: list[str]) -> list[str]:
        # mem0's graph memory keeps "<collection>_entities" beside the memories: not memories.
        return [n for n in names if not (n.endswith("_entities") and n[: -len("_entities")] in names)]

    def memory(self, memory: Memory, meta: dict[str, Any], *, full: bool) -> Memory:
        # Filtering and sorting need the scope channel, not drift: no history lookup per record.
        drift = self.drift_of(split_record_id(memory.id)[1]) if full else None
        return replace(
            memory,
            channel=scope_channel(meta),
            source=replace(memory.source, format=Mem0Source.format),
            metadata=mem0_metadata(meta, drift),
        )


class Mem0History:
    """mem0's ``history.db`` beside a vector store (None: not found): the ADD / UPDATE / DELETE
    log of every memory, and the messages of each session scope. ``where`` names the vector
    store in what it reports ("Chroma", "Qdrant")."""

    def __init__(self, path: Path | None, where: str) -> None:
        self.path = path
        self.where = where

    def history(self, key: str) -> list[dict[str, Any]]:
        if self.path is None:
            return []
        with reading(self.path) as con:
            rows = con.execute(
                "SELECT * FROM history WHERE memory_id = ? ORDER BY created_at, DATETIME(updated_at)", (key,)
            ).fetchall()
        return [{k: row[k] for k in row.keys()} for row in rows]

    def _latest(self) -> dict[str, sqlite3.Row]:
        if self.path is None:
            return {}
        with reading(self.path) as con:
            rows = con.execute(
                "SELECT memory_id, event, new_memory, is_deleted FROM history "
                "ORDER BY DATETIME(updated_at), rowid"
            ).fetchall()
        return {row["memory_id"]: row for row in rows}

    def drift(self, records: Iterable[tuple[str, dict[str, Any]]]) -> tuple[dict[str, str], list[str]]:
        """Per-record drift between the vector store's (key, metadata) records and history.db,
        and the summary lines."""
        per_record: dict[str, str] = {}
        if self.path is None:
            return per_record, [
                f"no history.db beside the {self.where} directory (mem0 keeps it in ~/.mem0 by default): "
                "history and drift are not shown, and edits are not logged for mem0"
            ]
        latest = self._latest()
        stored: set[str] = set()
        for key, meta in records:
            stored.add(key)
            row = latest.get(key)
            if row is None:
                per_record[key] = f"in {self.where} but not in history.db"
            elif row["event"] == "DELETE" or row["is_deleted"]:
                per_record[key] = f"history.db says deleted, but the record is still in {self.where}"
            elif (row["new_memory"] or "") != str(meta.get("data", "")):
                per_record[key] = "text differs from the last history.db entry"
        lines: list[str] = []
        gone = [m for m, row in latest.items() if m not in stored and row["event"] != "DELETE" and not row["is_deleted"]]
        if gone:
            lines.append(f"{len(gone)} memories are live in history.db but missing from {self.where}: {', '.join(gone[:5])}")
        by_kind: dict[str, int] = {}
        for why in per_record.values():
            by_kind[why] = by_kind.get(why, 0) + 1
        lines += [f"{n} memories: {why}" for why, n in sorted(by_kind.items())]
        return per_record, lines

    def _has_messages(self) -> bool:
        return self.path is not None and "messages" in sqlite_tables(self.path)

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        if self.path is None or not self._has_messages():
            return []
        with reading(self.path) as con:
            rows = con.execute(
                "SELECT session_scope, count(*) AS n, min(created_at) AS first FROM messages GROUP BY session_scope"
            ).fetchall()
        return [
            Session(row["session_scope"], row["session_scope"], f"mem0 messages of {row['session_scope']}",
                    parse_time(row["first"]) or utcnow(), row["n"])
            for row in rows
            if not channels or row["session_scope"] in channels
        ]

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        if self.path is None or not self._has_messages():
            return []
        with reading(self.path) as con:
            rows = con.execute(
                "SELECT role, content, created_at FROM messages WHERE session_scope = ? "
                "ORDER BY created_at, rowid LIMIT ? OFFSET ?",
                (session_id, limit, offset),
            ).fetchall()
        return [
            Turn(session_id, offset + i, row["role"] or "", row["content"] or "", parse_time(row["created_at"]) or utcnow())
            for i, row in enumerate(rows)
        ]

    def turn_bin_counts(self, bin_format: str, since: Any, until: Any) -> dict[str, int]:
        counts: dict[str, int] = {}
        for session in self.sessions():
            for turn in self.turns(session.id, limit=10**6):
                if (since and turn.timestamp < since) or (until and turn.timestamp >= until):
                    continue
                label = turn.timestamp.strftime(bin_format)
                counts[label] = counts.get(label, 0) + 1
        return counts

    def forget(self, keys: Sequence[str]) -> list[str]:
        """After a purge: the text of every history row of these memories replaced by PURGED. The
        rows stay (that the memory was added, updated and deleted, and when: the purge's own DELETE
        row among them); the values they held are zeroed in the file (secure_delete)."""
        if self.path is None or not keys:
            return []
        try:
            with writing(self.path) as con:
                con.executemany(
                    "UPDATE history SET old_memory = CASE WHEN old_memory IS NULL THEN NULL ELSE ? END, "
                    "new_memory = CASE WHEN new_memory IS NULL THEN NULL ELSE ? END WHERE memory_id = ?",
                    [(PURGED, PURGED, key) for key in keys],
                )
        except sqlite3.Error as exc:
            raise sqlite_error(self.path, exc) from None
        return []

    def log(self, key: str, expected: Snapshot | None, new: Snapshot | None) -> None:
        """The history row mem0 appends for a write (ADD, UPDATE or DELETE); none when the text
        stays (a re-embedding). Raises StoreError."""
        old_text, new_text = _text(expected), _text(new)
        if self.path is None or (old_text == new_text and expected is not None and new is not None):
            return
        event = "ADD" if expected is None else "DELETE" if new is None else "UPDATE"
        meta = (new or expected or {}).get("metadata", {})
        now = to_iso(utcnow())
        try:
            with writing(self.path) as con:
                con.execute(
                    "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, "
                    "updated_at, is_deleted, actor_id, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        str(uuid.uuid4()), key,
                        old_text if expected is not None else None,
                        new_text if new is not None else None,
                        event, meta.get("created_at", now), now,
                        1 if event == "DELETE" else 0, meta.get("actor_id"), meta.get("role"),
                    ),
                )
        except sqlite3.Error as exc:
            raise sqlite_error(self.path, exc) from None


class Mem0Conversations:
    """The sessions and turns of a mem0 store, from its history.db (self.log)."""

    log: Mem0History

    def sessions(self, channels: Sequence[str] = ()) -> list[Session]:
        return self.log.sessions(channels)

    def turns(self, session_id: str, limit: int = 1000, offset: int = 0) -> list[Turn]:
        return self.log.turns(session_id, limit, offset)

    def turn_bin_counts(self, bin_format: str, since: Any, until: Any) -> dict[str, int]:
        return self.log.turn_bin_counts(bin_format, since, until)


class Mem0Source(Mem0Conversations):
    """A mem0 store: the Chroma directory it holds (read through mem0's reading) and history.db."""

    kind = Kind.CHROMA
    format = "mem0"
    label = "mem0"

    def __init__(self, vectors: ChromaSource, history: Path | None) -> None:
        self.vectors = vectors
        self.root = vectors.root
        self.read_only_reason = vectors.read_only_reason
        self.history_path = history
        self.log = Mem0History(history, "Chroma")
        self._drift: tuple[str, dict[str, str], list[str]] | None = None

    @classmethod
    def open_layout(cls, chroma_dir: Path, history: Path | None) -> Mem0Source:
        holder: list[Mem0Source] = []
        vectors = ChromaSource.open(chroma_dir, reading=Mem0Reading(lambda key: holder[0]._drift_of(key)), strict=True)
        holder.append(cls(vectors, history))
        return holder[0]

    def close(self) -> None:
        self.vectors.close()

    def capabilities(self, record_id: str | None = None) -> Capabilities:
        return mem0_capabilities(self.read_only_reason, self.history_path)

    def change_token(self) -> str:
        token = self.vectors.change_token()
        if self.history_path is not None:
            token += "|" + files_token(self.history_path)
        return token

    # -- reading: the Chroma records, as mem0 means them -----------------------------------

    def count(self, query: MemoryQuery) -> int:
        return self.vectors.count(query)

    def page(self, query: MemoryQuery, limit: int, offset: int = 0) -> list[Memory]:
        return self.vectors.page(query, limit, offset)

    def get(self, memory_id: str) -> Memory | None:
        return self.vectors.get(memory_id)

    def counts_by(self, column: str, query: MemoryQuery = MemoryQuery(statuses=())) -> dict[str, int]:
        return self.vectors.counts_by(column, query)

    def bin_counts(self, query: MemoryQuery, bin_format: str, group_by: str) -> dict[tuple[str, str], int]:
        return self.vectors.bin_counts(query, bin_format, group_by)

    def keyword_search(self, text: str, query: MemoryQuery, k: int) -> list[Memory]:
        return self.vectors.keyword_search(text, query, k)

    def owns(self, record_id: str) -> bool:
        return self.vectors.owns(record_id)

    def read_record(self, record_id: str) -> Snapshot | None:
        return self.vectors.read_record(record_id)

    def stale_ids(self) -> list[str]:
        return self.vectors.stale_ids()

    def consistency_checks(self) -> list[Finding]:
        """history.db against the Chroma records, one finding per memory (consistency.check)."""
        if self.history_path is None:
            return []
        records = [(name, key, meta) for name in self.vectors.collections() for key, meta in self.vectors.metadata_index(name)]
        drift, _ = self.log.drift((key, meta) for _, key, meta in records)
        found = [Finding(MEM0_DRIFT.id, f"vec:{name}:{key}", drift[key], source=self.format)
                 for name, key, _ in records if key in drift]
        stored = {key for _, key, _ in records}
        for key, row in self.log._latest().items():
            if key not in stored and row["event"] != "DELETE" and not row["is_deleted"]:
                found.append(Finding(MEM0_MISSING.id, key, "live in history.db, no record in Chroma", source=self.format))
        return found

    # -- vectors (for search) ------------------------------------------------------------------

    def collections(self) -> list[str]:
        return self.vectors.collections()

    def embedder_for(self, name: str) -> Any:
        return self.vectors.embedder_for(name)

    def embedding_function_info(self, name: str) -> dict[str, Any]:
        return self.vectors.embedding_function_info(name)

    def vector_search(self, embedding: Any, text: str | None, query: MemoryQuery, k: int) -> list[tuple[Memory, float]]:
        return self.vectors.vector_search(embedding, text, query, k)

    def embedding_of(self, memory_id: str) -> list[float] | None:
        return self.vectors.embedding_of(memory_id)

    def vector_collections(self) -> list[VectorCollection]:
        """Its Chroma collections' vectors, a batch at a time (the embedding map)."""
        return self.vectors.vector_collections()

    # -- history.db --------------------------------------------------------------------

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return self.log.history(split_record_id(memory_id)[1])

    def _drift_state(self) -> tuple[dict[str, str], list[str]]:
        """Per-record drift between Chroma and history.db, and the summary lines."""
        token = self.change_token()
        if self._drift is not None and self._drift[0] == token:
            return self._drift[1], self._drift[2]
        records = (entry for name in self.collections() for entry in self.vectors.metadata_index(name))
        per_record, lines = self.log.drift(records)
        self._drift = (token, per_record, lines)
        return per_record, lines

    def _drift_of(self, record_id: str) -> str | None:
        return self._drift_state()[0].get(record_id)

    def problems(self) -> list[str]:
        return self._drift_state()[1]

    def describe(self) -> dict[str, Any]:
        return mem0_description(self, [self.root])

    def scratch_entries(self, session_id: str | None = None) -> list[Any]:
        return []

    def upcoming(self, now: datetime, until: datetime) -> list[Upcoming]:
        """The memories whose expiration_date runs out before until."""
        found = (
            expiration(f"vec:{name}:{key}", meta, self.label, preview_of(str(meta.get("data", ""))))
            for name in self.collections() for key, meta in self.vectors.metadata_index(name)
        )
        return [u for u in found if u is not None and u.when <= until]

    # -- the write primitive, as mem0 itself writes ----------------------------------------

    def plan(self, operation: str, memory: Memory, fields: dict[str, Any], context: PlanContext) -> Plan:
        if operation in (DELETE, PURGE):
            return Plan(
                [Change(memory.id, self.read_record(memory.id), None)],
                notes=[removal_note(operation, self.label, "record")],
            )
        return self.vectors.plan(operation, memory, fields, context)

    def forget_purged(self, removed: Sequence[Change]) -> list[str]:
        """After a purge: history.db's rows of the memories keep no text, and neither does Chroma."""
        keys = [split_record_id(c.record)[1] for c in removed if c.after is None]
        return self.log.forget(keys) + self.vectors.forget_purged(removed)

    def prepare_write(self, changes: Sequence[Change]) -> None:
        self.vectors.prepare_write(changes)

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        if new is not None:
            new = as_mem0_writes_it(expected, new)
        actual = self.vectors.write_record(record_id, expected, new)
        try:
            self.log.log(split_record_id(record_id)[1], expected, new)
        except StoreError:
            self.vectors.write_record(record_id, actual, expected)  # put Chroma back: both or neither
            raise
        self._drift = None
        return actual


def expiration(record_id: str, meta: dict[str, Any], owner: str, preview: str) -> Upcoming | None:
    """mem0's expiration_date (YYYY-MM-DD): from the day after it (UTC), search and get_all leave the
    memory out unless asked with show_expired (_payload_is_expired); get still returns it."""
    raw = meta.get("expiration_date")
    try:
        day = date.fromisoformat(str(raw)) if raw else None
    except ValueError:
        return None
    if day is None:
        return None
    when = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(days=1)
    rule = (f"mem0 expiration_date {day.isoformat()}: left out of search and get_all from the next day (UTC) "
            "unless show_expired; kept on disk")
    return Upcoming(record_id, EXPIRE, when, rule, owner, preview)


def mem0_capabilities(read_only_reason: str, history: Path | None) -> Capabilities:
    """What mem0's own API can do, and so what Mnemoscope does: edit the text, delete (no soft
    delete, no channels to promote between, no access count)."""
    writable = not read_only_reason
    return Capabilities(
        read_only=not writable,
        read_only_reason=read_only_reason,
        editable_fields=("content",) if writable else (),
        can_promote=False,
        can_soft_delete=False,
        keyword_search=True,
        vector_search=True,
        sessions=bool(history),
        scratchpad=bool(history),
        history=True,
        reembed=writable,
    )


def mem0_description(source: Any, stores: list[Path]) -> dict[str, Any]:
    history = source.log.path
    return {
        "format": source.format,
        "label": source.label,
        "files": [str(p) for p in stores] + ([str(history)] if history else []),
        "read_only": bool(source.read_only_reason),
        "read_only_reason": source.read_only_reason,
        "editable_fields": list(source.capabilities().editable_fields),
        "problems": source.problems(),
    }


def as_mem0_writes_it(expected: Snapshot | None, new: Snapshot) -> Snapshot:
    """A record as mem0's _update_memory leaves it: the text in ``data``, its md5 in ``hash``."""
    new = copy.deepcopy(new)
    meta = new["metadata"]
    if new.get("document") is not None and expected is not None and expected.get("document") is None:
        meta["data"], new["document"] = new["document"], None
    text = str(meta.get("data", ""))
    if text != _text(expected) or "hash" not in meta:
        meta["hash"] = hashlib.md5(text.encode()).hexdigest()
        # mem0 stores its spaCy lemmas here, and the text itself when spaCy is absent.
        meta["text_lemmatized"] = text
    return new


def _text(snap: Snapshot | None) -> str | None:
    if snap is None:
        return None
    return str(snap.get("metadata", {}).get("data", snap.get("document") or ""))


def detect(path: Path) -> list[FormatMatch]:
    layout = find_layout(path)
    if layout is None:
        return []
    chroma, history = layout
    return [
        FormatMatch(
            "mem0", "mem0", chroma,
            open=lambda: Mem0Source.open_layout(chroma, history),
            claims=((Kind.CHROMA, chroma),),
        )
    ]
