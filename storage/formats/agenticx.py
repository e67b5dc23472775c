"""AgenticX: its session store, its workspace memory index and its workspace.

Read from agenticx 0.6.5 (agenticx/memory/session_store.py, workspace_memory.py).
``~/.agenticx/memory/sessions.sqlite`` (``SessionStore``) holds per session a
scratchpad (``scratchpad``: one row per key, values JSON behind the
``"\\x1eagx-json-v1:"`` prefix, older rows plain strings), ``todos`` (a JSON list),
``session_summaries`` (append-only, the newest eight per session kept) and
``session_messages`` (a search copy of each session's messages.json, with an
FTS5 index kept by triggers). ``~/.agenticx/memory/main.sqlite``
(``WorkspaceMemoryStore``) indexes the workspace markdown (``files``, ``chunks``,
contentless FTS5 ``chunks_fts``) and archives conversation turns (``turns`` +
contentless ``turns_fts``). The workspace itself is ``~/.agenticx/workspace``:
MEMORY.md, IDENTITY.md, USER.md, SOUL.md and memory/*.md, read as workspace
markdown.

Session summaries are episodic memories, editable and deletable: a plain table
AgenticX reads as is, except that it lists sessions by their summaries, so the
last summary of a session is not deleted. The index is read-only: its FTS5 tables are contentless, so
a changed or removed row cannot be taken out of them, and AgenticX rebuilds the
chunks from the markdown anyway (edit the workspace files instead). What the
index holds that no longer matches the workspace is reported as problems, and
chunks of files that are gone are shown so their text is not lost.

Read from agenticx 0.6.5 as well: ``~/.agenticx/sessions/<id>/messages.json`` is each
session's full chat history (studio/storage/local_file.py), so a session's turns are
read from it, and session_messages only stands in for a session whose file is gone;
``agent_messages.json`` beside it is the model's context, whose first message is a
``[compacted]`` system message once ContextCompactor has summarised the older turns
(runtime/compactor.py): shown as a turn of kind "compaction". MemoryHook
(runtime/hooks/memory_hook.py) appends ``## Session Facts (<date>)`` blocks of at
most eight facts to ``memory/<date>.md`` and ``## Auto-extracted (<date>)`` sections of
at most four to MEMORY.md; those bullets carry ``origin: auto-extracted`` and the tag
``auto-extracted``, every other one ``origin: manual``. How far each session is from
compaction and each file from MemoryHook's cap is agenticx_budget.py's; shown by ``info``,
``sessions`` and the window's transcript. The workspace is the one the
home's config.yaml names (``memory.path``, seed 000; ``workspace_dir``, agenticx
0.6.5), else ``AGX_WORKSPACE_ROOT``, else ``<home>/workspace``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

from .. import bounded_json
from ..detect.looks import is_dir, is_file, looked, names
from ..errors import NotFoundError, UnsupportedError
from ..model import GLOBAL_CHANNEL, Layer, Memory, ScratchEntry, Session, Status, Turn
from ..native.markdown.file_blocks import FileBlocks
from ..native.markdown.files import daily_date, inside
from ..native.markdown.source import MarkdownSource
from ..source import Snapshot
from ..timeutil import parse_time, utcnow
from .agenticx_budget import (
    COMPACTED_MARKER,
    COMPACTION_RULE,
    DAILY_COMPACT_ABOVE,
    DAILY_LOG_CAP,
    MEMORY_MD_CAP,
    FileCap,
    compaction_distance,
    file_cap,
)
from .base import (
    INDEX_FTS_DANGLING,
    Contents,
    FormatSource,
    IndexDrift,
    drift_findings,
    index_drift,
    json_object,
    make_memory,
    plain_row,
    reading,
    sqlite_files,
    sqlite_tables,
)
from .match import FormatMatch

SCRATCHPAD_JSON_PREFIX = "\x1eagx-json-v1:"
SESSIONS_DIR = "sessions"
MESSAGES_FILE = "messages.json"
AGENT_MESSAGES_FILE = "agent_messages.json"
COMPACTION = "compaction"
WORKSPACE_ENV = "AGX_WORKSPACE_ROOT"
CONFIG_FILE = "config.yaml"
# MemoryHook's limits (seed 000; agenticx/runtime/hooks/memory_hook.py).
MAX_FACTS_PER_SESSION = 8
MAX_AUTO_EXTRACTED_FACTS = 4
DEDUP_KEY_CHARS = 80
AUTO_HEADING = re.compile(r"^(Auto-extracted|Session Facts)\b\s*(?:\((\d{4}-\d{2}-\d{2})\))?")
AUTO_EXTRACTED = "auto-extracted"
MANUAL = "manual"
SESSION_TABLES = {
    "scratchpad": {"session_id", "key", "value", "updated_at"},
    "session_summaries": {"id", "session_id", "summary", "created_at"},
}
INDEX_TABLES = {
    "files": {"path", "hash", "mtime", "size"},
    # created_at, not OpenClaw's hash/updated_at: the two indexes look alike otherwise.
    "chunks": {"id", "path", "text", "start_line", "end_line", "created_at"},
}


def decode_scratchpad_value(raw: str) -> Any:
    """What AgenticX's ``_decode_scratchpad_value`` returns: typed JSON behind the
    prefix, legacy rows as the plain string they are."""
    if not raw.startswith(SCRATCHPAD_JSON_PREFIX):
        return raw
    try:
        return bounded_json.loads(raw[len(SCRATCHPAD_JSON_PREFIX):])
    except json.JSONDecodeError:
        return raw


def encode_scratchpad_value(value: Any) -> str:
    """What AgenticX's ``_encode_scratchpad_value`` writes: every value typed JSON behind the prefix."""
    return SCRATCHPAD_JSON_PREFIX + json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def message_text(message: dict[str, Any]) -> str:
    """A messages.json message's text as AgenticX's ``_message_content_text`` makes it for its
    search copy: text parts of a content list joined by lines, other parts as JSON."""
    raw = message.get("content")
    if raw is None:
        return ""
    if isinstance(raw, list):
        return "\n".join(map(_part_text, raw))
    return str(raw)


def _part_text(part: Any) -> str:
    if isinstance(part, dict):
        text = part.get("text")
        if part.get("type") in ("text", "input_text") and isinstance(text, str):
            return text
        return json.dumps(part, ensure_ascii=False)
    return str(part)


def is_compaction(role: str, content: str) -> bool:
    """ContextCompactor's summary: a system message holding the ``[compacted]`` marker (its own
    ``_has_compacted_prefix`` test), or any message with the marker opening a line."""
    if role == "system" and COMPACTED_MARKER in content:
        return True
    return any(line.startswith(COMPACTED_MARKER) for line in content.splitlines())


def _message_rows(path: Path) -> list[dict[str, Any]] | None:
    """The messages of a messages.json file (a list, or the legacy {"messages": [...]}); None when
    it cannot be read as one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nesting too deep
        return None
    if isinstance(data, dict):
        data = data.get("messages") or data.get("chat_history")
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else None


class AgenticxSessionSource(FormatSource):
    format = "agenticx"
    label = "AgenticX session store"
    editable_fields = ("content",)

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.tables = tables
        self.id_prefix = f"agx:{path.name}:"
        self.scratch_prefix = f"agx-scratchpad:{path.name}:"
        # ~/.agenticx/memory/sessions.sqlite: the sessions' folders are ~/.agenticx/sessions/<id>/.
        home = path.parent.parent if path.parent.name == "memory" else path.parent
        self.home = home
        self.sessions_dir = home / SESSIONS_DIR
        self._todo_sessions: set[str] = set()
        # Per session: the model's context as ContextCompactor counts it, and where it was read.
        self._contexts: dict[str, tuple[list[dict[str, Any]], str]] = {}

    def watched(self) -> list[Path]:
        # A session folder added or removed changes the folder; a history rewritten, its files.
        folders = [self.sessions_dir, *self._session_dirs()]
        return self.files + folders + [d / name for d in folders[1:] for name in (MESSAGES_FILE, AGENT_MESSAGES_FILE)]

    def _session_dirs(self) -> list[Path]:
        """The session folders (a link is not followed: it may lead out of the home)."""
        if not self.sessions_dir.is_dir() or inside(self.home, SESSIONS_DIR) is None:
            return []
        try:
            with os.scandir(self.sessions_dir) as entries:
                names = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
        except OSError:  # gone or unreadable since it was looked at: no session folders to read
            return []
        return [self.sessions_dir / name for name in names]

    def load(self) -> Contents:
        contents = Contents()
        with reading(self.path) as con:
            summaries = con.execute("SELECT * FROM session_summaries ORDER BY session_id, created_at").fetchall()
            scratch = con.execute("SELECT * FROM scratchpad ORDER BY session_id, key").fetchall()
            todos = con.execute("SELECT * FROM todos").fetchall() if "todos" in self.tables else []
            messages = (
                con.execute("SELECT * FROM session_messages ORDER BY session_id, id").fetchall()
                if "session_messages" in self.tables else []
            )
        for row in summaries:
            meta = json_object(row["metadata"]) if "metadata" in row.keys() else {}
            contents.memories.append(
                make_memory(
                    self, row["id"], row["summary"], location=f"{self.path.name}:session_summaries/{row['id']}",
                    path=self.path.name, created=parse_time(row["created_at"]) or utcnow(),
                    layer=Layer.EPISODIC, channel=row["session_id"],
                    metadata={"session_id": row["session_id"], **{f"summary.{k}": v for k, v in meta.items()}},
                    snapshot=plain_row(row),
                )
            )
        for row in scratch:
            contents.scratch.append(self.scratch_entry(plain_row(row)))
        self._todo_sessions = {row["session_id"] for row in todos}
        for row in todos:
            at = parse_time(row["updated_at"]) or utcnow()
            contents.scratch.append(ScratchEntry(row["session_id"], "todos", str(row["data"]), at))
        copies: dict[str, list[Turn]] = {}
        for row in messages:
            turns = copies.setdefault(row["session_id"], [])
            at = parse_time(row["timestamp"]) or parse_time(row["indexed_at"]) or utcnow()
            kind = COMPACTION if is_compaction(row["role"], row["content"]) else "message"
            turns.append(Turn(row["session_id"], len(turns), row["role"], row["content"], at, kind))
        contents.turns = copies
        self._contexts = {
            sid: ([{"role": t.role, "content": t.content} for t in turns], f"{self.path.name} session_messages (search copy)")
            for sid, turns in copies.items()
        }
        for folder in self._session_dirs():
            self._read_history(folder, copies.get(folder.name, []), contents)
        starts: dict[str, datetime] = {}
        for session_id, at in (
            [(m.channel, m.created_at) for m in contents.memories]
            + [(e.session_id, e.updated_at) for e in contents.scratch if e.updated_at is not None]
            + [(sid, t.timestamp) for sid, ts in contents.turns.items() for t in ts]
        ):
            starts[session_id] = min(starts.get(session_id, at), at)
        for session_id in sorted(starts):
            turns = contents.turns.get(session_id, [])
            context = self._contexts.get(session_id)
            distance = compaction_distance(context[0], context[1], message_text) if context is not None else None
            contents.sessions.append(
                Session(session_id, session_id, f"session {session_id}", starts[session_id], len(turns), compaction=distance)
            )
        return contents

    def describe(self) -> dict[str, Any]:
        measured = [s for s in self.contents().sessions if s.compaction is not None]
        return {
            **super().describe(),
            "compaction": {s.id: s.compaction.to_dict() for s in measured if s.compaction is not None},
            "owner_view": [f"{COMPACTION_RULE}:"] + [
                f"  session {s.id}: {s.compaction.describe()}" for s in measured if s.compaction is not None
            ],
        }

    def _read_history(self, folder: Path, copy: list[Turn], contents: Contents) -> None:
        """A session's turns from its messages.json, with the compaction summary of its
        agent_messages.json placed before the turns it kept verbatim."""
        session_id = folder.name
        file = inside(self.home, f"{SESSIONS_DIR}/{session_id}/{MESSAGES_FILE}")
        if file is None or not file.is_file():
            return
        rows = _message_rows(file)
        if rows is None:
            contents.problems.append(
                f"{SESSIONS_DIR}/{session_id}/{MESSAGES_FILE} is not a list of messages; "
                + (f"its search copy in {self.path.name} is shown instead" if copy else "no turns are shown")
            )
            return
        context = inside(self.home, f"{SESSIONS_DIR}/{session_id}/{AGENT_MESSAGES_FILE}")
        context_rows = _message_rows(context) if context is not None and context.is_file() else None
        self._contexts[session_id] = (
            (context_rows, f"{SESSIONS_DIR}/{session_id}/{AGENT_MESSAGES_FILE}") if context_rows is not None
            else (rows, f"{SESSIONS_DIR}/{session_id}/{MESSAGES_FILE} (no readable {AGENT_MESSAGES_FILE})")
        )
        fallback = parse_time(_mtime(file)) or utcnow()
        turns: list[Turn] = []
        for message in rows:
            role = str(message.get("role") or "unknown")
            text = message_text(message)
            at = parse_time(message.get("timestamp") or message.get("created_at") or message.get("ts"))
            at = at or (turns[-1].timestamp if turns else fallback)
            turns.append(Turn(session_id, 0, role, text, at, COMPACTION if is_compaction(role, text) else "message"))
        if not any(t.kind == COMPACTION for t in turns):
            turns = _with_compaction(session_id, turns, inside(self.home, f"{SESSIONS_DIR}/{session_id}/{AGENT_MESSAGES_FILE}"))
        contents.turns[session_id] = [
            Turn(session_id, i, t.role, t.content, t.timestamp, t.kind) for i, t in enumerate(turns)
        ]
        if copy and len(copy) != len(rows):
            contents.problems.append(
                f"session {session_id}: {MESSAGES_FILE} holds {len(rows)} message(s), its search copy in "
                f"{self.path.name} {len(copy)} (AgenticX indexes a session again when it saves it); "
                f"the turns shown are {MESSAGES_FILE}'s"
            )

    def read_record(self, record_id: str) -> Snapshot | None:
        scratch = self._scratch_key(record_id)
        with reading(self.path) as con:
            if scratch is not None:
                row = con.execute("SELECT * FROM scratchpad WHERE session_id = ? AND key = ?", scratch).fetchone()
            else:
                row = con.execute("SELECT * FROM session_summaries WHERE id = ?", (self._row_id(record_id),)).fetchone()
        return plain_row(row) if row is not None else None

    def _row_id(self, record_id: str) -> str:
        return record_id[len(self.id_prefix):]

    def owns(self, record_id: str) -> bool:
        return record_id.startswith((self.id_prefix, self.scratch_prefix))

    def edit_snapshot(self, snap: Snapshot, requested: dict[str, Any], now: str) -> Snapshot:
        return {**snap, "summary": requested["content"]}

    def write_record(self, record_id: str, expected: Snapshot | None, new: Snapshot | None) -> Snapshot | None:
        scratch = self._scratch_key(record_id)
        if scratch is not None:
            session_id, key = scratch
            return self.write_row(
                self.path, "scratchpad", {"session_id": session_id, "key": key}, record_id, expected, new,
                updates=("value", "updated_at"),
            )
        return self.write_row(
            self.path, "session_summaries", {"id": self._row_id(record_id)}, record_id, expected, new,
            updates=("summary",), before=self._refuse_last_summary,
        )

    # -- the scratchpad, written as SessionStore writes it -----------------------------------

    def scratch_record(self, session_id: str, key: str) -> str:
        """The record id of one scratchpad key (a row of ``scratchpad``), for the write primitive."""
        self.contents()  # which sessions keep todos
        if key == "todos" and session_id in self._todo_sessions:
            raise UnsupportedError(
                f"todos of session {session_id} is AgenticX's todo list (its own table), not a scratchpad key; "
                "it is not edited here."
            )
        return self.scratch_prefix + json.dumps([session_id, key], ensure_ascii=False)

    def is_scratch_record(self, record_id: str) -> bool:
        return record_id.startswith(self.scratch_prefix)

    def _scratch_key(self, record_id: str) -> tuple[str, str] | None:
        if not record_id.startswith(self.scratch_prefix):
            return None
        try:
            session_id, key = json.loads(record_id[len(self.scratch_prefix):])
        except (ValueError, TypeError):
            raise NotFoundError(f"{record_id} names no scratchpad key.") from None
        return str(session_id), str(key)

    def scratch_snapshot(self, current: Snapshot | None, session_id: str, key: str, value: Any, now: str) -> Snapshot:
        """The row SessionStore._save_scratchpad_sync writes for value (current itself when
        AgenticX would read the same value back from it)."""
        if current is not None and _same_json(decode_scratchpad_value(str(current["value"])), value):
            return current
        try:
            encoded = encode_scratchpad_value(value)
        except (TypeError, ValueError):
            raise UnsupportedError(f"The value of {key} is not JSON; AgenticX keeps JSON values only.") from None
        return {"session_id": session_id, "key": key, "value": encoded, "updated_at": now}

    def scratch_entry(self, snapshot: Snapshot) -> ScratchEntry:
        value = decode_scratchpad_value(str(snapshot["value"]))
        at = parse_time(snapshot["updated_at"]) or utcnow()
        return ScratchEntry(snapshot["session_id"], snapshot["key"], _shown(value), at)

    scratch_note = (
        "AgenticX saves a session's whole scratchpad from memory while that session runs; "
        "edit it while the session is not open in AgenticX."
    )

    @staticmethod
    def _refuse_last_summary(con: Any, current: Any, new: Snapshot | None) -> None:
        if current is None or new is not None:
            return
        (others,) = con.execute(
            "SELECT count(*) FROM session_summaries WHERE session_id = ? AND id != ?", (current["session_id"], current["id"])
        ).fetchone()
        if not others:
            raise UnsupportedError(
                f"AgenticX lists sessions by their summaries; deleting the last one would hide session "
                f"{current['session_id']} from its history. Edit the summary instead."
            )


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _with_compaction(session_id: str, turns: list[Turn], agent_messages: Path | None) -> list[Turn]:
    """turns with the ``[compacted]`` summary that opens agent_messages.json (the model's
    context) placed before the first turn it kept verbatim (at the end when none is found)."""
    if agent_messages is None or not agent_messages.is_file():
        return turns
    rows = _message_rows(agent_messages)
    if not rows:
        return turns
    role, text = str(rows[0].get("role") or "system"), message_text(rows[0])
    if not is_compaction(role, text):
        return turns
    position = len(turns)
    for kept in rows[1:]:
        wanted = message_text(kept)
        found = next((i for i in range(len(turns) - 1, -1, -1) if wanted and turns[i].content == wanted), None)
        if found is not None:
            position = found
            break
    at = turns[position].timestamp if position < len(turns) else parse_time(_mtime(agent_messages)) or utcnow()
    return [*turns[:position], Turn(session_id, 0, role, text, at, COMPACTION), *turns[position:]]


class AgenticxIndexSource(FormatSource):
    format = "agenticx-index"
    label = "AgenticX workspace memory index"
    keeps = frozenset({"access_count"})
    read_only_reason = (
        "its FTS5 indexes are contentless, so a changed or removed row cannot be taken out of them; "
        "AgenticX rebuilds chunks from the workspace markdown, edit those files instead"
    )

    def __init__(self, path: Path, tables: dict[str, set[str]]) -> None:
        super().__init__(path.parent, [path])
        self.path = path
        self.tables = tables
        self.id_prefix = f"agx-index:{path.name}:"
        self._indexed: list[Path] = []

    def watched(self) -> list[Path]:
        # The drift found in the index changes when the indexed markdown does.
        return self.files + self._indexed

    def load(self) -> Contents:
        contents = Contents()
        with reading(self.path) as con:
            files = con.execute("SELECT * FROM files ORDER BY path").fetchall()
            chunks = con.execute("SELECT rowid AS _rowid, * FROM chunks ORDER BY path, start_line").fetchall()
            turns = con.execute("SELECT * FROM turns ORDER BY session_id, turn_index").fetchall() if "turns" in self.tables else []
            dangling_fts = {
                fts: _dangling_fts_rows(con, fts, table)
                for fts, table in (("chunks_fts", "chunks"), ("turns_fts", "turns"))
                if f"{fts}_docsize" in self.tables and table in self.tables
            }
        hashes = {row["path"]: row["hash"] for row in files}
        contents.drift, problems, orphans = index_drift(hashes, chunks, Path, self.path.name)
        self._indexed = [Path(p) for p in sorted(hashes)]
        contents.problems += problems
        for chunk in orphans:
            self._orphan(chunk, contents)
        for fts, count in dangling_fts.items():
            if count:
                dangling = IndexDrift(INDEX_FTS_DANGLING, fts,
                                      f"{fts} has {count} entr{'y' if count == 1 else 'ies'} whose row no longer exists")
                contents.drift.append(dangling)
                contents.problems.append(dangling.detail)
        for row in turns:
            at = parse_time(row["created_at"]) or utcnow()
            contents.memories.append(
                make_memory(
                    self, row["id"], row["text"], location=f"{self.path.name}:turns/{row['id']}", path=self.path.name,
                    created=at, accessed=row["last_accessed"], access_count=row["access_count"] or 0,
                    layer=Layer.EPISODIC, channel=row["avatar_id"] or row["session_id"],
                    metadata={"session_id": row["session_id"], "role": row["role"], "turn_index": row["turn_index"]},
                    snapshot=plain_row(row),
                )
            )
        return contents

    def consistency_checks(self) -> list[Any]:
        return drift_findings(self)

    def _orphan(self, chunk: Any, contents: Contents) -> None:
        at = parse_time(chunk["created_at"]) if "created_at" in chunk.keys() else None
        name = Path(chunk["path"]).name
        contents.memories.append(
            make_memory(
                self, chunk["id"], chunk["text"], location=f"{name}:{chunk['start_line']}-{chunk['end_line']} (file gone)",
                path=self.path.name, created=at or utcnow(), layer=Layer.SEMANTIC, channel=GLOBAL_CHANNEL,
                metadata={"indexed_path": chunk["path"], "dangling": True},
                snapshot={k: v for k, v in plain_row(chunk).items() if k != "embedding"},
                status=Status.DELETED,  # its owner deleted the file: the index's copy is not active
            )
        )


@dataclass
class _LogNotes:
    """What MemoryHook's rules say about one workspace file: the later copies of a daily-log
    fact (line -> the line of its first copy) and the caps the file exceeds."""

    parsed: FileBlocks | None = None
    duplicates: dict[int, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    cap: FileCap | None = None


class AgenticxWorkspace(MarkdownSource):
    """The workspace markdown of an AgenticX home: MarkdownSource's memories and curation, each
    bullet told apart as MemoryHook's (auto-extracted) or a person's (manual), daily-log
    duplicates flagged and MemoryHook's caps reported."""

    format = "agenticx-workspace"
    label = "AgenticX workspace markdown"

    def __init__(self, root: Path, notes: tuple[str, ...] = ()) -> None:
        self._notes: dict[str, _LogNotes] = {}
        self._config_notes = list(notes)
        super().__init__(root)

    def describe(self) -> dict[str, Any]:
        caps = self.caps()
        return {
            **super().describe(), "files": [str(self.root)], "read_only": False, "read_only_reason": "",
            "editable_fields": list(self.capabilities().editable_fields), "deletable": True, "problems": self.problems(),
            "caps": [cap.to_dict() for cap in caps],
            "owner_view": ["MemoryHook's caps:"] + [f"  {cap.describe()}" for cap in caps],
        }

    def caps(self) -> list[FileCap]:
        """MEMORY.md and each daily log against the MemoryHook cap that governs it."""
        return [cap for rel in self.files() if (cap := self._log_notes(rel).cap) is not None]

    def problems(self) -> list[str]:
        return self._config_notes + super().problems() + [p for rel in self.files() for p in self._log_notes(rel).problems]

    def memory(self, block: Any) -> Memory:
        memory = super().memory(block)
        auto = AUTO_HEADING.match(block.heading)
        metadata: dict[str, Any] = {**memory.metadata, "origin": AUTO_EXTRACTED if auto else MANUAL}
        if auto and auto.group(2):
            metadata["extracted_on"] = auto.group(2)
        first = self._log_notes(block.path).duplicates.get(block.line)
        if first is not None:
            metadata["duplicate_of_line"] = first
        tags = (*memory.tags, AUTO_EXTRACTED) if auto else memory.tags
        return memory.with_changes(tags=tags, metadata=metadata)

    def _log_notes(self, rel: str) -> _LogNotes:
        if rel != "MEMORY.md" and daily_date(rel) is None:
            return _LogNotes()
        parsed = self._parsed(rel) if rel not in self._cache else self._cache[rel][1]
        known = self._notes.get(rel)
        if known is not None and known.parsed is parsed:
            return known
        path = inside(self.root, rel)
        try:
            text = path.read_bytes().decode("utf-8").removeprefix("\ufeff") if path is not None else ""
        except (OSError, UnicodeDecodeError):
            text = ""
        notes = _LogNotes(parsed, cap=file_cap(rel, text))
        if rel == "MEMORY.md":
            _memory_md_caps(text, notes)
        else:
            _daily_log_rules(rel, text, notes)
        self._notes[rel] = notes
        return notes


def _sections(text: str) -> list[tuple[str, list[tuple[int, str]]]]:
    """(heading, [(line number, bullet line stripped)]) per heading, as MemoryHook reads lines."""
    sections: list[tuple[str, list[tuple[int, str]]]] = [("", [])]
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#"):
            sections.append((stripped.lstrip("#").strip(), []))
        elif stripped.startswith("- "):
            sections[-1][1].append((number, stripped))
    return sections


def _too_many_facts(rel: str, text: str, notes: _LogNotes, cap: int) -> None:
    for heading, bullets in _sections(text):
        if AUTO_HEADING.match(heading) and len(bullets) > cap:
            notes.problems.append(
                f"{rel}: the section \"{heading}\" (line {bullets[0][0]}) holds {len(bullets)} facts, more than the "
                f"{cap} MemoryHook writes at a time (written by hand or by another tool)"
            )


def _memory_md_caps(text: str, notes: _LogNotes) -> None:
    if len(text) >= MEMORY_MD_CAP:
        notes.problems.append(
            f"MEMORY.md holds {len(text):,} characters: MemoryHook appends Auto-extracted sections only while "
            f"it is under {MEMORY_MD_CAP:,}, so no more facts reach it"
        )
    _too_many_facts("MEMORY.md", text, notes, MAX_AUTO_EXTRACTED_FACTS)


def _daily_log_rules(rel: str, text: str, notes: _LogNotes) -> None:
    """MemoryHook's dedup of a daily log (_maybe_compact_daily: bullets keyed by their first 80
    characters, lower-cased; the first kept) and its caps."""
    if len(text) > DAILY_LOG_CAP:
        notes.problems.append(
            f"{rel} holds {len(text):,} characters, over the {DAILY_LOG_CAP:,} MemoryHook keeps a daily log "
            "under: it appends no more session facts to it"
        )
    _too_many_facts(rel, text, notes, MAX_FACTS_PER_SESSION)
    groups: dict[str, list[tuple[int, str]]] = {}
    for _heading, bullets in _sections(text):
        for number, stripped in bullets:
            groups.setdefault(stripped[:DEDUP_KEY_CHARS].lower(), []).append((number, stripped))
    for copies in groups.values():
        if len(copies) < 2:
            continue
        lines = [number for number, _ in copies]
        notes.duplicates.update({line: lines[0] for line in lines[1:]})
        first = copies[0][1]
        shown = first[2:62] + ("…" if len(first) > 62 else "")
        notes.problems.append(
            f"{rel}: lines {', '.join(map(str, lines))} repeat one fact (\"{shown}\"); MemoryHook keeps only line "
            f"{lines[0]} when it deduplicates the day's log (once it is over {DAILY_COMPACT_ABOVE:,} characters)"
        )


# -- where the workspace is ---------------------------------------------------------------------


def configured_roots(config: Path) -> list[str]:
    """The workspace roots config.yaml names: ``memory.path`` (seed 000), then ``workspace_dir``
    (agenticx 0.6.5's own key). Read line by line: both are plain scalars, and YAML is no
    dependency of Mnemoscope (PyYAML only comes with chromadb)."""
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found: dict[str, str] = {}
    section, child_indent = "", None
    for raw in text.splitlines():
        line = re.sub(r"\s+#.*$", "", raw).rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        key, colon, value = line.strip().partition(":")
        value = value.strip().strip("\"'")
        if not colon:
            continue
        if indent == 0:
            section, child_indent = key, None
            if key == "workspace_dir" and value:
                found.setdefault(key, value)
        elif section == "memory":
            child_indent = indent if child_indent is None else child_indent
            if indent == child_indent and key == "path" and value:
                found.setdefault("memory.path", value)
    return [found[k] for k in ("memory.path", "workspace_dir") if k in found]


def workspace_root(home: Path) -> tuple[Path, tuple[str, ...]]:
    """The workspace of an AgenticX home and what a user should know about how it was found:
    the first of config.yaml's root, ``AGX_WORKSPACE_ROOT`` and ``<home>/workspace`` that holds
    workspace markdown.

    A root outside the folder opened is honoured only for the live home (``~/.agenticx``): a copy
    or a backup of a home whose config names ``~/.agenticx/workspace`` must not edit the live
    workspace, nor may the variable set for this process redirect another home."""
    home = Path(home)
    live = os.path.realpath(home) == os.path.realpath(Path.home() / ".agenticx")
    named: list[tuple[str, Path]] = []
    if is_file(home / CONFIG_FILE):
        config = home / CONFIG_FILE  # consulted by name: a remembered detection sees it edited in place
        for value in looked("agenticx config", config, lambda: configured_roots(config)):
            root = Path(value).expanduser()
            named.append((f"{CONFIG_FILE} names {value}", root if root.is_absolute() else home / root))
    env = os.environ.get(WORKSPACE_ENV, "").strip()
    if env and live:
        named.append((f"{WORKSPACE_ENV} is {env}", Path(env).expanduser()))
    passed: list[str] = []
    for why, root in named:
        if not live and not _inside(root, home):
            passed.append(f"{why} as the workspace root, outside {home} (not the live ~/.agenticx), so it "
                          "is not opened from here")
        elif MarkdownSource.detect(root):
            return root, tuple(passed)
        else:
            passed.append(f"{why} as the workspace root, which holds no workspace markdown")
    default = home / "workspace"
    return default, tuple(f"{p}; {default} is read instead" for p in passed)


def _inside(path: Path, folder: Path) -> bool:
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


def _dangling_fts_rows(con: Any, fts: str, table: str) -> int:
    # A contentless FTS5 table keeps one docsize row per indexed rowid.
    return con.execute(
        f'SELECT count(*) FROM "{fts}_docsize" WHERE id NOT IN (SELECT rowid FROM "{table}")'
    ).fetchone()[0]


def _has(tables: dict[str, set[str]], wanted: dict[str, set[str]]) -> bool:
    return all(cols <= tables.get(name, set()) for name, cols in wanted.items())


def detect(path: Path) -> list[FormatMatch]:
    folders = [path, path / "memory"] if is_dir(path) and "memory" in names(path) else [path]
    matches = []
    for candidate in (f for folder in folders for f in sqlite_files(folder)):
        tables = sqlite_tables(candidate)
        if _has(tables, SESSION_TABLES):
            matches.append(FormatMatch(
                "agenticx", AgenticxSessionSource.label, candidate,
                open=partial(AgenticxSessionSource, candidate, tables),
            ))
        elif _has(tables, INDEX_TABLES) and "chunks_fts" in tables:
            matches.append(FormatMatch(
                "agenticx-index", AgenticxIndexSource.label, candidate,
                open=partial(AgenticxIndexSource, candidate, tables),
            ))
    if matches and is_dir(path):
        # ~/.agenticx: its workspace (<home>/workspace unless configured) is part of the same store.
        workspace, notes = looked("agenticx workspace", path, lambda: workspace_root(path))
        if MarkdownSource.detect(workspace):
            matches.append(FormatMatch(
                "markdown", AgenticxWorkspace.label, workspace,
                open=partial(AgenticxWorkspace, workspace, notes), journal_dir=path,
            ))
    return matches
